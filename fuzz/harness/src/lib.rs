//! The fuzz harnesses, shared by the libFuzzer targets (`fuzz_targets/`)
//! and by the plain `#[test]`s that replay the committed seeds and crash
//! inputs (`tests/fuzz_regressions.rs` in the root package and in
//! `customop`) and drive the heap model with proptest
//! (`runtime/tests/heap_model.rs`). Each harness's `run(data)` panics on
//! a broken property; any input is valid.
//!
//! [`formats`] (the `customop` tool's parsers) is behind the `formats`
//! feature, so that the runtime's tests do not build the tool.

#[cfg(feature = "formats")]
pub mod formats;
pub mod heap_ops;
pub mod input;
pub mod parse_invocation;
pub mod replay;
pub mod translate;
