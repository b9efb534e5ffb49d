//! `.npy` files (NumPy format versions 1.0 to 3.0), for the eight
//! marshallable dtypes, little endian, C order.
//!
//! The one codec of the project: `customop` (which adds reading and
//! writing files) and `xtask` use it.
//!
//! Written here rather than taken from a crate: the format is a magic, a
//! version, a header dict and raw bytes, and the one thing a crate would
//! have to be taught anyway is bfloat16, which NumPy has no descr for.
//! The convention (documented in `docs/kernel-guide.md`): a bf16 tensor is
//! a file of descr `<u2` holding the bf16 bit patterns (uint16 does not
//! marshal, so the reading is unambiguous); `<V2`/`|V2` (what `np.save`
//! writes for an `ml_dtypes.bfloat16` array) is read as bf16 too. A bf16
//! output is written as `<u2`: `np.load(f).view(ml_dtypes.bfloat16)`.

mod header;

/// The dtype: the runtime's ISA table (SPEC §6), the one definition.
/// The codec takes any code and refuses, with an error, one that does
/// not marshal.
pub use neuron_runtime::marshal::dtype::Dtype;

/// The descr this tool writes for `d`, or why it cannot be written.
pub fn descr(d: Dtype) -> Result<&'static str, String> {
    Ok(match d {
        Dtype::Uint8 => "|u1",
        Dtype::Int8 => "|i1",
        Dtype::Int16 => "<i2",
        Dtype::Int32 => "<i4",
        Dtype::Int64 => "<i8",
        Dtype::Fp16 => "<f2",
        Dtype::Bfloat16 => "<u2",
        Dtype::Fp32 => "<f4",
        Dtype::Invalid | Dtype::Uint64 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Fp32R | Dtype::Fp8Exp3 | Dtype::Fp8Exp4 | Dtype::Fp8Exp5 => {
            return Err(format!("dtype {} (code {}) does not marshal: no .npy file holds it", d.name(), d.code()))
        }
    })
}

/// Why a descr that does not marshal is refused: its NumPy name, what the
/// kernel takes, and the conversion to a near dtype that does.
pub fn refused_descr(descr: &str) -> String {
    let (name, to) = match descr.trim_start_matches(['<', '|', '=']) {
        "f8" => ("float64", Some("float32")),
        "f16" | "f12" => ("longdouble", Some("float32")),
        "b1" => ("bool", Some("uint8")),
        "u4" => ("uint32", Some("int64")),
        "u8" => ("uint64", Some("int64")),
        "c8" => ("complex64", None),
        "c16" => ("complex128", None),
        _ if descr.starts_with('>') => ("a big-endian dtype", None),
        _ => ("", None),
    };
    let what = if name.is_empty() { format!("dtype '{descr}'") } else { format!("dtype {name} ('{descr}')") };
    let fix = match (to, descr.starts_with('>')) {
        (Some(to), _) => format!("; convert it with x.astype(np.{to}) (torch: x.to(torch.{to}))"),
        (None, true) => "; save it little-endian: x.astype(x.dtype.newbyteorder('<'))".to_string(),
        (None, false) if name.starts_with("complex") => "; pass the real and imaginary parts as two float32 arrays (x.real, x.imag)".to_string(),
        (None, false) => String::new(),
    };
    format!("{what} does not marshal: the kernel takes uint8, int8, int16, int32, int64, float16, bfloat16 (as <u2 bits) or float32, little-endian{fix}")
}

/// The dtype a descr reads as, if it is one of the eight that marshal.
pub fn from_descr(d: &str) -> Option<Dtype> {
    Some(match d {
        "|u1" | "<u1" | "u1" => Dtype::Uint8,
        "|i1" | "<i1" | "i1" => Dtype::Int8,
        "<i2" => Dtype::Int16,
        "<i4" => Dtype::Int32,
        "<i8" => Dtype::Int64,
        "<f2" => Dtype::Fp16,
        "<u2" | "<V2" | "|V2" => Dtype::Bfloat16,
        "<f4" => Dtype::Fp32,
        _ => return None,
    })
}

/// A tensor in memory: dtype, shape, little-endian bytes.
#[derive(Clone, Debug, PartialEq)]
pub struct Array {
    /// The element type.
    pub dtype: Dtype,
    /// The shape, outermost first (at least one dimension).
    pub shape: Vec<u64>,
    /// `numel * dtype.elem_size()` bytes, C order.
    pub data: Vec<u8>,
}

impl Array {
    /// An array from f32 values.
    pub fn from_f32(shape: &[u64], v: &[f32]) -> Self {
        Self { dtype: Dtype::Fp32, shape: shape.to_vec(), data: v.iter().flat_map(|x| x.to_le_bytes()).collect() }
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

pub const MAGIC: &[u8] = b"\x93NUMPY";

/// What a `.npy` header says: the dtype, the shape, and where the data
/// starts (its length is the shape's elements times the dtype's size).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The element type.
    pub dtype: Dtype,
    /// The dimensions.
    pub shape: Vec<u64>,
    /// The data's offset in the file.
    pub offset: usize,
    /// The data's length in bytes.
    pub bytes: u64,
}

/// Reads the header at the start of `b` (at least its first bytes up to
/// the data; the data need not be there); the error says what is wrong.
pub fn parse_header(b: &[u8]) -> std::result::Result<Layout, String> {
    if b.len() < 10 || &b[..6] != MAGIC {
        return Err("no NumPy magic".into());
    }
    let (len, start): (usize, usize) = match (b[6], b[7]) {
        (1, 0) => (u16::from_le_bytes([b[8], b[9]]).into(), 10),
        (2 | 3, 0) if b.len() < 12 => return Err("header runs past the end".into()),
        (2 | 3, 0) => (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12),
        (major, minor) => return Err(format!("format version {major}.{minor} is not one of 1.0, 2.0, 3.0")),
    };
    let header = b.get(start..start.saturating_add(len)).ok_or("header runs past the end")?;
    let header = std::str::from_utf8(header).map_err(|_| "header is not text")?;
    let h = header::parse(header)?;
    let descr = h.descr;
    let dtype = from_descr(&descr).ok_or_else(|| refused_descr(&descr))?;
    if h.fortran_order {
        return Err("Fortran order is not supported (save a C-contiguous array)".into());
    }
    let shape = h.shape;
    if shape.is_empty() {
        return Err("a 0-d array is not a tensor argument (pass a number for a scalar)".into());
    }
    if shape.len() > 8 || shape.contains(&0) {
        return Err(format!("shape {shape:?}: a tensor has 1 to 8 dimensions, none of them 0"));
    }
    let numel = shape.iter().try_fold(1u64, |a, &d| a.checked_mul(d)).ok_or("shape overflows")?;
    let bytes = numel.checked_mul(u64::from(dtype.elem_size())).ok_or("shape overflows")?;
    Ok(Layout { dtype, shape, offset: start + len, bytes })
}

/// Checks that `file_len` bytes hold exactly the data `l` describes.
pub fn check_length(l: &Layout, file_len: u64) -> std::result::Result<(), String> {
    let have = file_len.saturating_sub(l.offset as u64);
    if have != l.bytes {
        let dtype = descr(l.dtype).unwrap_or(l.dtype.name());
        return Err(format!("shape {:?} of {dtype} needs {} data bytes, the file has {have}", l.shape, l.bytes));
    }
    Ok(())
}

/// Parses `.npy` bytes; the error says what is wrong.
pub fn parse_bytes(b: &[u8]) -> std::result::Result<Array, String> {
    let l = parse_header(b)?;
    check_length(&l, b.len() as u64)?;
    Ok(Array { dtype: l.dtype, shape: l.shape, data: b[l.offset..].to_vec() })
}

/// The `.npy` header of an array of `dtype` and `shape` (format 1.0;
/// padded to 64 bytes): the data follows it. Refused for a dtype that
/// does not marshal.
pub fn render_header(dtype: Dtype, shape: &[u64]) -> std::result::Result<Vec<u8>, String> {
    let descr = descr(dtype)?;
    let dims: Vec<String> = shape.iter().map(u64::to_string).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    while !(MAGIC.len() + 4 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + h.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&(h.len() as u16).to_le_bytes());
    out.extend_from_slice(h.as_bytes());
    Ok(out)
}

/// The `.npy` bytes of `a` (refused for a dtype that does not marshal).
pub fn render(a: &Array) -> std::result::Result<Vec<u8>, String> {
    let mut out = render_header(a.dtype, &a.shape)?;
    out.reserve_exact(a.data.len());
    out.extend_from_slice(&a.data);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_pads_the_header() {
        let a = Array::from_f32(&[2, 3], &[1.0, -2.0, 3.5, 0.0, 5.0, 6.0]);
        let b = render(&a).unwrap();
        assert_eq!((b[8] as usize + 10) % 64, 0);
        assert_eq!(parse_bytes(&b).unwrap(), a);
        let one = Array { dtype: Dtype::Bfloat16, shape: vec![3], data: vec![0; 6] };
        let b = render(&one).unwrap();
        assert!(String::from_utf8_lossy(&b).contains("'descr': '<u2', 'fortran_order': False, 'shape': (3,), }"));
        assert_eq!(parse_bytes(&b).unwrap(), one);
    }

    #[test]
    fn refuses_what_does_not_marshal() {
        let mut b = render(&Array::from_f32(&[2], &[1.0, 2.0])).unwrap();
        let e = parse_bytes(&b[..b.len() - 1]).unwrap_err();
        assert!(e.contains("needs 8 data bytes, the file has 7"), "{e}");
        let at = b.windows(3).position(|w| w == b"<f4").unwrap();
        b[at..at + 3].copy_from_slice(b"<f8");
        let e = parse_bytes(&b).unwrap_err();
        assert!(e.contains("dtype float64 ('<f8') does not marshal") && e.contains("convert it with x.astype(np.float32) (torch: x.to(torch.float32))"), "{e}");
        let at = b.windows(3).position(|w| w == b"<f8").unwrap();
        b[at..at + 3].copy_from_slice(b"|b1");
        let e = parse_bytes(&b).unwrap_err();
        assert!(e.contains("dtype bool ('|b1')") && e.contains("x.astype(np.uint8)"), "{e}");
        assert!(parse_bytes(b"hello world").is_err());
    }

    #[test]
    fn writes_exactly_the_dtypes_that_marshal() {
        for d in Dtype::ALL {
            let a = Array { dtype: d, shape: vec![1], data: vec![0; usize::from(d.elem_size())] };
            match render(&a) {
                Ok(b) => assert_eq!((d.marshals(), parse_bytes(&b).map(|a| a.dtype)), (true, Ok(d))),
                Err(e) => assert!(!d.marshals() && e.contains(&format!("dtype {} (code {}) does not marshal", d.name(), d.code())), "{e}"),
            }
        }
    }

    fn with_header(h: &str) -> Vec<u8> {
        let mut b = MAGIC.to_vec();
        b.extend_from_slice(&[1, 0]);
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(&[0; 8]);
        b
    }

    #[test]
    fn the_header_is_read_as_the_python_literal_numpy_reads() {
        let ok = |h: &str| parse_bytes(&with_header(h)).map(|a| a.shape);
        assert_eq!(ok("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }   \n"), Ok(vec![2]));
        assert_eq!(ok("{\"shape\": (1, 2), \"descr\": \"<f4\", \"fortran_order\": False}\n"), Ok(vec![1, 2]));
        let err = |h: &str| parse_bytes(&with_header(h)).unwrap_err();
        assert!(err("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'shape': (1,)}").contains("'shape' appears twice"));
        assert!(err("{'descr': '<f4', 'fortran_order': 1, 'shape': (2,)}").contains("'fortran_order' must be True or False"));
        assert!(err("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}").contains("unknown key 'extra'"));
        assert!(err("{'descr': '<f4', 'shape': (2,)}").contains("no 'fortran_order'"));
        assert!(err("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} x").contains("after the dict"));
        assert!(err("{'descr': '<f4', 'fortran_order': False, 'shape': (-2,)}").contains("shape"));
        let mut v = with_header("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)}");
        v[7] = 1;
        assert!(parse_bytes(&v).unwrap_err().contains("format version 1.1"));
    }
}
