//! `.npy` files (NumPy format versions 1.0 to 3.0), for the eight
//! marshallable dtypes, little endian, C order.
//!
//! Written here rather than taken from a crate: the format is a magic, a
//! version, a header dict and raw bytes, and the one thing a crate would
//! have to be taught anyway is bfloat16, which NumPy has no descr for.
//! The convention (documented in `docs/kernel-guide.md`): a bf16 tensor is
//! a file of descr `<u2` holding the bf16 bit patterns (uint16 does not
//! marshal, so the reading is unambiguous); `<V2`/`|V2` (what `np.save`
//! writes for an `ml_dtypes.bfloat16` array) is read as bf16 too. A bf16
//! output is written as `<u2`: `np.load(f).view(ml_dtypes.bfloat16)`.

use crate::error::{Error, ErrorKind, Result};
use std::path::Path;

/// The ISA dtype codes (SPEC §6) of the eight marshallable dtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// u8, code 2.
    U8,
    /// i8, code 3.
    I8,
    /// i16, code 4.
    I16,
    /// i32, code 6.
    I32,
    /// i64, code 7.
    I64,
    /// IEEE half, code 8.
    F16,
    /// bfloat16, code 10.
    Bf16,
    /// f32, code 12.
    F32,
}

impl Dtype {
    /// The ISA code.
    pub fn code(self) -> u8 {
        match self {
            Self::U8 => 2,
            Self::I8 => 3,
            Self::I16 => 4,
            Self::I32 => 6,
            Self::I64 => 7,
            Self::F16 => 8,
            Self::Bf16 => 10,
            Self::F32 => 12,
        }
    }

    /// The dtype of ISA code `c`.
    pub fn from_code(c: u8) -> Option<Self> {
        [Self::U8, Self::I8, Self::I16, Self::I32, Self::I64, Self::F16, Self::Bf16, Self::F32].into_iter().find(|d| d.code() == c)
    }

    /// Bytes per element.
    pub fn size(self) -> usize {
        match self {
            Self::U8 | Self::I8 => 1,
            Self::I16 | Self::F16 | Self::Bf16 => 2,
            Self::I32 | Self::F32 => 4,
            Self::I64 => 8,
        }
    }

    /// The descr this tool writes.
    pub fn descr(self) -> &'static str {
        match self {
            Self::U8 => "|u1",
            Self::I8 => "|i1",
            Self::I16 => "<i2",
            Self::I32 => "<i4",
            Self::I64 => "<i8",
            Self::F16 => "<f2",
            Self::Bf16 => "<u2",
            Self::F32 => "<f4",
        }
    }

    /// The dtype a descr reads as, if it is one of the eight.
    pub fn from_descr(d: &str) -> Option<Self> {
        Some(match d {
            "|u1" | "<u1" | "u1" => Self::U8,
            "|i1" | "<i1" | "i1" => Self::I8,
            "<i2" => Self::I16,
            "<i4" => Self::I32,
            "<i8" => Self::I64,
            "<f2" => Self::F16,
            "<u2" | "<V2" | "|V2" => Self::Bf16,
            "<f4" => Self::F32,
            _ => return None,
        })
    }
}

/// A tensor in memory: dtype, shape, little-endian bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The element type.
    pub dtype: Dtype,
    /// The shape, outermost first (at least one dimension).
    pub shape: Vec<u64>,
    /// `numel * dtype.size()` bytes, C order.
    pub data: Vec<u8>,
}

impl Array {
    /// An array from f32 values.
    pub fn from_f32(shape: &[u64], v: &[f32]) -> Self {
        Self { dtype: Dtype::F32, shape: shape.to_vec(), data: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
    }

    /// The elements as f32 (F32 arrays).
    pub fn to_f32(&self) -> Vec<f32> {
        self.data.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect()
    }

    /// The number of elements.
    pub fn numel(&self) -> u64 {
        self.shape.iter().product()
    }
}

fn bad(path: &Path, what: impl std::fmt::Display) -> Error {
    Error::new(ErrorKind::BadInput, format!("{}: not a usable .npy file: {what}", path.display()))
}

const MAGIC: &[u8] = b"\x93NUMPY";

/// Parses `.npy` bytes (`path` names them in messages).
pub fn parse(path: &Path, b: &[u8]) -> Result<Array> {
    if b.len() < 10 || &b[..6] != MAGIC {
        return Err(bad(path, "no NumPy magic"));
    }
    let (len, start) = match b[6] {
        1 => (u16::from_le_bytes([b[8], b[9]]) as usize, 10),
        2 | 3 if b.len() >= 12 => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        v => return Err(bad(path, format!("format version {v} is not supported"))),
    };
    let header = b.get(start..start + len).ok_or_else(|| bad(path, "header runs past the end"))?;
    let header = std::str::from_utf8(header).map_err(|_| bad(path, "header is not text"))?;
    let descr = dict_str(header, "descr").ok_or_else(|| bad(path, "header has no 'descr'"))?;
    let dtype = Dtype::from_descr(&descr)
        .ok_or_else(|| bad(path, format!("dtype '{descr}' does not marshal (accepted: u1 i1 i2 i4 i8 f2 f4 little endian, and bfloat16 as <u2 bits)")))?;
    if dict_raw(header, "fortran_order").is_some_and(|v| v.starts_with("True")) {
        return Err(bad(path, "Fortran order is not supported (save a C-contiguous array)"));
    }
    let shape = dict_raw(header, "shape").ok_or_else(|| bad(path, "header has no 'shape'"))?;
    let shape = parse_shape(shape).ok_or_else(|| bad(path, "malformed 'shape'"))?;
    if shape.is_empty() {
        return Err(bad(path, "a 0-d array is not a tensor argument (pass a number for a scalar)"));
    }
    if shape.len() > 8 || shape.contains(&0) {
        return Err(bad(path, format!("shape {shape:?}: a tensor has 1 to 8 dimensions, none of them 0")));
    }
    let numel = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).ok_or_else(|| bad(path, "shape overflows"))?;
    let bytes = numel.checked_mul(dtype.size() as u64).ok_or_else(|| bad(path, "shape overflows"))? as usize;
    let data = &b[start + len..];
    if data.len() != bytes {
        return Err(bad(path, format!("shape {shape:?} of {descr} needs {bytes} data bytes, the file has {}", data.len())));
    }
    Ok(Array { dtype, shape, data: data.to_vec() })
}

/// Reads a `.npy` file.
pub fn read(path: &Path) -> Result<Array> {
    let b = std::fs::read(path).map_err(|e| Error::io("read", path, e))?;
    parse(path, &b)
}

/// The `.npy` bytes of `a` (format 1.0; header padded to 64 bytes).
pub fn render(a: &Array) -> Vec<u8> {
    let dims: Vec<String> = a.shape.iter().map(u64::to_string).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut h = format!("{{'descr': '{}', 'fortran_order': False, 'shape': {shape}, }}", a.dtype.descr());
    while !(MAGIC.len() + 4 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + h.len() + a.data.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    out.extend_from_slice(&a.data);
    out
}

/// Writes `a` to `path` atomically: a failed write (a full disk) leaves
/// the previous file as it was.
pub fn write(path: &Path, a: &Array) -> Result<()> {
    crate::atomic::write(path, &render(a))
}

/// The text after `'key':` in a header dict.
fn dict_raw<'a>(h: &'a str, key: &str) -> Option<&'a str> {
    let k = h.find(&format!("'{key}'")).or_else(|| h.find(&format!("\"{key}\"")))?;
    let rest = &h[k + key.len() + 2..];
    Some(rest.trim_start().strip_prefix(':')?.trim_start())
}

/// A quoted string value.
fn dict_str(h: &str, key: &str) -> Option<String> {
    let v = dict_raw(h, key)?;
    let q = v.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let end = v[1..].find(q)?;
    Some(v[1..1 + end].to_owned())
}

/// `(2, 3)`, `(5,)`, `()`.
fn parse_shape(v: &str) -> Option<Vec<u64>> {
    let inner = v.strip_prefix('(')?;
    let inner = &inner[..inner.find(')')?];
    inner.split(',').map(str::trim).filter(|s| !s.is_empty()).map(|s| s.trim_end_matches('L').parse().ok()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_pads_the_header() {
        let a = Array::from_f32(&[2, 3], &[1.0, -2.0, 3.5, 0.0, 5.0, 6.0]);
        let b = render(&a);
        assert_eq!((b[8] as usize + 10) % 64, 0);
        assert_eq!(parse(Path::new("x.npy"), &b).unwrap(), a);
        let one = Array { dtype: Dtype::Bf16, shape: vec![3], data: vec![0; 6] };
        let b = render(&one);
        assert!(String::from_utf8_lossy(&b).contains("'descr': '<u2', 'fortran_order': False, 'shape': (3,), }"));
        assert_eq!(parse(Path::new("x.npy"), &b).unwrap(), one);
    }

    #[test]
    fn refuses_what_does_not_marshal() {
        let mut b = render(&Array::from_f32(&[2], &[1.0, 2.0]));
        let e = parse(Path::new("t.npy"), &b[..b.len() - 1]).unwrap_err();
        assert!(e.message.contains("needs 8 data bytes, the file has 7"), "{e}");
        let at = b.windows(3).position(|w| w == b"<f4").unwrap();
        b[at..at + 3].copy_from_slice(b"<f8");
        let e = parse(Path::new("t.npy"), &b).unwrap_err();
        assert!(e.message.contains("t.npy") && e.message.contains("'<f8' does not marshal"), "{e}");
        assert!(parse(Path::new("t.npy"), b"hello world").is_err());
    }
}
