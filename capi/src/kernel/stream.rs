//! Read and write stream accessors: sequential access through a 4 KiB
//! data-RAM buffer (per element when the pool has none free).

use super::leaf::Leaf;
use super::{Element, Result};
use crate::binding::{with_core, Stamp};
use core::marker::PhantomData;
use core::mem::size_of;
use neuron_runtime::access::{StreamMode, StreamState as NeuronStream};
use neuron_runtime::marshal::tensor::TensorView;

// The runtime's stream functions, called directly (the C exports are a
// shell over the same ones).

/// Opens a stream and returns it with its buffer (null when unbuffered),
/// which the wrapper reads or fills in place: one entry point.
///
/// The state is built here and only the grant (slot, capacity, buffer)
/// comes back from the core: the 48-byte state returned through the
/// entry point was written field by field and then moved by wider loads,
/// a store-forwarding stall that was a quarter of the host stream's fixed
/// cost. Inlined for the same reason (the state is stored once, in place).
#[inline(always)]
fn open<T: Element>(view: &TensorView, mode: StreamMode) -> Result<(NeuronStream, *mut u8)> {
    let s = NeuronStream::new(view, T::DTYPE.code(), size_of::<T>() as u8, mode);
    // A refused state still enters the core, so the error is recorded.
    let g = with_core(|b| b.state.stream_attach(s.as_ref().map_err(|e| *e)?))?;
    Ok((s?.with_grant(g), g.buf))
}

/// Closing a closed stream does nothing, so it does not enter the core
/// (a drop after an explicit `close` costs no entry point).
fn close(s: &mut NeuronStream) -> Result<()> {
    if s.open != 1 {
        return Ok(());
    }
    // SAFETY: `s` was opened by `open` on a `Tensor` (a view the runtime
    // handed out); the accessor keeps it in a private field.
    with_core(|b| unsafe { b.state.stream_close(s) })
}

/// `read_stream_accessor<T>()`.
#[derive(Debug)]
pub struct ReadStream<'a, T> {
    s: NeuronStream,
    /// The stream's data-RAM buffer (null when unbuffered), read in place.
    buf: *mut u8,
    /// The tensor's window pointer while one record maps the whole tensor
    /// (as the per-element accessor keeps it): bulk reads copy from it
    /// without entering the core.
    leaf: Leaf,
    /// The binding `buf` was granted (or last checked) under: the fast
    /// path uses `buf` only while it holds, so never past the core's
    /// binding (another core's, or none after its `enter` ended).
    bound: Stamp,
    /// The tensor's storage, borrowed (the stream keeps a copy of its
    /// view): not past an `OwnedTensor` it came from.
    _t: PhantomData<(T, &'a ())>,
}

impl<T: Element> ReadStream<'_, T> {
    #[inline(always)]
    pub(crate) fn open(view: &TensorView) -> Result<Self> {
        let bound = Stamp::now();
        let (s, buf) = open::<T>(view, StreamMode::Read)?;
        // Filled at the first bulk read, in place (filled here, it would
        // be moved right after being written: a store-forwarding stall).
        let leaf = Leaf::new(view.storage.ctx, s.addr, s.numel.checked_mul(size_of::<T>() as u64));
        Ok(Self { buf, s, leaf, bound, _t: PhantomData })
    }

    /// Whether the stream takes a pool buffer (else it runs per element).
    pub fn is_buffered(&self) -> bool {
        self.s.is_buffered()
    }

    /// `read()`: the next element (`StreamEnd` past the last). An element
    /// already in the buffer is read in place; the library is called only
    /// to refill (or per element when unbuffered).
    #[inline]
    pub fn read(&mut self) -> Result<T> {
        let s = &mut self.s;
        if let (false, 1, Some((at, _)), true) = (self.buf.is_null(), s.open, s.buffered_run(), self.bound.holds()) {
            // SAFETY: `buf` is this open stream's data-RAM buffer (plain
            // core memory, no window), fixed while it is open, of the core
            // bound now (the stamp holds: live); elements
            // `0..buf_len` are valid (filled by the last refill), and
            // `at < buf_len`. Every bit pattern is a valid element value.
            let v = unsafe { self.buf.cast::<T>().add(at as usize).read_unaligned() };
            s.pos += 1;
            return Ok(v);
        }
        self.read_slow()
    }

    #[inline(never)]
    fn read_slow(&mut self) -> Result<T> {
        let mut v = [0u8; 8];
        let v = &mut v[..size_of::<T>()];
        // The core checks the stream against its own pool: once it
        // accepts, the buffer is the bound core's.
        let now = Stamp::now();
        with_core(|b| b.state.stream_read(&mut self.s, v))?;
        self.bound = now;
        // SAFETY: `v` holds size_of::<T>() bytes (elements are at most 8),
        // all written by the read; every bit pattern is a valid element.
        Ok(unsafe { T::load(v.as_ptr()) })
    }

    /// Bulk `read()`: the next elements into `out`, as many as fit and
    /// remain; returns how many (fewer than `out.len()` only at the
    /// tensor's end, 0 for an empty `out`). `StreamEnd` when `out` has room
    /// but the stream is past its last element. Elements still in the
    /// buffer are copied from it, the rest straight from the tensor (one
    /// copy; with nothing buffered and one record mapping the whole
    /// tensor, from its window without entering the core); element reads
    /// may follow (they refill at the new position).
    pub fn read_into(&mut self, out: &mut [T]) -> Result<usize> {
        let s = &mut self.s;
        if s.open == 1 && s.pos < s.numel && !out.is_empty() && s.buffered_run().is_none() {
            // Nothing of it buffered: while the tensor's window maps it
            // whole, one copy from there, as the core's bulk read would
            // make. (The offset is exact whenever the cache answers: one
            // record maps the whole tensor, at most a 64 MiB window.)
            let off = (s.pos as usize).wrapping_mul(size_of::<T>());
            let p = self.leaf.cached::<T>(off).or_else(|| {
                self.leaf.refill();
                self.leaf.cached::<T>(off)
            });
            if let Some(p) = p {
                let n = (out.len() as u64).min(s.numel - s.pos) as usize;
                // SAFETY: the cache is filled only while one record maps
                // the whole tensor, and still maps it (no translate since):
                // `p` is element `pos` in that mapping and `pos + n <=
                // numel`, so the `n` elements from `p` are mapped; `out`
                // is a Rust slice of at least `n` elements, which no window
                // shows (as in the core's copy). Every bit pattern is a
                // valid element.
                unsafe { core::ptr::copy_nonoverlapping(p.cast::<T>().cast_const(), out.as_mut_ptr(), n) };
                s.pos += n as u64;
                return Ok(n);
            }
        }
        let len = core::mem::size_of_val(out);
        // SAFETY: `out` is an exclusive slice of plain numeric elements
        // (`Element` is sealed to them: no padding, every bit pattern
        // valid), viewed as its `len` bytes for the copy's duration only.
        let bytes = unsafe { core::slice::from_raw_parts_mut(out.as_mut_ptr().cast::<u8>(), len) };
        with_core(|b| b.state.stream_read_into(&mut self.s, bytes))
    }

    /// `close()`: gives the buffer back.
    pub fn close(&mut self) -> Result<()> {
        close(&mut self.s)
    }
}

impl<T> Drop for ReadStream<'_, T> {
    fn drop(&mut self) {
        let _ = close(&mut self.s);
    }
}

/// `write_stream_accessor<T>()`: writes reach memory at `close()` or drop.
#[derive(Debug)]
pub struct WriteStream<'a, T> {
    s: NeuronStream,
    /// The stream's data-RAM buffer (null when unbuffered), filled in place.
    buf: *mut u8,
    /// As `ReadStream::bound`.
    bound: Stamp,
    /// The tensor's storage, borrowed (the stream keeps a copy of its
    /// view): not past an `OwnedTensor` it came from.
    _t: PhantomData<(T, &'a ())>,
}

impl<T: Element> WriteStream<'_, T> {
    #[inline(always)]
    pub(crate) fn open(view: &TensorView) -> Result<Self> {
        let bound = Stamp::now();
        let (s, buf) = open::<T>(view, StreamMode::Write)?;
        Ok(Self { buf, s, bound, _t: PhantomData })
    }

    /// Whether the stream takes a pool buffer (else it runs per element).
    pub fn is_buffered(&self) -> bool {
        self.s.is_buffered()
    }

    /// `write(v)`: `v` as the next element (`StreamEnd` past the last).
    /// Stored in the buffer in place unless it fills the buffer or is the
    /// last element; then the library stores it and flushes.
    #[inline]
    pub fn write(&mut self, v: T) -> Result<()> {
        let s = &mut self.s;
        if !self.buf.is_null() && s.open == 1 && s.buf_len + 1 < s.cap && s.pos + 1 < s.numel && self.bound.holds() {
            if s.buf_len == 0 {
                s.buf_start = s.pos;
            }
            // SAFETY: `buf` is this open stream's data-RAM buffer of `cap`
            // elements (plain core memory, no window) of the core bound now
            // (the stamp holds: live); `buf_len < cap`.
            unsafe { self.buf.cast::<T>().add(s.buf_len as usize).write_unaligned(v) };
            s.buf_len += 1;
            s.pos += 1;
            return Ok(());
        }
        self.write_slow(v)
    }

    #[inline(never)]
    fn write_slow(&mut self, v: T) -> Result<()> {
        let mut bytes = [0u8; 8];
        let bytes = &mut bytes[..size_of::<T>()];
        // SAFETY: `bytes` has room for one element (at most 8 bytes).
        unsafe { v.store(bytes.as_mut_ptr()) };
        let now = Stamp::now();
        // SAFETY: `self.s` was opened by `open` on a `Tensor` (a view the
        // runtime handed out); the accessor keeps it in a private field.
        with_core(|b| unsafe { b.state.stream_write(&mut self.s, bytes) })?;
        self.bound = now;
        Ok(())
    }

    /// `close()`: flushes and gives the buffer back.
    pub fn close(&mut self) -> Result<()> {
        close(&mut self.s)
    }
}

impl<T> Drop for WriteStream<'_, T> {
    fn drop(&mut self) {
        let _ = close(&mut self.s);
    }
}
