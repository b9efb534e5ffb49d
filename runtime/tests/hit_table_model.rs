//! The translator's hit table against the records it caches: random
//! sequences of translates (hits, misses that evict, refusals) and of the
//! device probe's refills over a pool of regions built to collide in the
//! table, checked after every step. The records' own lookup is the model
//! (its behaviour is tested in translate.rs and pure.rs): the table may
//! miss where a record maps, never hit where none does or with another
//! pointer, and never hit SBUF past its end. A fake core (plain memory),
//! so Miri runs it too, with fewer and shorter cases.

use neuron_hal::platform::{DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE, Q7};
use neuron_hal::Hal;
use neuron_hal_mock::FakeHal;
use neuron_runtime::translate::SBUF_RECORD;
use neuron_runtime::{CoreState, Translator};
use proptest::prelude::*;
use proptest::test_runner::{Config, TestRunner};

const G: u64 = DYNAMIC_WINDOW_SIZE;
const CASES: u32 = if cfg!(miri) { 2 } else { 256 };
const STEPS: std::ops::Range<usize> = if cfg!(miri) { 4..8 } else { 1..64 };

/// Granules chosen to meet in the table's slots (index = the low word's
/// top byte + the high word): pairs 4 GiB - 16 MiB apart share a slot,
/// one HBM granule shares hbm_scratch's first slot, and SBUF's second
/// granule is only partly SBUF.
fn pool() -> Vec<u64> {
    let t = Q7.hbm_soc_base + (1 << 30);
    let mut v: Vec<u64> = (0..6).map(|k| t + k * G).collect();
    v.push(t + 5 * G + (1 << 32) - G); // the slot of t + 5G
    v.push(t + (1 << 32) - G); // the slot of t
    v.push(Q7.scratch_soc_base + (1 << 32) - G); // the slot of scratch's first granule
    v.push(Q7.scratch_soc_base + 2 * G);
    v.push(Q7.sbuf_soc_base);
    v.push(Q7.sbuf_soc_base + G); // 8 MiB of SBUF, then past its end
    v.push(Q7.hbm_soc_base + Q7.hbm_size); // past HBM: refused
    v.push(1u64 << 40); // a high word the table does not serve
    v
}

#[derive(Clone, Debug)]
enum Op {
    /// The full translate of pool granule `g` at `off`.
    Translate(usize, u64),
    /// The device probe's refill after a scan hit on that address.
    Refill(usize, u64),
}

fn op() -> impl Strategy<Value = Op> {
    let n = pool().len();
    prop_oneof![(0..n, 0..G).prop_map(|(g, o)| Op::Translate(g, o)), (0..n, 0..G).prop_map(|(g, o)| Op::Refill(g, o)),]
}

fn core() -> Box<CoreState<FakeHal>> {
    let mut s = Box::new(CoreState::new(FakeHal::new(0)));
    s.init_prologue();
    s
}

/// Every probe address: the table answers as the records or not at all.
fn table_agrees(s: &CoreState<FakeHal>) -> Result<(), TestCaseError> {
    let t = &s.translator();
    for g in pool() {
        for a in [g, g + 0x40, g + G / 2, g + G - 1] {
            let Some(p) = t.table_hit(a) else { continue };
            let Some((i, q)) = t.ctx().lookup(a) else {
                return Err(TestCaseError::fail(format!("{a:#x}: the table hits, no record maps it")));
            };
            prop_assert_eq!(p, q, "{:#x}: the table's pointer is not record {}'s", a, i);
            prop_assert!(!Translator::past_sbuf(t.ctx(), s.hal(), i, a), "{:#x}: a table hit past SBUF's end", a);
        }
    }
    Ok(())
}

fn step(s: &mut CoreState<FakeHal>, op: &Op) -> Result<(), TestCaseError> {
    let pool = pool();
    match *op {
        Op::Translate(g, off) => {
            let a = pool[g] + off;
            let missed = s.translator().record_of(a).is_none();
            if let Ok(p) = s.translate(a) {
                if missed {
                    // A miss installs its granule in the table too.
                    prop_assert_eq!(s.translator().table_hit(a), Some(p), "{:#x}: installed, not in the table", a);
                }
            }
        }
        Op::Refill(g, off) => {
            let a = pool[g] + off;
            if let Some((i, q)) = s.translator().ctx().lookup(a) {
                if !Translator::past_sbuf(s.translator().ctx(), s.hal(), i, a) {
                    let platform = *s.hal().platform();
                    // SAFETY: the state is live and no reference to it is
                    // held across the call.
                    unsafe { Translator::refill_in_place(CoreState::translator_of(core::ptr::addr_of_mut!(*s)), &platform, i, a) };
                    let whole = i != SBUF_RECORD || (a | (G - 1)) - Q7.sbuf_soc_base < Q7.sbuf_size;
                    let want = if whole { Some(q) } else { None };
                    prop_assert_eq!(s.translator().table_hit(a), want, "{:#x}: refilled from record {}", a, i);
                }
            }
        }
    }
    table_agrees(s)
}

#[test]
fn the_table_never_disagrees_with_the_records() {
    let mut runner = TestRunner::new(Config { cases: CASES, failure_persistence: None, ..Config::default() });
    let r = runner.run(&proptest::collection::vec(op(), STEPS), |ops| {
        let mut s = core();
        table_agrees(&s)?;
        for op in &ops {
            step(&mut s, op)?;
        }
        Ok(())
    });
    if let Err(e) = r {
        panic!("{e}");
    }
}

#[test]
fn init_serves_every_whole_pinned_granule() {
    let s = core();
    let t = &s.translator();
    for k in 0..PINNED_WINDOW_SIZE / G {
        let a = Q7.scratch_soc_base + k * G + 8;
        // The window's base plus the offset (the fake core backs only part
        // of the window, so the arithmetic, not `nx_ptr` of the address).
        let want = s.hal().nx_ptr(Q7.scratch_window_nx).wrapping_add((k * G) as usize + 8);
        assert_eq!(t.table_hit(a), Some(want), "scratch granule {k}");
    }
    // SBUF is 24 MiB: its first granule whole, its second in part.
    let sbuf = Q7.sbuf_soc_base + 8;
    assert_eq!(t.table_hit(sbuf), Some(s.hal().nx_ptr(Q7.sbuf_window_nx + 8)));
    assert_eq!(t.table_hit(Q7.sbuf_soc_base + G), None, "a granule SBUF fills only in part is left to the scan");
    assert_eq!(t.table_hit(Q7.hbm_soc_base + (1 << 30)), None, "no dynamic record yet");
}

#[test]
fn an_evicted_granule_leaves_the_table() {
    let mut s = core();
    let t0 = Q7.hbm_soc_base + (1 << 30);
    for k in 0..3 {
        s.translate(t0 + k * G).unwrap();
    }
    assert!(s.translator().table_hit(t0).is_some());
    // The fourth region evicts the first (round robin).
    let p = s.translate(t0 + 3 * G + 4).unwrap();
    assert_eq!(s.translator().table_hit(t0), None, "the evicted granule still hits");
    assert_eq!(s.translator().table_hit(t0 + 3 * G + 4), Some(p));
    assert!(s.translator().table_hit(t0 + G).is_some() && s.translator().table_hit(t0 + 2 * G).is_some());
}
