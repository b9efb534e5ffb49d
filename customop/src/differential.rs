//! `customop run --on both`: the simulator's output against the emulated
//! device's, bit for bit, with one exception: two NaNs agree whatever
//! their sign and payload. The host's arithmetic makes its default NaN
//! with the sign bit set (x86), the device's soft float without, so a
//! kernel that makes a NaN (`0.0 / 0.0`, `log` of a negative) would
//! otherwise never agree; the count of such elements is reported. Any
//! other difference, the sign of zero included, is one: the point is to
//! catch the device and the simulator computing differently.
//!
//! Where a kernel's numerics may differ by design, the user can give a
//! [`Tolerance`] (`--rtol`/`--atol`), with `torch.testing.assert_close`'s
//! rule: |device − simulator| ≤ atol + rtol·|simulator|. The verdict
//! always names the largest difference and where it is.

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

/// How close the two outputs must be; exact by default.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Tolerance {
    /// Relative: a fraction of the simulator's value.
    pub rtol: f64,
    /// Absolute.
    pub atol: f64,
}

impl Tolerance {
    /// Bit for bit (NaN for NaN).
    pub fn is_exact(&self) -> bool {
        self.rtol == 0.0 && self.atol == 0.0
    }

    /// Whether device value `dev` is close enough to simulator value `sim`.
    fn admits(&self, sim: f64, dev: f64) -> bool {
        if sim.is_infinite() || dev.is_infinite() {
            return sim == dev;
        }
        (dev - sim).abs() <= self.atol + self.rtol * sim.abs()
    }

    /// Whether `v` can be a tolerance: finite and ≥ 0.
    pub fn valid(v: f64) -> bool {
        v.is_finite() && v >= 0.0
    }

    /// A tolerance from the command line's values, each finite and ≥ 0.
    pub fn parse(value: &str, option: &str) -> Result<f64, String> {
        match value.parse::<f64>() {
            Ok(v) if Self::valid(v) => Ok(v),
            _ => Err(format!("{option} {value}: expected a number ≥ 0 (as torch.testing.assert_close takes, e.g. 1e-6)")),
        }
    }
}

/// How two outputs agree.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Agreement {
    /// Elements that are NaN on both sides with other bits.
    pub nans: usize,
    /// Elements that differ but are within the tolerance.
    pub within: usize,
    /// The largest difference of those, in words (None: none differ).
    pub largest: Option<String>,
}

/// Element `b` of `dtype` as a number, for the types that have one.
fn value(dtype: Dtype, b: &[u8]) -> Option<f64> {
    Some(match dtype {
        Dtype::Uint8 => f64::from(b[0]),
        Dtype::Int8 => f64::from(b[0] as i8),
        Dtype::Int16 => f64::from(i16::from_le_bytes([b[0], b[1]])),
        Dtype::Int32 => f64::from(i32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Dtype::Int64 => i64::from_le_bytes(b[..8].try_into().ok()?) as f64,
        Dtype::Fp32 => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        Dtype::Bfloat16 => f64::from(f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16)),
        Dtype::Fp16 => f16_value(u16::from_le_bytes([b[0], b[1]])),
        _ => return None,
    })
}

/// IEEE binary16 `h` as a number (subnormals, infinities and NaN included).
fn f16_value(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let (exp, frac) = (i32::from((h >> 10) & 0x1f), f64::from(h & 0x3ff));
    sign * match exp {
        0 => frac * 2f64.powi(-24),
        31 if frac == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        e => (1.0 + frac / 1024.0) * 2f64.powi(e - 15),
    }
}

/// `Ok` when `sim` and `dev` agree (bit for bit, NaN for NaN, or within
/// `tol`), else `Err` with the number of differing elements, the largest
/// difference and the first [`SHOWN`] of them.
pub fn compare(dtype: Dtype, shape: &[u64], sim: &[u8], dev: &[u8], tol: Tolerance) -> Result<Agreement, String> {
    if !dtype.marshals() {
        return Err(format!("the output's dtype {} (code {}) does not marshal", dtype.name(), dtype.code()));
    }
    if sim == dev {
        return Ok(Agreement::default());
    }
    if sim.len() != dev.len() {
        return Err(format!("the simulator gave {} output bytes, the emulated device {}", sim.len(), dev.len()));
    }
    let n = usize::from(dtype.elem_size());
    let (mut diff, mut nans, mut within) = (Vec::new(), 0, 0);
    // The largest difference: (|d|, element) of the elements that differ.
    let mut largest: Option<(f64, usize)> = None;
    for i in 0..sim.len() / n {
        let (a, b) = (&sim[i * n..(i + 1) * n], &dev[i * n..(i + 1) * n]);
        if a != b {
            if is_nan(dtype, a) && is_nan(dtype, b) {
                nans += 1;
                continue;
            }
            let (x, y) = (value(dtype, a), value(dtype, b));
            if let (Some(x), Some(y)) = (x, y) {
                let d = if x.is_nan() || y.is_nan() { f64::INFINITY } else { (y - x).abs() };
                if largest.is_none_or(|(m, _)| d > m) {
                    largest = Some((d, i));
                }
            }
            match (x, y) {
                (Some(x), Some(y)) if !tol.is_exact() && tol.admits(x, y) => within += 1,
                _ => diff.push(i),
            }
        }
    }
    let e = |buf: &[u8], i: usize| element(dtype, &buf[i * n..(i + 1) * n]);
    let largest = largest.map(|(d, i)| format!("{d:e} at {} (flat {i}): simulator {}, device {}", index(shape, i as u64), e(sim, i), e(dev, i)));
    if diff.is_empty() {
        return Ok(Agreement { nans, within, largest });
    }
    let beyond = if tol.is_exact() { String::new() } else { format!(" beyond --rtol {} --atol {}", tol.rtol, tol.atol) };
    let mut s = format!("{} of {} elements differ between the simulator and the emulated device{beyond}", diff.len(), sim.len() / n);
    if let Some(l) = &largest {
        s.push_str(&format!("; the largest difference is {l}"));
    }
    s.push_str("; the first:");
    for &i in diff.iter().take(SHOWN) {
        s.push_str(&format!("\n  {} (flat {i}): simulator {}, device {}", index(shape, i as u64), e(sim, i), e(dev, i)));
    }
    if tol.is_exact() {
        s.push_str("\n(the two are compared bit for bit; where the kernel's numerics may differ by design, --rtol/--atol give a tolerance)");
    }
    Err(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `compare` bit for bit: the NaNs that differ only in their bits.
    fn exact(dtype: Dtype, shape: &[u64], sim: &[u8], dev: &[u8]) -> Result<usize, String> {
        compare(dtype, shape, sim, dev, Tolerance::default()).map(|a| a.nans)
    }

    fn f32s(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_le_bytes()).collect()
    }

    #[test]
    fn a_tolerance_admits_what_assert_close_admits_and_names_the_largest_difference() {
        let sim = f32s(&[1.0, 100.0, 0.0, f32::INFINITY]);
        let dev = f32s(&[1.0 + 1e-6, 100.0 + 1e-4, 2e-7, f32::INFINITY]);
        // Exact: three elements differ.
        assert!(compare(Dtype::Fp32, &[4], &sim, &dev, Tolerance::default()).unwrap_err().starts_with("3 of 4 elements differ"));
        // rtol 2e-6 admits the first two, atol 1e-6 the third.
        let a = compare(Dtype::Fp32, &[4], &sim, &dev, Tolerance { rtol: 2e-6, atol: 1e-6 }).unwrap();
        assert_eq!(a.within, 3);
        assert!(a.largest.as_deref().is_some_and(|l| l.contains("at [1] (flat 1)")), "{a:?}");
        // Too tight: named with its bounds.
        let m = compare(Dtype::Fp32, &[4], &sim, &dev, Tolerance { rtol: 1e-9, atol: 0.0 }).unwrap_err();
        assert!(m.starts_with("3 of 4 elements differ between the simulator and the emulated device beyond --rtol 0.000000001 --atol 0"), "{m}");
        // An infinity only matches itself; a NaN against a number never.
        let inf = f32s(&[f32::NEG_INFINITY]);
        assert!(compare(Dtype::Fp32, &[1], &f32s(&[f32::INFINITY]), &inf, Tolerance { rtol: 1.0, atol: 1e30 }).is_err());
        assert!(compare(Dtype::Fp32, &[1], &f32s(&[f32::NAN]), &f32s(&[1.0]), Tolerance { rtol: 1.0, atol: 1e30 }).is_err());
        // f16 values are compared as numbers: 1.0 (0x3c00) and 1.0009765625 (0x3c01).
        let t = Tolerance { rtol: 1e-3, atol: 0.0 };
        assert_eq!(compare(Dtype::Fp16, &[1], &0x3c00u16.to_le_bytes(), &0x3c01u16.to_le_bytes(), t).map(|a| a.within), Ok(1));
        assert!(Tolerance::parse("-1", "--rtol").is_err() && Tolerance::parse("inf", "--atol").is_err());
        assert_eq!(Tolerance::parse("1e-6", "--rtol"), Ok(1e-6));
    }

    #[test]
    fn equal_bytes_agree_and_the_first_differences_are_named() {
        let a: Vec<u8> = [1.0f32, -0.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(compare(Dtype::Fp32, &[3], &a, &a, Tolerance::default()), Ok(Agreement::default()));
        let b: Vec<u8> = [1.0f32, 0.0, 3.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let m = compare(Dtype::Fp32, &[1, 3], &a, &b, Tolerance::default()).unwrap_err();
        assert!(m.starts_with("2 of 3 elements differ"), "{m}");
        assert!(m.contains("[0, 1] (flat 1): simulator -0.0 (0x80000000), device 0.0 (0x00000000)"), "{m}");
        assert!(m.contains("[0, 2] (flat 2): simulator 3.0"), "{m}");
        assert!(m.contains("the largest difference is 5e-1 at [0, 2] (flat 2)"), "{m}");
        assert!(compare(Dtype::Int32, &[1], &[0; 4], &[0; 8], Tolerance::default()).unwrap_err().contains("4 output bytes"));
    }

    #[test]
    fn nans_agree_whatever_their_bits_and_are_counted() {
        // x86's default NaN (sign set) against the soft float's.
        let host: Vec<u8> = [f32::from_bits(0xffc0_0000), 2.0, f32::from_bits(0x7fc0_0001)].iter().flat_map(|v| v.to_le_bytes()).collect();
        let dev: Vec<u8> = [f32::from_bits(0x7fc0_0000), 2.0, f32::from_bits(0x7fc0_0001)].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(compare(Dtype::Fp32, &[3], &host, &dev, Tolerance::default()).map(|a| a.nans), Ok(1));
        // A NaN against a number, or infinity, is a difference.
        let num: Vec<u8> = [0.0f32, 2.0, f32::INFINITY].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert!(compare(Dtype::Fp32, &[3], &host, &num, Tolerance::default()).unwrap_err().starts_with("2 of 3 elements differ"));
        // The 16-bit types: 0xfe00 / 0x7e00 are NaNs, 0x7c00 (f16 inf) and
        // 0x7f80 (bf16 inf) are not.
        assert_eq!(exact(Dtype::Fp16, &[1], &0xfe00u16.to_le_bytes(), &0x7e00u16.to_le_bytes()), Ok(1));
        assert!(exact(Dtype::Fp16, &[1], &0xfe00u16.to_le_bytes(), &0x7c00u16.to_le_bytes()).is_err());
        assert_eq!(exact(Dtype::Bfloat16, &[1], &0xffc0u16.to_le_bytes(), &0x7fc0u16.to_le_bytes()), Ok(1));
        assert!(exact(Dtype::Bfloat16, &[1], &0xffc0u16.to_le_bytes(), &0x7f80u16.to_le_bytes()).is_err());
        // Integers have no NaN: every bit counts.
        assert!(exact(Dtype::Int32, &[1], &0xffc0_0000u32.to_le_bytes(), &0x7fc0_0000u32.to_le_bytes()).is_err());
    }

    #[test]
    fn a_dtype_that_does_not_marshal_is_refused_not_divided_by() {
        // INVALID has no element size: refused before any element is cut.
        assert_eq!(exact(Dtype::Invalid, &[1], &[1], &[2]), Err("the output's dtype INVALID (code 0) does not marshal".into()));
        assert!(exact(Dtype::Uint16, &[1], &[0; 2], &[0; 2]).is_err());
    }
}
