//! The argument reader and the return path: `customop_setup`,
//! `customop_next_*`, `get_dst_tensor`, `customop_return_tensor`,
//! `customop_cleanup`.
//!
//! Readers consume arguments in declared order. A reader that fails
//! (wrong kind, a gate, a read fault) does not advance the cursor.
//! Value arguments (scalar, int, float, long long, double) are one-element
//! tensors; their element is read through a translate and converted to
//! the reader's type as C converts (`as` in Rust: integers truncate,
//! floats to integers saturate, NaN → 0).

use super::descriptor::{DescCheck, DescWords};
use super::dtype::Dtype;
use super::invocation::{desc_offset, ArgKind, InvocationHeader, HEADER_BYTES, MAX_ARGS};
use super::tensor::TensorView;
use crate::core_state::CoreState;
use crate::dma::BLOCK_OFFSET;
use crate::error::{Error, Result};
use crate::memcpy::MemcpyMethod;
use neuron_hal::{DmaDirection, Hal};

/// Where `setup` finds the invocation block.
#[derive(Clone, Copy, Debug)]
pub enum BlockSource<'a> {
    /// The block's bytes, already in core memory.
    Bytes(&'a [u8]),
    /// The block's SoC address (read with the active memcpy method).
    Soc(u64),
    /// The block the loader's mailbox names ([`Hal::invocation_block`]),
    /// read as [`BlockSource::Soc`]; an empty mailbox (0) → `NoInvocation`.
    Mailbox,
}

/// The invocation bound by `setup`, the argument cursor and the output
/// flags. The block itself lies in the runtime's data-RAM reserve, where
/// `setup` DMAs it ([`BLOCK_OFFSET`]); descriptors are validated there.
#[derive(Clone, Debug)]
pub struct ArgState {
    header: Option<InvocationHeader>,
    cursor: u8,
    has_return: bool,
    claimed: bool,
    returned: bool,
    /// (arguments read, arguments held) of the last invocation cleaned up:
    /// the simulator reports an op that ignored some of its arguments.
    last_reads: (u8, u8),
}

impl Default for ArgState {
    fn default() -> Self {
        Self::new()
    }
}

impl ArgState {
    /// Nothing bound.
    pub const fn new() -> Self {
        Self { header: None, cursor: 0, has_return: false, claimed: false, returned: false, last_reads: (0, 0) }
    }

    /// Whether an invocation is bound.
    pub fn is_bound(&self) -> bool {
        self.header.is_some()
    }

    /// Arguments of the bound invocation (0 if none).
    pub fn argc(&self) -> usize {
        self.header.map_or(0, |h| h.argc as usize)
    }

    /// (arguments read, arguments held) of the last invocation
    /// `customop_cleanup` unbound; (0, 0) before any.
    pub fn last_reads(&self) -> (usize, usize) {
        (self.last_reads.0 as usize, self.last_reads.1 as usize)
    }

    /// Index of the next argument a reader takes.
    pub fn cursor(&self) -> usize {
        self.cursor as usize
    }

    /// Whether `get_dst_tensor` claimed the output.
    pub fn dst_claimed(&self) -> bool {
        self.claimed
    }

    /// Whether a return copied the output.
    pub fn returned(&self) -> bool {
        self.returned
    }
}

/// Validates the descriptor words `w` and writes their view into `out`
/// (untouched on failure).
#[inline(always)]
fn parse_view(w: &DescWords, platform: &neuron_hal::Platform, ctx: *mut crate::translate::TranslationCtx, out: &mut TensorView) -> Result<()> {
    let c = DescCheck::run(w, platform)?;
    TensorView::write_from_check(out, w, &c, ctx);
    Ok(())
}

/// A scalar argument's value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ScalarValue {
    /// From an integer dtype.
    Int(i64),
    /// From a floating-point dtype.
    Float(f64),
}

impl ScalarValue {
    /// As `i64` (C conversion).
    pub fn to_i64(self) -> i64 {
        match self {
            Self::Int(v) => v,
            Self::Float(f) => f as i64,
        }
    }

    /// As `f64` (C conversion).
    pub fn to_f64(self) -> f64 {
        match self {
            Self::Int(v) => v as f64,
            Self::Float(f) => f,
        }
    }
}

/// A scalar argument: its dtype and value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scalar {
    /// The descriptor's dtype.
    pub dtype: Dtype,
    /// The element read.
    pub value: ScalarValue,
}

/// IEEE half → f32 (exact).
fn f16_to_f32(h: u16) -> f32 {
    let neg = h & 0x8000 != 0;
    let exp = ((h >> 10) & 0x1f) as u32;
    let man = (h & 0x3ff) as u32;
    let sign = (neg as u32) << 31;
    let bits = match exp {
        0 => {
            // Zero or subnormal: man · 2^-24, exact in f32.
            let v = man as f32 * (1.0 / 16_777_216.0);
            return if neg { -v } else { v };
        }
        31 => sign | 0x7f80_0000 | (man << 13),
        _ => sign | ((exp + 112) << 23) | (man << 13),
    };
    f32::from_bits(bits)
}

/// Decodes one little-endian element of `dtype` (one of the eight).
fn decode(dtype: Dtype, b: [u8; 8]) -> ScalarValue {
    match dtype {
        Dtype::Uint8 => ScalarValue::Int(b[0] as i64),
        Dtype::Int8 => ScalarValue::Int(b[0] as i8 as i64),
        Dtype::Int16 => ScalarValue::Int(i16::from_le_bytes([b[0], b[1]]) as i64),
        Dtype::Int32 => ScalarValue::Int(i32::from_le_bytes([b[0], b[1], b[2], b[3]]) as i64),
        Dtype::Int64 => ScalarValue::Int(i64::from_le_bytes(b)),
        Dtype::Fp16 => ScalarValue::Float(f16_to_f32(u16::from_le_bytes([b[0], b[1]])) as f64),
        Dtype::Bfloat16 => ScalarValue::Float(f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16) as f64),
        Dtype::Fp32 => ScalarValue::Float(f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64),
        // Validation admits only the eight above.
        _ => ScalarValue::Int(0),
    }
}

impl<H: Hal> CoreState<H> {
    /// `customop_setup(has_return)`: drains and re-arms the DMA queue,
    /// clears the output flags and binds the invocation block. On error
    /// nothing is bound.
    pub fn setup(&mut self, has_return: bool, block: BlockSource<'_>) -> Result<()> {
        self.args.header = None;
        self.args.last_reads = (0, 0);
        self.args.cursor = 0;
        self.args.claimed = false;
        self.args.returned = false;
        self.args.has_return = has_return;
        self.init_dma_queue()?;
        let block = match block {
            BlockSource::Mailbox => match self.hal.invocation_block() {
                0 => return Err(Error::NoInvocation),
                addr => BlockSource::Soc(addr),
            },
            other => other,
        };
        let at = self.block_ptr();
        let header = match block {
            BlockSource::Bytes(b) => {
                let h: &[u8; HEADER_BYTES] = b.get(..HEADER_BYTES).and_then(|h| h.try_into().ok()).ok_or(Error::BadBlockSize)?;
                let header = InvocationHeader::parse(h)?;
                let n = header.block_bytes();
                let body = b.get(..n).ok_or(Error::BadBlockSize)?;
                let (src, dst) = (body.as_ptr() as usize, at as usize);
                if src != dst {
                    // Bytes overlapping the reserve without being the block
                    // itself (only unsafe code could make such a slice).
                    if src < dst + n && dst < src + n {
                        return Err(Error::BadBlockSize);
                    }
                    // SAFETY: `at` is the block's place in the runtime's
                    // reserve, MAX_BLOCK_BYTES >= n of this core's data RAM
                    // (const-asserted in `dma`); `body` is `n` readable
                    // bytes; the two do not overlap (checked above; not
                    // `copy`, whose memmove is ~900 bytes of text).
                    unsafe { core::ptr::copy_nonoverlapping(body.as_ptr(), at, n) };
                }
                header
            }
            BlockSource::Soc(addr) => self.read_block(at, addr)?,
            BlockSource::Mailbox => return Err(Error::NoInvocation),
        };
        self.args.header = Some(header);
        Ok(())
    }

    /// Where the invocation block lies: [`BLOCK_OFFSET`] into the DMA
    /// staging window, in the runtime's reserve (past both rings).
    #[inline(always)]
    fn block_ptr(&self) -> *mut u8 {
        self.hal.nx_ptr(self.hal.platform().dma_window_nx + BLOCK_OFFSET)
    }

    /// Descriptor `i` (`i == argc` is the output) of the bound block, in
    /// place.
    #[inline(always)]
    fn desc_words(&self, argc: usize, i: usize) -> &DescWords {
        let i = i.min(argc);
        // SAFETY: `setup` bound the header (of `argc`) after writing the whole block (header
        // and argc + 1 descriptors) at `block_ptr()`, and nothing writes
        // the reserve past the rings until the next `setup`; `i <= argc`
        // keeps the descriptor inside the block. The block's place is
        // 16-byte aligned (the staging window is 4 KiB-aligned,
        // BLOCK_OFFSET and desc_offset are multiples of 16), so aligned
        // for u32. Plain data RAM: no MMIO, no window view.
        unsafe { &*self.block_ptr().add(desc_offset(i)).cast_const().cast::<DescWords>() }
    }

    /// Reads the block at SoC `addr` into its place `at` in the reserve:
    /// the header, then (once it parsed) the descriptors, with the active
    /// memcpy method (DMA straight into the reserve: no bounce block, no
    /// copy into the state).
    fn read_block(&mut self, at: *mut u8, addr: u64) -> Result<InvocationHeader> {
        let method = self.memcpy_method;
        // SAFETY: `at` is the block's place in the reserve, MAX_BLOCK_BYTES
        // of data RAM private to the runtime.
        unsafe { self.block_in(method, at, 0, addr, HEADER_BYTES as u32)? };
        // SAFETY: the reserve holds the HEADER_BYTES just read; plain data
        // RAM (no window, no MMIO) that nothing writes while the reference
        // lives. Parsed in place: no header copy on the stack.
        let header = InvocationHeader::parse(unsafe { &*at.cast_const().cast::<[u8; HEADER_BYTES]>() })?;
        let body = (header.block_bytes() - HEADER_BYTES) as u64;
        let rest = addr.checked_add(HEADER_BYTES as u64).filter(|a| a.checked_add(body).is_some()).ok_or(Error::BadBlockSize)?;
        // SAFETY: as above; `block_bytes <= MAX_BLOCK_BYTES` (the header
        // gate bounds argc), so the descriptors fit the block's place.
        unsafe { self.block_in(method, at.add(HEADER_BYTES), HEADER_BYTES as u32, rest, body as u32)? };
        Ok(header)
    }

    /// `n` bytes from SoC `src` to `dst`, the block's place plus `off`:
    /// for DMA one transfer to the reserve's SoC address (the bounce
    /// check of `dma_read` refuses the reserve, rightly for callers'
    /// buffers), else the window copy of `method`.
    ///
    /// # Safety
    /// `dst` is `block_ptr() + off` and `off + n <= MAX_BLOCK_BYTES`.
    #[inline(always)]
    unsafe fn block_in(&mut self, method: MemcpyMethod, dst: *mut u8, off: u32, src: u64, n: u32) -> Result<()> {
        match method {
            MemcpyMethod::Dma => {
                let soc = self.dma.reserve_soc(BLOCK_OFFSET + off);
                self.dma.transfer(&self.hal, DmaDirection::M2S, soc, src, n as u64)
            }
            // SAFETY: the caller's `dst` is runtime data RAM, valid for `n`
            // bytes, neither a window view nor a heap block.
            _ => unsafe { self.memcpy_from_soc_with(method, dst, src, n) },
        }
    }

    /// The next argument's descriptor, validated, if its kind is one of
    /// `kinds`. Does not advance the cursor.
    fn peek_arg(&self, kind: ArgKind) -> Result<DescCheck> {
        let (argc, i) = self.peek_arg_index(kind)?;
        DescCheck::run(self.desc_words(argc, i), self.hal.platform())
    }

    /// The kind gates of [`Self::peek_arg`]: the bound block's argc and
    /// the next argument's index. The header by reference (a copy of it
    /// was byte stores to the stack).
    #[inline(always)]
    fn peek_arg_index(&self, kind: ArgKind) -> Result<(usize, usize)> {
        let h = self.args.header.as_ref().ok_or(Error::NoInvocation)?;
        let i = self.args.cursor as usize;
        let argc = h.argc as usize;
        if i >= argc || i >= MAX_ARGS {
            return Err(Error::NoMoreArgs);
        }
        match h.kinds.get(i) {
            Some(Some(k)) if *k == kind => Ok((argc, i)),
            _ => Err(Error::WrongArgKind),
        }
    }

    /// `customop_next_tensor`.
    pub fn next_tensor(&mut self) -> Result<TensorView> {
        let mut t = TensorView::ZERO;
        self.next_tensor_into(&mut t)?;
        Ok(t)
    }

    /// [`CoreState::next_tensor`] into `out` (untouched on failure): no
    /// tensor-sized temporaries on the device's stack.
    pub fn next_tensor_into(&mut self, out: &mut TensorView) -> Result<()> {
        let (argc, i) = self.peek_arg_index(ArgKind::Tensor)?;
        let ctx = self.translate_ctx();
        parse_view(self.desc_words(argc, i), self.hal.platform(), ctx, out)?;
        self.args.cursor += 1;
        Ok(())
    }

    /// Reads the one element of a value argument of kind `kind`.
    fn next_value(&mut self, kind: ArgKind) -> Result<Scalar> {
        let d = self.peek_arg(kind)?;
        if d.numel != 1 {
            return Err(Error::ScalarNotOneElement);
        }
        let mut b = [0u8; 8];
        let n = d.dtype.elem_size() as usize;
        // SAFETY: `b` is a local buffer of 8 >= n bytes, Rust memory (no
        // window shows it, no heap block).
        unsafe { self.memcpy_from_soc_with(MemcpyMethod::CMemcpy, b.as_mut_ptr(), d.addr, n as u32)? };
        self.args.cursor += 1;
        Ok(Scalar { dtype: d.dtype, value: decode(d.dtype, b) })
    }

    /// `customop_next_scalar`: a one-element tensor of any marshallable
    /// dtype, read through a translate.
    pub fn next_scalar(&mut self) -> Result<Scalar> {
        self.next_value(ArgKind::Scalar)
    }

    /// `customop_next_int`.
    pub fn next_int(&mut self) -> Result<i32> {
        self.next_value(ArgKind::Int).map(|s| s.value.to_i64() as i32)
    }

    /// `customop_next_float`.
    pub fn next_float(&mut self) -> Result<f32> {
        self.next_value(ArgKind::Float).map(|s| s.value.to_f64() as f32)
    }

    /// `customop_next_long_long`.
    pub fn next_long_long(&mut self) -> Result<i64> {
        self.next_value(ArgKind::LongLong).map(|s| s.value.to_i64())
    }

    /// `int64_t` arguments: the same kind and reader as `long long`.
    pub fn next_int64(&mut self) -> Result<i64> {
        self.next_long_long()
    }

    /// `customop_next_double`.
    pub fn next_double(&mut self) -> Result<f64> {
        self.next_value(ArgKind::Double).map(|s| s.value.to_f64())
    }

    /// The validated output descriptor, and its words (for its sizes).
    #[inline(always)]
    fn output_desc(&self) -> Result<(DescCheck, &DescWords)> {
        let argc = self.args.header.as_ref().ok_or(Error::NoInvocation)?.argc as usize;
        let w = self.desc_words(argc, argc);
        Ok((DescCheck::run(w, self.hal.platform())?, w))
    }

    /// The output descriptor's dtype code, if the invocation has a valid
    /// one (for messages: nothing is claimed or checked).
    pub fn output_dtype(&self) -> Option<u8> {
        self.output_desc().ok().map(|(d, _)| d.dtype.code())
    }

    /// `get_dst_tensor`: the output storage, for the kernel to write in
    /// place; a later `return_tensor` copies nothing.
    pub fn get_dst_tensor(&mut self) -> Result<TensorView> {
        let argc = self.args.header.as_ref().ok_or(Error::NoInvocation)?.argc as usize;
        let ctx = self.translate_ctx();
        let mut t = TensorView::ZERO;
        parse_view(self.desc_words(argc, argc), self.hal.platform(), ctx, &mut t)?;
        self.args.claimed = true;
        Ok(t)
    }

    /// `customop_return_tensor(t)`. If the output was claimed with
    /// `get_dst_tensor`, nothing is checked or copied. Otherwise the gates
    /// (output descriptor valid; `t.dtype` equal to its dtype →
    /// `DtypeMismatch`; `t` storage non-null → `NullStorage`; `t` at least
    /// as many bytes as the output → `BufferTooSmall`) run before any byte
    /// moves, then the output's byte size is copied from `t` through a
    /// data-RAM bounce buffer (SoC → data RAM → SoC).
    pub fn return_tensor(&mut self, t: &TensorView) -> Result<()> {
        if !self.args.is_bound() {
            return Err(Error::NoInvocation);
        }
        if self.args.claimed {
            return Ok(());
        }
        let (out_addr, out_nbytes) = self.return_gates(t)?;
        // SAFETY: the destination is the invocation's output tensor, which
        // the loader's block names and the gates checked (HBM the host
        // gave this call, not this core's heaps); `t`'s storage is only
        // read.
        unsafe { self.memcpy_soc_to_soc(out_addr, t.storage.addr, out_nbytes)? };
        self.args.returned = true;
        Ok(())
    }

    /// The gates of [`CoreState::return_tensor`] (output descriptor valid,
    /// dtype, storage, shape, size); the output's address and byte size.
    /// Not inlined: the validated descriptor lives only in this frame, not
    /// under the copy's call chain (the deepest on the custom-op path).
    /// The shape must be the output's exactly (SPEC §12: the device takes
    /// one tensor of the shape function's shape), not merely as large.
    #[inline(never)]
    fn return_gates(&self, t: &TensorView) -> Result<(u64, u64)> {
        let (out, w) = self.output_desc()?;
        if t.dtype != out.dtype.code() {
            return Err(Error::DtypeMismatch);
        }
        if t.storage.addr == 0 {
            return Err(Error::NullStorage);
        }
        let rank = usize::from(out.num_dim);
        if usize::from(t.num_dim) != rank || t.sizes.iter().take(rank).enumerate().any(|(i, &n)| u64::try_from(n).ok() != Some(out.size(w, i))) {
            return Err(Error::ReturnShapeMismatch);
        }
        if t.nbytes < 0 || (t.nbytes as u64) < out.nbytes {
            return Err(Error::BufferTooSmall);
        }
        Ok((out.addr, out.nbytes))
    }

    /// Flushes the `printf` output ring at cleanup (the original's
    /// `fsync(1)`/`fsync(2)`): what was printed becomes visible to the host.
    pub fn flush_printf_ring(&mut self) {
        self.printf.flush();
    }

    /// `customop_cleanup`: drains both DMA directions, flushes the output
    /// streams, fences (`memw`), then unbinds the invocation. Every step
    /// runs even if an earlier one failed; the first error is returned:
    /// a DMA fault, else `OutputNotWritten` if the invocation has a return
    /// and the kernel neither claimed nor returned its output.
    pub fn cleanup(&mut self) -> Result<()> {
        let drained = self.dma_drain();
        self.flush_printf_ring();
        self.hal.memw();
        let written =
            if self.args.is_bound() && self.args.has_return && !self.args.claimed && !self.args.returned { Err(Error::OutputNotWritten) } else { Ok(()) };
        self.args.last_reads = (self.args.cursor, self.args.header.map_or(0, |h| h.argc));
        self.args.header = None;
        drained.and(written)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn half_conversion() {
        assert_eq!(f16_to_f32(0x3c00), 1.0);
        assert_eq!(f16_to_f32(0xc000), -2.0);
        assert_eq!(f16_to_f32(0x7bff), 65504.0);
        assert_eq!(f16_to_f32(0x0001), 5.960_464_5e-8);
        assert!(f16_to_f32(0x7e00).is_nan());
        assert_eq!(f16_to_f32(0xfc00), f32::NEG_INFINITY);
    }
}
