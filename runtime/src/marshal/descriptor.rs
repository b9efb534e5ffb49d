//! The 48-byte tensor descriptor (SPEC §6 "Our layout") and its gates.
//!
//! [`RawTensorDesc`] is the wire layout, read from little-endian bytes;
//! [`TensorDesc::parse`] runs every gate and yields the validated form.
//! Gates run in this order, so a descriptor with several faults reports
//! the first:
//!
//! 1. reserved bytes 5..8 or 40..48 non-zero → `ReservedNotZero`
//! 2. location or shape-width code unknown, shape type > 1 → `BadDescriptorCode`
//! 3. shape type 1 (out-of-line) → `OutOfLineShape`
//! 4. dtype not one of the eight → `DtypeNotMarshallable`
//! 5. `num_dim` 0 or above 8 (narrow) / 4 (wide) → `BadRank`
//! 6. a shape entry past `num_dim` non-zero → `ReservedNotZero`
//!    (those bytes are reserved); a shape entry below `num_dim` that is 0,
//!    or `numel · elem_size` above `i64::MAX` → `BadShape`
//! 7. storage field 0 → `NullStorage` (checked on the raw field, so an
//!    SBUF tensor at offset 0 is refused too)
//! 8. `buffer_bytes` 0 or below `numel · elem_size` → `BufferTooSmall`
//! 9. SBUF: offset + bytes past the SBUF size → `AddressUnmapped`

use super::dtype::Dtype;
use super::tensor::MAX_DIMS;
use crate::error::{Error, Result};
use core::mem::{offset_of, size_of};
use neuron_hal::Platform;
use static_assertions::const_assert_eq;

/// Bytes of one descriptor.
pub const DESC_BYTES: usize = 48;
/// Dimensions a narrow (u16) shape holds.
pub const NARROW_MAX_DIMS: u8 = 8;
/// Dimensions a wide (u32) shape holds.
pub const WIDE_MAX_DIMS: u8 = 4;

/// The wire layout, field for field (little endian on the wire).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct RawTensorDesc {
    /// 0 = HBM, 1 = SBUF.
    pub location: u8,
    /// 0 = inline, 1 = out-of-line (rejected).
    pub shape_type: u8,
    /// ISA dtype code.
    pub dtype: u8,
    /// Number of dimensions.
    pub num_dim: u8,
    /// 0 = narrow (8 × u16), 1 = wide (4 × u32).
    pub shape_width: u8,
    /// Must be 0.
    pub reserved0: [u8; 3],
    /// HBM SoC address, or offset in SBUF.
    pub storage: u64,
    /// The inline shape, outermost dimension first.
    pub shape: [u8; 16],
    /// Bytes of storage behind `storage`.
    pub buffer_bytes: u64,
    /// Must be 0.
    pub reserved1: u64,
}

const_assert_eq!(size_of::<RawTensorDesc>(), DESC_BYTES);
const_assert_eq!(offset_of!(RawTensorDesc, location), 0);
const_assert_eq!(offset_of!(RawTensorDesc, shape_type), 1);
const_assert_eq!(offset_of!(RawTensorDesc, dtype), 2);
const_assert_eq!(offset_of!(RawTensorDesc, num_dim), 3);
const_assert_eq!(offset_of!(RawTensorDesc, shape_width), 4);
const_assert_eq!(offset_of!(RawTensorDesc, reserved0), 5);
const_assert_eq!(offset_of!(RawTensorDesc, storage), 8);
const_assert_eq!(offset_of!(RawTensorDesc, shape), 16);
const_assert_eq!(offset_of!(RawTensorDesc, buffer_bytes), 32);
const_assert_eq!(offset_of!(RawTensorDesc, reserved1), 40);

/// Byte by byte with shifts: no `copy_from_slice`, which becomes a
/// `memcpy` call on the Q7 (~100 instructions for 8 bytes).
#[inline(always)]
fn le_u64(b: &[u8; DESC_BYTES], at: usize) -> u64 {
    le_u32_at(b, at) as u64 | (le_u32_at(b, at + 4) as u64) << 32
}

/// `a · b`, `None` on overflow. When both have at most 32 significant
/// bits between them the product is one 32-bit multiply (a 32-bit core
/// has no 64-bit one: `checked_mul` on u64 is a `__muldi3` call, and the
/// shape products of every descriptor are usually small).
#[inline(always)]
fn mul_u64(a: u64, b: u64) -> Option<u64> {
    if a >> 32 == 0 && b >> 32 == 0 && neuron_hal::bits::mul_fits_u32(a as u32, b as u32) {
        Some((a as u32).wrapping_mul(b as u32) as u64)
    } else {
        a.checked_mul(b)
    }
}

#[inline(always)]
fn le_u32_at(b: &[u8], at: usize) -> u32 {
    u32::from(b[at]) | u32::from(b[at + 1]) << 8 | u32::from(b[at + 2]) << 16 | u32::from(b[at + 3]) << 24
}

impl RawTensorDesc {
    /// Reads the wire bytes.
    pub fn from_bytes(b: &[u8; DESC_BYTES]) -> Self {
        let reserved0 = [b[5], b[6], b[7]];
        // Four words, not a 16-byte `copy_from_slice` (a `memcpy` call).
        let w = |k: usize| le_u32_at(b, 16 + 4 * k).to_le_bytes();
        let (w0, w1, w2, w3) = (w(0), w(1), w(2), w(3));
        let shape = [w0[0], w0[1], w0[2], w0[3], w1[0], w1[1], w1[2], w1[3], w2[0], w2[1], w2[2], w2[3], w3[0], w3[1], w3[2], w3[3]];
        Self {
            location: b[0],
            shape_type: b[1],
            dtype: b[2],
            num_dim: b[3],
            shape_width: b[4],
            reserved0,
            storage: le_u64(b, 8),
            shape,
            buffer_bytes: le_u64(b, 32),
            reserved1: le_u64(b, 40),
        }
    }

    /// The wire bytes.
    pub fn to_bytes(&self) -> [u8; DESC_BYTES] {
        let mut b = [0u8; DESC_BYTES];
        b[0] = self.location;
        b[1] = self.shape_type;
        b[2] = self.dtype;
        b[3] = self.num_dim;
        b[4] = self.shape_width;
        b[5..8].copy_from_slice(&self.reserved0);
        b[8..16].copy_from_slice(&self.storage.to_le_bytes());
        b[16..32].copy_from_slice(&self.shape);
        b[32..40].copy_from_slice(&self.buffer_bytes.to_le_bytes());
        b[40..48].copy_from_slice(&self.reserved1.to_le_bytes());
        b
    }

    /// Shape entry `i` (0..8 narrow, 0..4 wide) as stored.
    #[inline(always)]
    pub fn shape_entry(&self, i: usize) -> u64 {
        // Past the entries (never, from `validate`): 0.
        if self.shape_width == ShapeWidth::Wide as u8 {
            self.shape.as_chunks::<4>().0.get(i).map_or(0, |e| u32::from_le_bytes(*e) as u64)
        } else {
            self.shape.as_chunks::<2>().0.get(i).map_or(0, |e| u16::from_le_bytes(*e) as u64)
        }
    }

    /// A well-formed contiguous descriptor (a host-side helper for
    /// building invocations): narrow if every dimension fits 16 bits and
    /// there are at most 8, else wide (at most 4 dimensions of 32 bits);
    /// `buffer_bytes` is exactly what the shape needs. `None` if the shape
    /// fits neither width or the dtype code is outside the table.
    pub fn contiguous(location: Location, dtype: u8, storage: u64, shape: &[u64]) -> Option<Self> {
        let elem = Dtype::from_code(dtype)?.elem_size().max(1) as u64;
        let narrow = shape.len() <= NARROW_MAX_DIMS as usize && shape.iter().all(|&s| s <= u16::MAX as u64);
        let wide = shape.len() <= WIDE_MAX_DIMS as usize && shape.iter().all(|&s| s <= u32::MAX as u64);
        let mut d = Self { location: location as u8, dtype, num_dim: shape.len() as u8, storage, ..Self::default() };
        if narrow {
            // At most 8 dimensions: one 2-byte entry each.
            for (e, &s) in d.shape.as_chunks_mut::<2>().0.iter_mut().zip(shape) {
                *e = (s as u16).to_le_bytes();
            }
        } else if wide {
            d.shape_width = ShapeWidth::Wide as u8;
            // At most 4 dimensions: one 4-byte entry each.
            for (e, &s) in d.shape.as_chunks_mut::<4>().0.iter_mut().zip(shape) {
                *e = (s as u32).to_le_bytes();
            }
        } else {
            return None;
        }
        let numel = shape.iter().try_fold(1u64, |a, &s| a.checked_mul(s))?;
        d.buffer_bytes = numel.checked_mul(elem)?;
        Some(d)
    }
}

/// Where the storage lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Location {
    /// `storage` is an HBM SoC address.
    Hbm = 0,
    /// `storage` is an offset in the SBUF region.
    Sbuf = 1,
}

/// How the inline shape's 16 bytes are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum ShapeWidth {
    /// 8 × u16.
    Narrow = 0,
    /// 4 × u32.
    Wide = 1,
}

/// A descriptor that passed every gate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorDesc {
    /// Where the storage lives.
    pub location: Location,
    /// The element type (one of the eight).
    pub dtype: Dtype,
    /// Dimensions in use (1..=8).
    pub num_dim: u8,
    /// Sizes, outermost first; 0 past `num_dim`.
    pub sizes: [u64; MAX_DIMS],
    /// Elements.
    pub numel: u64,
    /// Bytes the elements take (`numel · elem_size`).
    pub nbytes: u64,
    /// Bytes of storage the descriptor declares.
    pub buffer_bytes: u64,
    /// Effective SoC address (`sbuf_soc_base + offset` for SBUF).
    pub addr: u64,
}

/// The descriptor as 12 memory words (`u32::from_le` of each gives the
/// little-endian wire value). The runtime validates descriptors in place
/// in the invocation block, which is word-aligned, so fields are word
/// loads rather than byte loads and shifts.
pub type DescWords = [u32; DESC_WORDS];
/// Words of one descriptor.
pub const DESC_WORDS: usize = DESC_BYTES / 4;

/// Marshallable dtype codes as a bit set (bit `c` for code `c`).
const MARSHAL_MASK: u32 = {
    let mut m = 0u32;
    let mut i = 0;
    while i < super::dtype::MARSHALLABLE.len() {
        m |= 1 << super::dtype::MARSHALLABLE[i];
        i += 1;
    }
    m
};

/// log2 of the element size of each code, two bits per code (only the
/// marshallable codes are looked up).
const ELEM_LOG2: u32 = {
    let mut t = 0u32;
    let mut i = 0;
    while i < super::dtype::MARSHALLABLE.len() {
        let c = super::dtype::MARSHALLABLE[i];
        let sz = match Dtype::from_code(c) {
            Some(d) => d.elem_size(),
            None => 1,
        };
        t |= sz.trailing_zeros() << (2 * c as u32);
        i += 1;
    }
    t
};

/// Word `k` of the descriptor as its little-endian value.
#[inline(always)]
fn word(w: &DescWords, k: usize) -> u32 {
    // `k` is a constant below 12 at every call: the check folds away.
    u32::from_le(w.get(k).copied().unwrap_or(0))
}

/// Shape entry `i` (below the rank) read from the shape words.
#[inline(always)]
fn entry(w: &DescWords, wide: bool, i: u32) -> u32 {
    if wide {
        word(w, 4 + (i as usize & 3))
    } else {
        (word(w, 4 + ((i as usize >> 1) & 3)) >> (16 * (i & 1))) & 0xFFFF
    }
}

/// What the gates establish about a descriptor, without the sizes (they
/// are re-read from the shape words where a view is written).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DescCheck {
    /// Where the storage lives.
    pub location: Location,
    /// The element type (one of the eight).
    pub dtype: Dtype,
    /// Dimensions in use.
    pub num_dim: u8,
    /// Whether the shape is 4 × u32 (else 8 × u16).
    pub wide: bool,
    /// Elements.
    pub numel: u64,
    /// Bytes the elements take.
    pub nbytes: u64,
    /// Bytes of storage the descriptor declares.
    pub buffer_bytes: u64,
    /// Effective SoC address.
    pub addr: u64,
}

impl DescCheck {
    /// Runs every gate on the descriptor's words (see the module
    /// documentation for the order). One out-of-line copy for every reader
    /// (inlined into each it was ~1 KB more text for a few dozen
    /// instructions per call).
    #[inline(never)]
    pub fn run(w: &DescWords, platform: &Platform) -> Result<Self> {
        let w0 = word(w, 0);
        let w1 = word(w, 1);
        if w1 >> 8 != 0 || word(w, 10) != 0 || word(w, 11) != 0 {
            return Err(Error::ReservedNotZero);
        }
        let location = match w0 & 0xFF {
            0 => Location::Hbm,
            1 => Location::Sbuf,
            _ => return Err(Error::BadDescriptorCode),
        };
        let wide = match w1 {
            0 => false,
            1 => true,
            _ => return Err(Error::BadDescriptorCode),
        };
        match (w0 >> 8) & 0xFF {
            0 => {}
            1 => return Err(Error::OutOfLineShape),
            _ => return Err(Error::BadDescriptorCode),
        }
        let code = (w0 >> 16) & 0xFF;
        if code >= 32 || (MARSHAL_MASK >> code) & 1 == 0 {
            return Err(Error::DtypeNotMarshallable);
        }
        let Some(dtype) = Dtype::from_code(code as u8) else {
            return Err(Error::DtypeNotMarshallable);
        };
        let num_dim = w0 >> 24;
        let max_dims = if wide { WIDE_MAX_DIMS } else { NARROW_MAX_DIMS } as u32;
        if num_dim == 0 || num_dim > max_dims {
            return Err(Error::BadRank);
        }
        // 6a before 6b (docs/abi.md): the reserved entries past num_dim
        // are checked first, whatever the entries in use hold. `used` is
        // the bytes in use (at most 16); per shape word, the bytes past it.
        if !unused_entries_zero(&[word(w, 4), word(w, 5), word(w, 6), word(w, 7)], num_dim << (1 + wide as u32)) {
            return Err(Error::ReservedNotZero);
        }
        let mut numel = 1u64;
        for i in 0..num_dim {
            let s = entry(w, wide, i);
            if s == 0 {
                return Err(Error::BadShape);
            }
            numel = mul_u64(numel, s as u64).ok_or(Error::BadShape)?;
        }
        // numel · elem_size <= i64::MAX, the size a power of two.
        let shift = (ELEM_LOG2 >> (2 * code)) & 3;
        if numel > (i64::MAX as u64) >> shift {
            return Err(Error::BadShape);
        }
        let nbytes = numel << shift;
        let storage = word(w, 2) as u64 | (word(w, 3) as u64) << 32;
        if storage == 0 {
            return Err(Error::NullStorage);
        }
        let buffer_bytes = word(w, 8) as u64 | (word(w, 9) as u64) << 32;
        if buffer_bytes == 0 || buffer_bytes < nbytes {
            return Err(Error::BufferTooSmall);
        }
        let addr = match location {
            Location::Hbm => storage,
            Location::Sbuf => {
                let end = storage.checked_add(nbytes).ok_or(Error::AddressUnmapped)?;
                if end > platform.sbuf_size {
                    return Err(Error::AddressUnmapped);
                }
                platform.sbuf_soc_base + storage
            }
        };
        Ok(Self { location, dtype, num_dim: num_dim as u8, wide, numel, nbytes, buffer_bytes, addr })
    }

    /// Size of dimension `i` (below the rank), from the shape words.
    #[inline(always)]
    pub fn size(&self, w: &DescWords, i: usize) -> u64 {
        entry(w, self.wide, i as u32) as u64
    }
}

/// Whether the shape (as its four little-endian words) is zero from byte
/// `used` on (the entries past `num_dim`; `used` is at most 16): per
/// word, the bytes past `used` masked, not an entry loop.
#[inline(always)]
fn unused_entries_zero(shape: &[u32; 4], used: u32) -> bool {
    // The bytes of word `k` past `used` (none if `used` covers the word).
    let past = |k: u32| {
        let u = used.saturating_sub(4 * k);
        if u >= 4 {
            0
        } else {
            !0u32 << (8 * u)
        }
    };
    let [a, b, c, d] = *shape;
    (a & past(0)) | (b & past(1)) | (c & past(2)) | (d & past(3)) == 0
}

/// The wire bytes as memory words (for bytes of no known alignment).
#[inline(always)]
pub fn words_of(bytes: &[u8; DESC_BYTES]) -> DescWords {
    let mut w = [0u32; DESC_WORDS];
    for (d, c) in w.iter_mut().zip(bytes.as_chunks::<4>().0) {
        *d = u32::from_ne_bytes(*c);
    }
    w
}

impl TensorDesc {
    /// Parses and validates wire bytes.
    pub fn parse(bytes: &[u8; DESC_BYTES], platform: &Platform) -> Result<Self> {
        let w = words_of(bytes);
        let c = DescCheck::run(&w, platform)?;
        let mut sizes = [0u64; MAX_DIMS];
        for (i, s) in sizes.iter_mut().enumerate().take(c.num_dim as usize) {
            *s = c.size(&w, i);
        }
        Ok(Self {
            location: c.location,
            dtype: c.dtype,
            num_dim: c.num_dim,
            sizes,
            numel: c.numel,
            nbytes: c.nbytes,
            buffer_bytes: c.buffer_bytes,
            addr: c.addr,
        })
    }

    /// Runs every gate (see the module documentation for the order).
    pub fn validate(raw: &RawTensorDesc, platform: &Platform) -> Result<Self> {
        Self::parse(&raw.to_bytes(), platform)
    }
}

#[cfg(test)]
mod tests {
    use super::{mul_u64, unused_entries_zero};

    #[test]
    fn mul_u64_is_checked_mul() {
        let v = [0u64, 1, 2, 3, 0xFFFF, 0x1_0000, 0xFFFF_FFFF, 0x1_0000_0000, 0x1234_5678_9ABC, u64::MAX / 3, u64::MAX];
        for &a in &v {
            for &b in &v {
                assert_eq!(mul_u64(a, b), a.checked_mul(b), "{a:#x} * {b:#x}");
            }
        }
    }

    #[test]
    fn unused_entries_are_the_bytes_past_used() {
        for used in 0..=16u32 {
            for k in 0..16u32 {
                let mut shape = [0u32; 4];
                shape[(k / 4) as usize] = u32::from_le_bytes({
                    let mut b = [0u8; 4];
                    b[(k % 4) as usize] = 1;
                    b
                });
                assert_eq!(unused_entries_zero(&shape, used), k < used, "used {used}, byte {k}");
            }
            assert!(unused_entries_zero(&[0; 4], used));
        }
    }
}
