//! Model-based property tests of the three heaps: random operation
//! sequences against a reference model of the live blocks.
//!
//! The model is the fuzz target's (`fuzz/harness/src/heap_ops.rs`): one model,
//! two drivers (proptest here, libFuzzer in `fuzz/`). Checked after every
//! step: blocks are aligned, inside the heap and disjoint; live blocks keep
//! their contents; frees of live blocks succeed; double and foreign frees
//! and bad alignments are refused without changing anything; the use
//! counter equals the model's; and after freeing everything one allocation
//! of the whole heap succeeds. Each heap sees at least 10,000 operations
//! per run (the count is checked).

use neuron_fuzz_harness::heap_ops::{run, DATARAM, HBM, LIBC};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};
use std::cell::Cell;

/// Fewer and shorter under Miri, which runs each case thousands of times
/// slower.
const CASES: u32 = if cfg!(miri) { 1 } else { 64 };
const BYTES: std::ops::Range<usize> = if cfg!(miri) { 24..48 } else { 700..1400 };
const MIN_OPS: usize = if cfg!(miri) { 1 } else { 10_000 };

/// Runs CASES random inputs on heap `heap` (half of them with the small
/// block table, bit 7 of the selector) and checks how many operations ran.
fn drive(heap: u8) {
    let mut runner = TestRunner::new(Config { cases: CASES, failure_persistence: None, ..Config::default() });
    let ops = Cell::new(0usize);
    let r = runner.run(&proptest::collection::vec(any::<u8>(), BYTES), |bytes| {
        let mut data = Vec::with_capacity(bytes.len() + 1);
        data.push(selector(heap, bytes[0] & 1 == 1));
        data.extend_from_slice(&bytes);
        ops.set(ops.get() + run(&data));
        Ok(())
    });
    if let Err(e) = r {
        panic!("heap {heap}: {e}");
    }
    assert!(ops.get() >= MIN_OPS, "heap {heap}: only {} operations ran", ops.get());
}

/// The harness's selector byte: `% 3` picks the heap, bit 7 the small
/// block table (128 ≡ 2 mod 3, hence the offset).
fn selector(heap: u8, small_table: bool) -> u8 {
    let b = if small_table { 0x80 + (heap + 1) % 3 } else { heap };
    assert_eq!((b % 3, b & 0x80 != 0), (heap, small_table));
    b
}

#[test]
fn hbm_heap_matches_model() {
    drive(HBM);
}

#[test]
fn dataram_heap_matches_model() {
    drive(DATARAM);
}

#[test]
fn libc_heap_matches_model() {
    drive(LIBC);
}
