//! `customop run --on both`: the simulator's output against the emulated
//! device's, bit for bit (a float that differs only in a NaN payload or
//! the sign of zero is a difference: the point is to catch the device and
//! the simulator computing differently).

use crate::npy::Dtype;

/// How many differing elements a message lists.
pub const SHOWN: usize = 8;

/// One element as text: its bits and, for the types with a plain value,
/// the value.
fn element(dtype: Dtype, b: &[u8]) -> String {
    let bits = b.iter().rev().map(|x| format!("{x:02x}")).collect::<String>();
    let value = match dtype {
        Dtype::U8 => b[0].to_string(),
        Dtype::I8 => (b[0] as i8).to_string(),
        Dtype::I16 => i16::from_le_bytes([b[0], b[1]]).to_string(),
        Dtype::I32 => i32::from_le_bytes([b[0], b[1], b[2], b[3]]).to_string(),
        Dtype::I64 => i64::from_le_bytes(b[..8].try_into().expect("8 bytes")).to_string(),
        Dtype::F32 => format!("{:?}", f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        // bf16 is the top half of an f32.
        Dtype::Bf16 => format!("{:?}", f32::from_bits(u32::from(u16::from_le_bytes([b[0], b[1]])) << 16)),
        Dtype::F16 => return format!("0x{bits}"),
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

/// `None` when `sim` and `dev` are the same bytes, else a message with the
/// number of differing elements and the first [`SHOWN`] of them.
pub fn compare(dtype: Dtype, shape: &[u64], sim: &[u8], dev: &[u8]) -> Option<String> {
    if sim == dev {
        return None;
    }
    if sim.len() != dev.len() {
        return Some(format!("the simulator gave {} output bytes, the emulated device {}", sim.len(), dev.len()));
    }
    let n = dtype.size();
    let diff: Vec<usize> = (0..sim.len() / n).filter(|&i| sim[i * n..(i + 1) * n] != dev[i * n..(i + 1) * n]).collect();
    let mut s = format!("{} of {} elements differ between the simulator and the emulated device; the first:", diff.len(), sim.len() / n);
    for &i in diff.iter().take(SHOWN) {
        let e = |b: &[u8]| element(dtype, &b[i * n..(i + 1) * n]);
        s.push_str(&format!("\n  {} (flat {i}): simulator {}, device {}", index(shape, i as u64), e(sim), e(dev)));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_bytes_agree_and_the_first_differences_are_named() {
        let a: Vec<u8> = [1.0f32, -0.0, 3.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(compare(Dtype::F32, &[3], &a, &a), None);
        let b: Vec<u8> = [1.0f32, 0.0, 3.5].iter().flat_map(|v| v.to_le_bytes()).collect();
        let m = compare(Dtype::F32, &[1, 3], &a, &b).unwrap();
        assert!(m.starts_with("2 of 3 elements differ"), "{m}");
        assert!(m.contains("[0, 1] (flat 1): simulator -0.0 (0x80000000), device 0.0 (0x00000000)"), "{m}");
        assert!(m.contains("[0, 2] (flat 2): simulator 3.0"), "{m}");
        assert!(compare(Dtype::I32, &[1], &[0; 4], &[0; 8]).unwrap().contains("4 output bytes"));
    }
}
