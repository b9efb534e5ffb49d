//! The fuzz harnesses, shared by the libFuzzer targets (`fuzz_targets/`)
//! and by the plain `#[test]`s that replay the committed seeds and crash
//! inputs (`tests/fuzz_regressions.rs` in the root package). Each
//! harness's `run(data)` panics on a broken property; any input is valid.
// Shared by the fuzz targets and the replay tests; each uses only some.
#![allow(dead_code)]

pub mod heap_ops;
pub mod input;
pub mod parse_invocation;
pub mod translate;
