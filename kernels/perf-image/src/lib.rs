//! The instruction-count image: every measured region is
//! `perf_mark(); <the operation>; perf_mark();` and the TCG plugin
//! `perf/profile.c` (with `marks=`) writes the executed-instruction count
//! at each `perf_mark`. The image prints `perf: region <name>` for every region in
//! the order it runs them, so `cargo xtask perf` pairs the k-th region with
//! marks 2k and 2k+1 and subtracts the `empty` region (the markers' own
//! cost). It also prints `perf: stack <bytes>`: the deepest stack use of a
//! whole launch (`switch_stack_or_call_wrapper` → wrapper → setup, next ×2,
//! return, cleanup), found by painting the stack below the caller.
//!
//! Data lives in hbm_scratch (the only HBM QEMU backs), reached through the
//! pinned window; the dynamic windows are translated to but never
//! dereferenced (QEMU leaves them unmapped).
#![no_std]
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(target_arch = "xtensa")]
mod image;
