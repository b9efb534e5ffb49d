//! `customop run --on both`: the simulator's output against the emulated
//! device's, bit for bit, with one exception: two NaNs agree whatever
//! their sign and payload. The host's arithmetic makes its default NaN
//! with the sign bit set (x86), the device's soft float without, so a
//! kernel that makes a NaN (`0.0 / 0.0`, `log` of a negative) would
//! otherwise never agree; the count of such elements is reported. Any
//! other difference, the sign of zero included, is one: the point is to
//! catch the device and the simulator computing differently.

use crate::npy::Dtype;

/// How many differing elements a message lists.
pub const SHOWN: usize = 8;

/// One element as text: its bits and, for the types with a plain value,
/// the value.
fn element(dtype: Dtype, b: &[u8]) -> String {
    let bits = b.iter().rev().map(|x| format!("{x:02x}")).collect::<String>();
    let value = match dtype {
        Dtype::Uint8 => b[0].to_string(),
        Dtype::Int8 => (b[0] as i8).to_string(),
        Dtype::Int16 => i16::from_le_bytes([b[0], b[1]]).to_string(),
        Dtype::Int32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
        Dtype::Int64 => i64::from_le_bytes(b[..8].try_into().expect("8 bytes")).to_string(),
        Dtype::Fp32 => format!("{:?}", f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        // bf16 is the top half of an f32.
        Dtype::Bfloat16 => format!("{:?}", f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16)),
        Dtype::Fp16 => return format!("0x{bits}"),
        // `compare` refuses these; the bits are all there is to show.
        Dtype::Invalid | Dtype::Uint64 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Fp32R | Dtype::Fp8Exp3 | Dtype::Fp8Exp4 | Dtype::Fp8Exp5 => {
            return format!("0x{bits}")
        }
    };
    format!("{value} (0x{bits})")
}

/// The row-major index of flat element `i` of `shape`.
fn index(shape: &[u64], mut i: u64) -> String {
    let mut idx = vec![0u64; shape.len()];
    for (k, &d) in shape.iter().enumerate().rev() {
        if d > 0 {
            idx[k] = i % d;
            i /= d;
        }
    }
    format!("{idx:?}")
}

/// Whether element `b` of `dtype` is a NaN (floating point only).
fn is_nan(dtype: Dtype, b: &[u8]) -> bool {
    match dtype {
        Dtype::Fp32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]).is_nan(),
        // bf16: exponent all ones (0x7f80), mantissa not 0.
        Dtype::Bfloat16 => u16::from_le_bytes([b[0], b[1]]) & 0x7fff > 0x7f80,
        // f16: exponent all ones (0x7c00), mantissa not 0.
        Dtype::Fp16 => u16::from_le_bytes([b[0], b[1]]) & 0x7fff > 0x7c00,
        _ => false,
    }
}

/// How two outputs agree: the number of elements that are NaN on both
/// sides with other bits (0: bit-identical).
pub type Agreement = usize;

/// `Ok` when `sim` and `dev` agree (bit for bit, or NaN for NaN: how many
/// NaNs differ in their bits), else `Err` with the number of differing
/// elements and the first [`SHOWN`] of them.
pub fn compare(dtype: Dtype, shape: &[u64], sim: &[u8], dev: &[u8]) -> Result<Agreement, String> {
    if !dtype.marshals() {
        return Err(format!("the output's dtype {} (code {}) does not marshal", dtype.name(), dtype.code()));
    }
    if sim == dev {
        return Ok(0);
    }
    if sim.len() != dev.len() {
        return Err(format!("the simulator gave {} output bytes, the emulated device {}", sim.len(), dev.len()));
    }
    let n = usize::from(dtype.elem_size());
    let (mut diff, mut nans) = (Vec::new(), 0);
    for i in 0..sim.len() / n {
        let (a, b) = (&sim[i * n..(i + 1) * n], &dev[i * n..(i + 1) * n]);
        if a != b {
            if is_nan(dtype, a) && is_nan(dtype, b) {
                nans += 1;
            } else {
                diff.push(i);
            }
        }
    }
    if diff.is_empty() {
        return Ok(nans);
    }
    let mut s = format!("{} of {} elements differ between the simulator and the emulated device; the first:", diff.len(), sim.len() / n);
    for &i in diff.iter().take(SHOWN) {
        let e = |b: &[u8]| element(dtype, &b[i * n..(i + 1) * n]);
        s.push_str(&format!("\n  {} (flat {i}): simulator {}, device {}", index(shape, i as u64), e(sim), e(dev)));
    }
    Err(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bytes_agree_and_the_first_differences_are_named() {
        let a: Vec<u8> = [1.0f32, -0.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(compare(Dtype::Fp32, &[3], &a, &a), Ok(0));
        let b: Vec<u8> = [1.0f32, 0.0, 3.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let m = compare(Dtype::Fp32, &[1, 3], &a, &b).unwrap_err();
        assert!(m.starts_with("2 of 3 elements differ"), "{m}");
        assert!(m.contains("[0, 1] (flat 1): simulator -0.0 (0x80000000), device 0.0 (0x00000000)"), "{m}");
        assert!(m.contains("[0, 2] (flat 2): simulator 3.0"), "{m}");
        assert!(compare(Dtype::Int32, &[1], &[0; 4], &[0; 8]).unwrap_err().contains("4 output bytes"));
    }

    #[test]
    fn nans_agree_whatever_their_bits_and_are_counted() {
        // x86's default NaN (sign set) against the soft float's.
        let host: Vec<u8> = [f32::from_bits(0xffc0_0000), 2.0, f32::from_bits(0x7fc0_0001)].iter().flat_map(|v| v.to_le_bytes()).collect();
        let dev: Vec<u8> = [f32::from_bits(0x7fc0_0000), 2.0, f32::from_bits(0x7fc0_0001)].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(compare(Dtype::Fp32, &[3], &host, &dev), Ok(1));
        // A NaN against a number, or infinity, is a difference.
        let num: Vec<u8> = [0.0f32, 2.0, f32::INFINITY].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(compare(Dtype::Fp32, &[3], &host, &num).unwrap_err().starts_with("2 of 3 elements differ"));
        // The 16-bit types: 0xfe00 / 0x7e00 are NaNs, 0x7c00 (f16 inf) and
        // 0x7f80 (bf16 inf) are not.
        assert_eq!(compare(Dtype::Fp16, &[1], &0xfe00u16.to_le_bytes(), &0x7e00u16.to_le_bytes()), Ok(1));
        assert!(compare(Dtype::Fp16, &[1], &0xfe00u16.to_le_bytes(), &0x7c00u16.to_le_bytes()).is_err());
        assert_eq!(compare(Dtype::Bfloat16, &[1], &0xffc0u16.to_le_bytes(), &0x7fc0u16.to_le_bytes()), Ok(1));
        assert!(compare(Dtype::Bfloat16, &[1], &0xffc0u16.to_le_bytes(), &0x7f80u16.to_le_bytes()).is_err());
        // Integers have no NaN: every bit counts.
        assert!(compare(Dtype::Int32, &[1], &0xffc0_0000u32.to_le_bytes(), &0x7fc0_0000u32.to_le_bytes()).is_err());
    }

    #[test]
    fn a_dtype_that_does_not_marshal_is_refused_not_divided_by() {
        // INVALID has no element size: refused before any element is cut.
        assert_eq!(compare(Dtype::Invalid, &[1], &[1], &[2]), Err("the output's dtype INVALID (code 0) does not marshal".into()));
        assert!(compare(Dtype::Uint16, &[1], &[0; 2], &[0; 2]).is_err());
    }
}
