//! Read and write stream accessors: the caller owns the 48-byte state
//! (`NeuronStream`); these move one element at a time through the stream's
//! data-RAM buffer (or per element when the pool had none free).

use super::access::view;
use super::status;
use crate::binding::with_core;
use core::ffi::c_void;
use neuron_runtime::access::{StreamMode, StreamState};
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::{Error, Result};

/// The stream state as C sees it.
pub type NeuronStream = StreamState;

fn state<'a>(s: *mut NeuronStream) -> Result<&'a mut NeuronStream> {
    // SAFETY: a non-null stream pointer from C is a live, exclusively used
    // state (the exports' documented contract); it is caller memory, not a
    // window view.
    unsafe { s.as_mut() }.ok_or(Error::StreamClosed)
}

/// Opens a stream over `t` into `*s`: `mode` 0 read, 1 write; elements of
/// dtype `dtype`, `elem_size` bytes. On failure `*s` is left closed.
///
/// # Safety
/// `s` null (refused) or writable; `t` null (refused) or readable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_stream_open(s: *mut NeuronStream, t: *const TensorView, mode: u32, dtype: u8, elem_size: u32) -> i32 {
    status(with_core(|b| {
        let out = state(s)?;
        *out = NeuronStream::default();
        let mode = match mode {
            0 => StreamMode::Read,
            1 => StreamMode::Write,
            _ => return Err(Error::StreamClosed),
        };
        let es = u8::try_from(elem_size).map_err(|_| Error::ElementTypeMismatch)?;
        *out = b.state.stream_open(&view(t)?, dtype, es, mode)?;
        Ok(())
    }))
}

/// `read()`: the next element into `out` (`elem_size` bytes). 0 or -1
/// (past the end: `StreamEnd`).
///
/// # Safety
/// `s` an open state; `out` valid for `elem_size` bytes of writes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_stream_read(s: *mut NeuronStream, out: *mut c_void, elem_size: u32) -> i32 {
    status(with_core(|b| {
        if out.is_null() {
            return Err(Error::DmaUnreachable);
        }
        // SAFETY: the caller guarantees `out` holds elem_size bytes.
        let out = unsafe { core::slice::from_raw_parts_mut(out.cast::<u8>(), elem_size as usize) };
        b.state.stream_read(state(s)?, out)
    }))
}

/// `write(v)`: `v` (`elem_size` bytes) as the next element. 0 or -1.
///
/// # Safety
/// `s` an open state, as [`neuron_stream_open`] left it, on a tensor the
/// kernel may write; `v` valid for `elem_size` bytes of reads.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_stream_write(s: *mut NeuronStream, v: *const c_void, elem_size: u32) -> i32 {
    status(with_core(|b| {
        if v.is_null() {
            return Err(Error::DmaUnreachable);
        }
        // SAFETY: the caller guarantees `v` holds elem_size bytes.
        let v = unsafe { core::slice::from_raw_parts(v.cast::<u8>(), elem_size as usize) };
        // SAFETY: this function's contract (`s`).
        unsafe { b.state.stream_write(state(s)?, v) }
    }))
}

/// `close()`: flushes pending writes, frees the buffer, deregisters.
/// Closing a closed stream does nothing. 0 or -1.
///
/// # Safety
/// `s` null (refused) or a state from [`neuron_stream_open`], as it left
/// it (a write stream's on a tensor the kernel may write).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_stream_close(s: *mut NeuronStream) -> i32 {
    // A closed stream has nothing to give back: it does not enter the core
    // (the C++ destructor after an explicit `close()`). Null still does,
    // to record its error.
    match state(s) {
        Ok(st) if st.open != 1 => 0,
        // SAFETY: this function's contract (`s`).
        _ => status(with_core(|b| unsafe { b.state.stream_close(state(s)?) })),
    }
}
