//! Read and write stream accessors (SPEC §8, §10): sequential access to a
//! tensor through a 4 KiB data-RAM buffer refilled or flushed with
//! `neuron_memcpy`. When the pool has no free buffer the stream runs per
//! element through a translate (the slow path, still correct). Writes
//! reach memory when the buffer fills and at `close`.
//!
//! The stream's state is a C struct the caller owns (the C++ and Rust
//! accessor objects hold it by value); the core keeps only the pool.

use super::coherency::AccessorKind;
use crate::core_state::CoreState;
use crate::error::{Error, Result};
use crate::marshal::tensor::TensorView;
use crate::memcpy::MemcpyMethod;
use core::mem::{offset_of, size_of};
use neuron_hal::Hal;
use static_assertions::const_assert_eq;

/// Stream direction (C values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum StreamMode {
    /// `read_stream_accessor`.
    Read = 0,
    /// `write_stream_accessor`.
    Write = 1,
}

/// No buffer: the stream runs per element.
pub const UNBUFFERED: i32 = -1;

/// A stream accessor's state (48 bytes, C layout; crosses the ABI).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct StreamState {
    /// SoC address of the tensor's first element.
    pub addr: u64,
    /// Elements in the tensor.
    pub numel: u64,
    /// Next element to read or write.
    pub pos: u64,
    /// Element index of the buffer's first element.
    pub buf_start: u64,
    /// Elements in the buffer (read: valid; write: pending).
    pub buf_len: u32,
    /// Elements the buffer holds.
    pub cap: u32,
    /// Pool slot, or [`UNBUFFERED`].
    pub slot: i32,
    /// Bytes per element.
    pub elem_size: u8,
    /// [`StreamMode`].
    pub mode: u8,
    /// 1 while open.
    pub open: u8,
    /// 0.
    pub reserved: u8,
}

const_assert_eq!(size_of::<StreamState>(), 48);
const_assert_eq!(offset_of!(StreamState, buf_len), 32);
const_assert_eq!(offset_of!(StreamState, slot), 40);
const_assert_eq!(offset_of!(StreamState, elem_size), 44);
const_assert_eq!(offset_of!(StreamState, open), 46);

impl StreamState {
    /// The state of a stream over `t` (whose elements are `elem_size`
    /// bytes of dtype `dtype`), checked and marked open but not yet
    /// attached to a core: no coherency registration, no buffer
    /// ([`CoreState::stream_attach`] does both). Pure, so a wrapper builds
    /// it in its own frame and only the small [`StreamGrant`] crosses back
    /// from the core. Inlined: returned through memory, the state is
    /// stored and then moved again into the wrapper.
    #[inline]
    pub fn new(t: &TensorView, dtype: u8, elem_size: u8, mode: StreamMode) -> Result<Self> {
        if t.storage.addr == 0 {
            return Err(Error::NullStorage);
        }
        // Every dtype's element is 1, 2, 4 or 8 bytes: counts of elements
        // are shifts, never a division (a divider call on the Q7).
        if t.dtype != dtype || t.elem_size != elem_size || !elem_size.is_power_of_two() {
            return Err(Error::ElementTypeMismatch);
        }
        Ok(Self { addr: t.storage.addr, numel: t.numel.max(0) as u64, slot: UNBUFFERED, elem_size, mode: mode as u8, open: 1, ..Default::default() })
    }

    /// This state with the buffer `g` granted by [`CoreState::stream_attach`].
    #[inline]
    pub fn with_grant(self, g: StreamGrant) -> Self {
        Self { slot: g.slot, cap: g.cap, ..self }
    }

    fn kind(&self) -> AccessorKind {
        if self.mode == StreamMode::Write as u8 {
            AccessorKind::BufferedWriter
        } else {
            AccessorKind::BufferedReader
        }
    }

    /// Read streams: when the element at `pos` is in the buffer, its index
    /// there and how many buffered elements follow from it (itself
    /// included). The one test of the runtime's reads and the Rust
    /// wrapper's; a position before the buffer (a caller's C struct) is
    /// not buffered.
    #[inline]
    pub fn buffered_run(&self) -> Option<(u64, u64)> {
        let i = self.pos.checked_sub(self.buf_start)?;
        let len = self.buf_len as u64;
        (i < len).then(|| (i, len - i))
    }

    /// Whether the stream runs through a pool buffer.
    pub fn is_buffered(&self) -> bool {
        self.slot != UNBUFFERED
    }
}

/// What attaching a stream to the core gives it: a pool buffer (its slot,
/// its capacity in elements and its data-RAM pointer) or none
/// ([`UNBUFFERED`], 0, null).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StreamGrant {
    /// Pool slot, or [`UNBUFFERED`].
    pub slot: i32,
    /// Elements the buffer holds.
    pub cap: u32,
    /// The buffer (`cap · elem_size` bytes; null when unbuffered): fixed
    /// while the stream holds its slot (the pool is carved once and cannot
    /// be reconfigured while a slot is taken), so a wrapper may read or
    /// fill it in place between calls, as the Rust API's `read` and
    /// `write` do.
    pub buf: *mut u8,
}

impl<H: Hal> CoreState<H> {
    /// Opens a stream over `t` (whose elements are `elem_size` bytes of
    /// dtype `dtype`): [`StreamState::new`], then [`CoreState::stream_attach`].
    pub fn stream_open(&mut self, t: &TensorView, dtype: u8, elem_size: u8, mode: StreamMode) -> Result<StreamState> {
        let s = StreamState::new(t, dtype, elem_size, mode)?;
        Ok(s.with_grant(self.stream_attach(&s)?))
    }

    /// Attaches a new state (from [`StreamState::new`]) to the core:
    /// registers it with the coherency enforcer and takes a pool buffer if
    /// one is free. The state itself is not written: the caller applies
    /// the grant ([`StreamState::with_grant`]).
    pub fn stream_attach(&mut self, s: &StreamState) -> Result<StreamGrant> {
        self.accessor_register(s.addr, s.kind())?;
        if let Some(slot) = self.access.streams.acquire() {
            if self.stream_buffer_take(slot) {
                if let Some(buf) = self.stream_buffer(slot) {
                    let cap = self.access.streams.buffer_bytes() >> s.elem_size.trailing_zeros();
                    return Ok(StreamGrant { slot: slot as i32, cap, buf });
                }
            }
            let _ = self.access.streams.release(slot);
        }
        self.access.unbuffered_opens = self.access.unbuffered_opens.saturating_add(1);
        Ok(StreamGrant { slot: UNBUFFERED, cap: 0, buf: core::ptr::null_mut() })
    }

    /// The pool buffer the caller's state `s` holds (`None`: unbuffered),
    /// once the state agrees with the pool. The state is the caller's
    /// memory (a C struct), and a slot, capacity or count broken there
    /// would send a copy past the buffer: a slot that is not a taken
    /// buffer, an element size that is not a power of two, a capacity
    /// other than the buffer's, more buffered elements than it holds (for
    /// a write stream, as many: a full buffer is flushed at once) are
    /// [`Error::StreamCorrupted`], before any access. (Where the pending
    /// elements go is checked by the flush, the one place it matters.)
    #[inline]
    fn held_buffer(&mut self, s: &StreamState) -> Result<Option<*mut u8>> {
        if !s.is_buffered() {
            return Ok(None);
        }
        let pool = &self.access.streams;
        // A negative slot other than UNBUFFERED is past the pool as a u32.
        let slot = s.slot as u32;
        let full = if s.mode == StreamMode::Write as u8 { s.buf_len >= s.cap } else { s.buf_len > s.cap };
        if !pool.is_taken(slot) || !s.elem_size.is_power_of_two() || s.cap != pool.buffer_bytes() >> s.elem_size.trailing_zeros() || full {
            return Err(Error::StreamCorrupted);
        }
        // A taken slot's buffer exists (the attach gives a slot back when
        // the TCM pool has no room for it).
        self.stream_buffer(slot).map(Some).ok_or(Error::StreamCorrupted)
    }

    fn stream_check(&self, s: &StreamState, mode: StreamMode, elem: usize) -> Result<()> {
        if s.open != 1 || s.mode != mode as u8 {
            return Err(Error::StreamClosed);
        }
        if elem != s.elem_size as usize {
            return Err(Error::ElementTypeMismatch);
        }
        if s.pos >= s.numel {
            return Err(Error::StreamEnd);
        }
        Ok(())
    }

    fn stream_elem_addr(s: &StreamState, i: u64) -> u64 {
        s.addr.wrapping_add(i.wrapping_mul(s.elem_size as u64))
    }

    /// `read()`: the next element's bytes into `out` (`elem_size` long).
    pub fn stream_read(&mut self, s: &mut StreamState, out: &mut [u8]) -> Result<()> {
        self.stream_check(s, StreamMode::Read, out.len())?;
        let es = s.elem_size as u64;
        let Some(buf) = self.held_buffer(s)? else {
            // Per element, through a translate.
            let n = es as u32;
            // SAFETY: `out` is a Rust slice of `n` bytes, not a window view.
            unsafe { self.memcpy_from_soc_with(MemcpyMethod::CMemcpy, out.as_mut_ptr(), Self::stream_elem_addr(s, s.pos), n)? };
            s.pos += 1;
            return Ok(());
        };
        let i = match s.buffered_run() {
            Some((i, _)) => i,
            None => {
                let k = (s.numel - s.pos).min(s.cap as u64) as u32;
                // SAFETY: `buf` is this stream's pool buffer of `cap · es`
                // bytes in data RAM (`held_buffer` checked the state against
                // the pool), held by no one else while the slot is taken.
                unsafe { self.memcpy_from_soc(buf, Self::stream_elem_addr(s, s.pos), k * es as u32)? };
                s.buf_start = s.pos;
                s.buf_len = k;
                0
            }
        };
        let at = (i * es) as usize;
        // SAFETY: element `i` is below `buf_len <= cap` (`held_buffer`), so
        // `at + es` is within the buffer's valid bytes; `out` is a distinct
        // Rust slice of `es` bytes.
        unsafe { core::ptr::copy_nonoverlapping(buf.add(at), out.as_mut_ptr(), es as usize) };
        s.pos += 1;
        Ok(())
    }

    /// Bulk `read`: the next elements into `out` (whole elements,
    /// `out.len()` a multiple of `elem_size`), as many as fit and remain.
    /// Returns the elements read: fewer than fit only at the tensor's end;
    /// 0 for an empty `out`. `StreamEnd` when `out` has room but no element
    /// is left, `ElementTypeMismatch` when `out` is not whole elements,
    /// `StreamClosed` on a closed or write stream (nothing is read then).
    ///
    /// Elements already in the buffer are copied out of it; the rest go
    /// from the tensor straight into `out` (one copy through the window,
    /// as the unbuffered path does; no bounce through the pool buffer), so
    /// a later `read` refills at the new position. On a copy error the
    /// position stays after the last element copied.
    pub fn stream_read_into(&mut self, s: &mut StreamState, out: &mut [u8]) -> Result<usize> {
        if s.open != 1 || s.mode != StreamMode::Read as u8 {
            return Err(Error::StreamClosed);
        }
        let es = s.elem_size as usize;
        // A power of two (as `stream_open` made it; the state is the
        // caller's, so checked again): counts are shifts, not divisions.
        if !es.is_power_of_two() || out.len() & (es - 1) != 0 {
            return Err(Error::ElementTypeMismatch);
        }
        let shift = es.trailing_zeros();
        if out.is_empty() {
            return Ok(0);
        }
        if s.pos >= s.numel {
            return Err(Error::StreamEnd);
        }
        let n = ((out.len() >> shift) as u64).min(s.numel - s.pos);
        let mut done = 0u64;
        if let Some(buf) = self.held_buffer(s)? {
            if let Some((i, left)) = s.buffered_run() {
                let k = n.min(left);
                let at = i as usize * es;
                let bytes = k as usize * es;
                // SAFETY: `at + bytes` is within the buffer's valid bytes
                // (`i + k <= buf_len <= cap`, checked by `held_buffer`);
                // `out` is a distinct Rust slice of at least `n · es >=
                // bytes` bytes.
                unsafe { core::ptr::copy_nonoverlapping(buf.add(at), out.as_mut_ptr(), bytes) };
                s.pos += k;
                done = k;
            }
        }
        // At most 1 GiB per copy (the copy length is 32-bit).
        let chunk = (1u64 << 30) >> shift;
        while done < n {
            let k = (n - done).min(chunk);
            let Some(dst) = out.get_mut(done as usize * es..(done + k) as usize * es) else {
                return Err(Error::ElementTypeMismatch);
            };
            // SAFETY: `dst` is a Rust slice of `k · es` bytes (the caller's,
            // not a window view nor a runtime heap block it does not own).
            unsafe { self.memcpy_from_soc_with(MemcpyMethod::CMemcpy, dst.as_mut_ptr(), Self::stream_elem_addr(s, s.pos), (k as usize * es) as u32)? };
            s.pos += k;
            done += k;
        }
        Ok(n as usize)
    }

    /// The close's flush: a write stream's pending elements, if any.
    ///
    /// # Safety
    /// As [`CoreState::stream_write`].
    unsafe fn stream_flush(&mut self, s: &mut StreamState) -> Result<()> {
        match self.held_buffer(s)? {
            // SAFETY: the caller's contract.
            Some(buf) => unsafe { self.flush_from(s, buf) },
            None => Ok(()),
        }
    }

    /// Writes the `buf_len` pending elements of `buf`, the buffer
    /// [`held_buffer`](Self::held_buffer) gave for `s` (so `buf_len <= cap`).
    ///
    /// # Safety
    /// As [`CoreState::stream_write`].
    unsafe fn flush_from(&mut self, s: &mut StreamState, buf: *mut u8) -> Result<()> {
        if s.buf_len == 0 {
            return Ok(());
        }
        // The pending elements go back where they were written: inside the
        // tensor (a caller's `buf_start` past it is refused, not wrapped).
        let end = s.buf_start.checked_add(s.buf_len as u64).filter(|e| *e <= s.numel).ok_or(Error::StreamCorrupted)?;
        let bytes = s.buf_len * s.elem_size as u32;
        // SAFETY: the buffer's first `bytes` are the pending elements
        // (`buf_len <= cap`, `cap · elem_size` the buffer's bytes); the
        // destination lies in the stream's tensor, the caller's to write.
        let r = unsafe { self.memcpy_to_soc(Self::stream_elem_addr(s, s.buf_start), buf, bytes) };
        s.buf_start = end;
        s.buf_len = 0;
        r
    }

    /// `write(v)`: `v`'s bytes (`elem_size` long) as the next element.
    /// A state's fields are plain data (the C ABI's `NeuronStream`), so
    /// safe code cannot write through one:
    ///
    /// ```compile_fail,E0133
    /// use neuron_runtime::access::StreamState;
    /// fn f(s: &mut neuron_runtime::CoreState<impl neuron_hal::Hal>, any: &mut StreamState) {
    ///     let _ = s.stream_write(any, &[0; 4]);
    ///     let _ = s.stream_close(any);
    /// }
    /// ```
    ///
    /// # Safety
    /// `s` was opened by [`CoreState::stream_open`] on a tensor whose
    /// storage the caller may write (as [`CoreState::op_fill`]'s `dst`), and
    /// its address fields are as the open left them: the element is
    /// written where they say.
    pub unsafe fn stream_write(&mut self, s: &mut StreamState, v: &[u8]) -> Result<()> {
        self.stream_check(s, StreamMode::Write, v.len())?;
        let es = s.elem_size as u64;
        let Some(buf) = self.held_buffer(s)? else {
            // SAFETY: `v` is a Rust slice of `es` bytes, not a window view;
            // the destination is the stream's tensor (this function's
            // contract).
            unsafe { self.memcpy_to_soc_with(MemcpyMethod::CMemcpy, Self::stream_elem_addr(s, s.pos), v.as_ptr(), es as u32)? };
            s.pos += 1;
            return Ok(());
        };
        if s.buf_len == 0 {
            s.buf_start = s.pos;
        }
        let at = (s.buf_len as u64 * es) as usize;
        // SAFETY: `held_buffer` checked buf_len < cap (a write stream's)
        // and cap · es = the buffer's bytes, so `at + es` is inside it.
        unsafe { core::ptr::copy_nonoverlapping(v.as_ptr(), buf.add(at), es as usize) };
        s.buf_len += 1;
        s.pos += 1;
        if s.buf_len == s.cap || s.pos == s.numel {
            // SAFETY: this function's contract.
            unsafe { self.flush_from(s, buf)? };
        }
        Ok(())
    }

    /// `close()`: flushes pending writes, gives the buffer back and
    /// deregisters. Closing a closed stream does nothing. Every step runs;
    /// the first error is returned.
    ///
    /// # Safety
    /// As [`CoreState::stream_write`]: a write stream's pending elements
    /// are flushed where `s` says.
    pub unsafe fn stream_close(&mut self, s: &mut StreamState) -> Result<()> {
        if s.open != 1 {
            return Ok(());
        }
        // SAFETY: this function's contract.
        let flushed = if s.mode == StreamMode::Write as u8 { unsafe { self.stream_flush(s) } } else { Ok(()) };
        let released = if s.is_buffered() {
            let slot = s.slot as u32;
            self.access.streams.release(slot).and_then(|()| self.stream_buffer_give(slot))
        } else {
            Ok(())
        };
        let deregistered = self.accessor_release(s.addr, s.kind());
        s.open = 0;
        s.slot = UNBUFFERED;
        flushed.and(released).and(deregistered)
    }
}
