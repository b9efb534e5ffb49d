//! The C API of a simulator on the caller's HBM file (`simulator/staging`):
//! a process that runs ops in a worker process stages tensor arguments in
//! the shared file and reads outputs from it, one copy each way.
//! As `sim_ffi`: 0 or an error code, NULL an error, no panic leaves.

use super::sim_ffi::{code, dtype, shape, sim, NeuronSim};
use super::simulator::{place_span, Simulator};
use crate::abort::no_unwind;
use neuron_runtime::Error;
use std::boxed::Box;
use std::vec::Vec;

/// A new simulator whose HBM is the file `fd` (a memfd the caller maps
/// too; the simulator keeps a duplicate and lengthens it to the HBM's
/// size). The tensor area (from byte `neuron_sim_staging_offset()` of the
/// file) keeps its bytes, here and across `neuron_sim_reset`: the caller
/// writes tensor arguments there (`neuron_sim_arg_tensor_staged`) and
/// reads a passed run's output there (`neuron_sim_output_offset`). Null on
/// failure (a bad descriptor, or no address space).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_sim_new_staged(fd: i32) -> *mut NeuronSim {
    no_unwind(|| {
        if fd < 0 {
            return core::ptr::null_mut();
        }
        Simulator::new_staged(fd).map_or(core::ptr::null_mut(), |s| Box::into_raw(Box::new(NeuronSim(s, std::ffi::CString::default(), Vec::new()))))
    })
}

/// Where a staging simulator's tensor area starts in its HBM file.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_sim_staging_offset() -> u64 {
    Simulator::staging_offset()
}

/// How far apart in the tensor area the simulator places a tensor of
/// `nbytes` and the next argument (its pages, then a guard page); 0 when
/// that passes 64 bits. Arguments go in order from the area's start.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_sim_place_span(nbytes: u64) -> u64 {
    place_span(nbytes).unwrap_or(0)
}

/// Appends a tensor argument whose bytes the caller wrote at byte `offset`
/// of the tensor area, which must be where the next argument is placed
/// (`StagedOutOfPlace`, 119); `NotStaged` (120) on a simulator from
/// `neuron_sim_new`. `hashes`: its `nhashes` page hashes as
/// `neuron_sim_hash_pages` gave them for the bytes written (exactly one
/// per started 4 KiB, else `BufferTooSmall`), or NULL: then they are taken
/// when the run starts. Its bytes are checked after the run as a placed
/// input's are.
///
/// # Safety
/// `s` null or live; `shape_` null or readable for `ndim` values;
/// `hashes` null or readable for `nhashes` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_tensor_staged(
    s: *mut NeuronSim,
    dtype_: u8,
    shape_: *const u64,
    ndim: u32,
    offset: u64,
    hashes: *const u64,
    nhashes: usize,
) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, shape) = unsafe { (sim(s)?, shape(shape_, ndim)?) };
            // SAFETY: non-null, readable for nhashes by the caller's contract.
            let pages = (!hashes.is_null()).then(|| unsafe { core::slice::from_raw_parts(hashes, nhashes) }.to_vec());
            s.arg_tensor_staged(dtype(dtype_)?, shape, offset, pages).map(|_| ())
        })())
    })
}

/// Writes the page hashes of `len` bytes at `data` (one per started 4
/// KiB, the last page short) to `out`, which holds `cap`
/// (`BufferTooSmall` if fewer): what `neuron_sim_arg_tensor_staged` takes.
/// A caller hashes each piece it writes while the piece is in its cache
/// (pieces of whole pages, from the tensor's start).
///
/// # Safety
/// `data` null or readable for `len` bytes; `out` null or writable for
/// `cap` values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_hash_pages(data: *const u8, len: usize, out: *mut u64, cap: usize) -> i32 {
    no_unwind(|| {
        code((|| {
            if data.is_null() || out.is_null() {
                return Err(Error::NullArgument);
            }
            if cap < len.div_ceil(crate::input_pages::PAGE as usize) {
                return Err(Error::BufferTooSmall);
            }
            // SAFETY: non-null (checked), readable for len by the contract.
            let bytes = unsafe { core::slice::from_raw_parts(data, len) };
            let mut v = Vec::with_capacity(cap);
            crate::input_pages::page_hashes(bytes, &mut v);
            // SAFETY: non-null (checked), writable for cap >= v.len().
            unsafe { core::ptr::copy_nonoverlapping(v.as_ptr(), out, v.len()) };
            Ok(())
        })())
    })
}

/// The byte offset in the tensor area of the output the last run
/// produced: only after a run that passed (`NoRunResult`), with an output
/// the simulator placed (`NoOutput`).
///
/// # Safety
/// `s` null or live; `offset` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_output_offset(s: *mut NeuronSim, offset: *mut u64) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let s = unsafe { sim(s)? };
            if offset.is_null() {
                return Err(Error::NullArgument);
            }
            let at = s.output_offset()?;
            // SAFETY: non-null (checked), writable by the caller's contract.
            unsafe { offset.write(at) };
            Ok(())
        })())
    })
}

/// Has `ready(ctx, offset, len)` called during each later run of staging
/// simulator `s` (a reset keeps it; a null `ready` stops it), on the
/// thread that calls `neuron_sim_run`, once the run's kernels have ended
/// and nothing of the run can write its output again: `offset` and `len`
/// are where the output lies in the tensor area. The verdict is still to
/// come: a caller may copy the output out meanwhile, and keeps the copy
/// only if the run passes. `NotStaged` on a simulator not made with
/// `neuron_sim_new_staged`.
///
/// # Safety
/// `s` null or live. Until replaced or the simulator freed, `ready` must
/// be safe to call with `ctx` on any thread that runs `s`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_set_output_ready(
    s: *mut NeuronSim,
    // Spelt out (`simulator::OutputReady`) for the C header's sake.
    ready: Option<unsafe extern "C" fn(ctx: *mut core::ffi::c_void, offset: u64, len: u64)>,
    ctx: *mut core::ffi::c_void,
) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let s = unsafe { sim(s)? };
            // SAFETY: the caller's contract is this one's.
            unsafe { s.set_output_ready(ready, ctx) }
        })())
    })
}

/// Fills `len` bytes at byte `offset` of staging simulator `s`'s tensor
/// area with the sentinel now, for the next run: one whose output is
/// placed exactly there (a call with the same shapes as the last) does not
/// fill it again. The caller must not write those bytes before that run
/// (arguments are placed below the output); a reset undoes it.
/// `NotStaged` on a simulator not made with `neuron_sim_new_staged`;
/// `AddressUnmapped` outside HBM.
///
/// # Safety
/// `s` null or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_prefill_output(s: *mut NeuronSim, offset: u64, len: u64) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            unsafe { sim(s)? }.prefill_output(offset, len)
        })())
    })
}
