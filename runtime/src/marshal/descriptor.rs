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
    if a >> 32 == 0 && b >> 32 == 0 && (a as u32).leading_zeros() + (b as u32).leading_zeros() >= 32 {
        Some((a as u32).wrapping_mul(b as u32) as u64)
    } else {
        a.checked_mul(b)
    }
}

/// Whether the 16-byte shape is zero from byte `used` on (the entries
/// past `num_dim`; `used` is at most 16), as two 64-bit words rather
/// than an entry loop.
#[inline(always)]
fn unused_entries_zero(shape: &[u8; 16], used: usize) -> bool {
    let lo = u64::from_le_bytes([shape[0], shape[1], shape[2], shape[3], shape[4], shape[5], shape[6], shape[7]]);
    let hi = u64::from_le_bytes([shape[8], shape[9], shape[10], shape[11], shape[12], shape[13], shape[14], shape[15]]);
    match used {
        0 => lo == 0 && hi == 0,
        1..=7 => lo >> (8 * used) == 0 && hi == 0,
        8..=15 => hi >> (8 * (used - 8)) == 0,
        _ => true,
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

impl TensorDesc {
    /// Parses and validates wire bytes.
    #[inline(always)]
    pub fn parse(bytes: &[u8; DESC_BYTES], platform: &Platform) -> Result<Self> {
        Self::validate(&RawTensorDesc::from_bytes(bytes), platform)
    }

    /// Runs every gate (see the module documentation for the order).
    pub fn validate(raw: &RawTensorDesc, platform: &Platform) -> Result<Self> {
        if raw.reserved0 != [0; 3] || raw.reserved1 != 0 {
            return Err(Error::ReservedNotZero);
        }
        let location = match raw.location {
            0 => Location::Hbm,
            1 => Location::Sbuf,
            _ => return Err(Error::BadDescriptorCode),
        };
        let max_dims = match raw.shape_width {
            0 => NARROW_MAX_DIMS,
            1 => WIDE_MAX_DIMS,
            _ => return Err(Error::BadDescriptorCode),
        };
        match raw.shape_type {
            0 => {}
            1 => return Err(Error::OutOfLineShape),
            _ => return Err(Error::BadDescriptorCode),
        }
        let dtype = Dtype::marshallable(raw.dtype).ok_or(Error::DtypeNotMarshallable)?;
        if raw.num_dim == 0 || raw.num_dim > max_dims {
            return Err(Error::BadRank);
        }
        // 6a before 6b (docs/abi.md): the reserved entries past num_dim
        // are checked first, whatever the entries in use hold.
        if !unused_entries_zero(&raw.shape, raw.num_dim as usize * if max_dims == WIDE_MAX_DIMS { 4 } else { 2 }) {
            return Err(Error::ReservedNotZero);
        }
        let mut sizes = [0u64; MAX_DIMS];
        let mut numel = 1u64;
        for (i, size) in sizes.iter_mut().enumerate().take(raw.num_dim as usize) {
            let s = raw.shape_entry(i);
            if s == 0 {
                return Err(Error::BadShape);
            }
            numel = mul_u64(numel, s).ok_or(Error::BadShape)?;
            *size = s;
        }
        let nbytes = mul_u64(numel, dtype.elem_size() as u64).filter(|&b| b <= i64::MAX as u64).ok_or(Error::BadShape)?;
        if raw.storage == 0 {
            return Err(Error::NullStorage);
        }
        if raw.buffer_bytes == 0 || raw.buffer_bytes < nbytes {
            return Err(Error::BufferTooSmall);
        }
        let addr = match location {
            Location::Hbm => raw.storage,
            Location::Sbuf => {
                let end = raw.storage.checked_add(nbytes).ok_or(Error::AddressUnmapped)?;
                if end > platform.sbuf_size {
                    return Err(Error::AddressUnmapped);
                }
                platform.sbuf_soc_base + raw.storage
            }
        };
        Ok(Self { location, dtype, num_dim: raw.num_dim, sizes, numel, nbytes, buffer_bytes: raw.buffer_bytes, addr })
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
        for used in 0..=16 {
            for k in 0..16 {
                let mut shape = [0u8; 16];
                shape[k] = 1;
                assert_eq!(unused_entries_zero(&shape, used), k < used, "used {used}, byte {k}");
            }
            assert!(unused_entries_zero(&[0; 16], used));
        }
    }
}
