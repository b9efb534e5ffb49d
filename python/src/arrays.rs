//! NumPy arrays in and out.
//!
//! In: anything `numpy.asarray` takes (an ndarray, a CPU `torch.Tensor`
//! through its array interface, a nested list), of the eight dtypes that
//! marshal. A non-contiguous array (a transposed or sliced view) is
//! accepted and gathered into C order: every tensor argument is copied
//! into simulated HBM anyway, so the gather is that copy, and the kernel
//! sees the logical values in the row-major layout it indexes. The same
//! holds for a big-endian array, whose bytes are swapped in the copy.
//!
//! bfloat16: NumPy has no such dtype. An `ml_dtypes.bfloat16` array is
//! accepted, and so is a `uint16` array holding bf16 bit patterns (uint16
//! does not marshal, so the reading is unambiguous, as in `.npy` files).
//! A bf16 output is an `ml_dtypes.bfloat16` array where `ml_dtypes` is
//! installed, else a `uint16` array of the bit patterns.

use crate::errors::bad_input;
use customop::npy::{Array, Dtype};
use customop::Result;
use numpy::npyffi::{get_type_object, npy_intp, NpyTypes, PY_ARRAY_API};
use numpy::{PyArray1, PyArrayDescr, PyArrayDescrMethods, PyUntypedArray, PyUntypedArrayMethods};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBytes, PyTuple};

/// The dtype names accepted, for messages.
pub const ACCEPTED: &str = "uint8 int8 int16 int32 int64 float16 float32, and bfloat16 (ml_dtypes.bfloat16, or uint16 bit patterns)";

/// The marshalled dtype of a NumPy dtype name (the runtime's
/// `Dtype::user_name`); `uint16` is bfloat16's bit patterns.
fn dtype_of(name: &str) -> Option<Dtype> {
    if name == "uint16" {
        return Some(Dtype::Bfloat16);
    }
    Dtype::ALL.into_iter().find(|d| d.marshals() && d.user_name() == name)
}

/// The name of NumPy's built-in type number `num` among those that
/// marshal (and uint16, bfloat16's bit patterns), as `dtype.name` says it.
fn builtin_name(num: std::ffi::c_int) -> Option<&'static str> {
    use numpy::npyffi::types::NPY_TYPES as T;
    let long_bits = 8 * std::mem::size_of::<std::ffi::c_long>();
    Some(match num {
        n if n == T::NPY_UBYTE as i32 => "uint8",
        n if n == T::NPY_BYTE as i32 => "int8",
        n if n == T::NPY_SHORT as i32 => "int16",
        n if n == T::NPY_USHORT as i32 => "uint16",
        n if n == T::NPY_INT as i32 => "int32",
        n if n == T::NPY_LONG as i32 && long_bits == 64 => "int64",
        n if n == T::NPY_LONGLONG as i32 => "int64",
        n if n == T::NPY_HALF as i32 => "float16",
        n if n == T::NPY_FLOAT as i32 => "float32",
        _ => return None,
    })
}

/// A hint for a dtype that does not marshal but has a near one.
fn hint(name: &str) -> &'static str {
    match name {
        "float64" => ": convert with .astype(numpy.float32) (no dtype wider than 32-bit floats marshals)",
        "bool" => ": convert with .astype(numpy.uint8)",
        "uint32" | "uint64" => ": convert to a signed integer dtype",
        _ => "",
    }
}

/// Tensor argument `what` from `obj`.
pub fn from_python(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Result<Array>> {
    with_bytes(obj, what, |dtype, shape, bytes| Ok(Array { dtype, shape, data: bytes.to_vec() }))
}

/// Tensor argument `what` from `obj`, given to `f` as its dtype, shape
/// and little-endian C-ordered bytes: the array's own memory when it is
/// laid out so (no copy here: `f` makes the one copy), else a gathered
/// copy. Called with the GIL held, so no Python thread changes the bytes
/// meanwhile.
pub fn with_bytes<R>(obj: &Bound<'_, PyAny>, what: &str, f: impl FnOnce(Dtype, Vec<u64>, &[u8]) -> Result<R>) -> PyResult<Result<R>> {
    let py = obj.py();
    // An ndarray itself (the usual argument) as it is: numpy.asarray would
    // give it back, at the cost of a Python call (issue 28: a small call's
    // fixed cost).
    let arr = match obj.cast_exact::<PyUntypedArray>() {
        Ok(a) => a.clone(),
        Err(_) => {
            let arr = match py.import("numpy")?.call_method1("asarray", (obj,)) {
                Ok(a) => a,
                Err(e) => return Ok(Err(bad_input(format!("{what} is a tensor: {} is not an array ({e})", type_name(obj))))),
            };
            let Ok(arr) = arr.cast_into::<PyUntypedArray>() else {
                return Ok(Err(bad_input(format!("{what} is a tensor: numpy.asarray gave no ndarray for {}", type_name(obj)))));
            };
            arr
        }
    };
    let descr = arr.dtype();
    // A built-in type's name from its number (`dtype.name` builds a new
    // string on every call); any other's asked.
    let asked: String;
    let name = match builtin_name(descr.num()) {
        Some(n) => n,
        None => {
            asked = descr.getattr("name")?.extract()?;
            asked.as_str()
        }
    };
    let Some(dtype) = dtype_of(name) else {
        return Ok(Err(bad_input(format!("{what}: dtype {name} does not marshal{} (accepted: {ACCEPTED})", hint(name)))));
    };
    let shape: Vec<u64> = arr.shape().iter().map(|&d| d as u64).collect();
    if shape.is_empty() {
        return Ok(Err(bad_input(format!("{what}: a 0-d array is not a tensor (pass a Python number for a value argument)"))));
    }
    if shape.len() > 8 || shape.contains(&0) {
        return Ok(Err(bad_input(format!("{what}: shape {shape:?}: a tensor has 1 to 8 dimensions, none of them 0"))));
    }
    let nbytes = shape.iter().product::<u64>() as usize * usize::from(dtype.elem_size());
    // Little endian (the simulated HBM's order), C order: `tobytes` gathers
    // a strided view in C order.
    let big_endian = descr.byteorder() == b'>';
    if !big_endian && arr.is_c_contiguous() {
        // SAFETY: a C-contiguous ndarray of `shape` and an element size of
        // `dtype.elem_size()` (the dtype checked above) holds `nbytes` bytes at
        // its data pointer; the array is alive (we hold it) and the GIL is
        // held for the borrow, so nothing frees or resizes it meanwhile.
        let bytes = unsafe { std::slice::from_raw_parts((*arr.as_array_ptr()).fields.data.cast::<u8>(), nbytes) };
        return Ok(f(dtype, shape, bytes));
    }
    let arr = if big_endian { arr.call_method1("astype", (descr.call_method1("newbyteorder", ("<",))?,))? } else { arr.into_any() };
    let bytes = arr.call_method0("tobytes")?;
    let data = bytes.cast::<PyBytes>()?.as_bytes();
    debug_assert_eq!(data.len(), nbytes);
    Ok(f(dtype, shape, data))
}

fn type_name(obj: &Bound<'_, PyAny>) -> String {
    obj.get_type().name().map(|n| n.to_string()).unwrap_or_else(|_| "the object".into())
}

/// The NumPy dtype an output of `dtype` gets, made once per process and
/// dtype (asked on every call, it cost a small op call an import and a
/// `numpy.dtype` call; issue 28). bfloat16's is asked every time: it
/// depends on whether `ml_dtypes` imports now.
fn numpy_dtype<'py>(py: Python<'py>, dtype: Dtype) -> PyResult<Bound<'py, PyArrayDescr>> {
    static MADE: [PyOnceLock<Py<PyArrayDescr>>; 8] = [const { PyOnceLock::new() }; 8];
    let slot = Dtype::ALL.iter().filter(|d| dtype_marshals(**d) && **d != Dtype::Bfloat16).position(|d| *d == dtype);
    match slot.and_then(|i| MADE.get(i)) {
        Some(cell) => cell.get_or_try_init(py, || Ok(make_numpy_dtype(py, dtype)?.cast_into::<PyArrayDescr>()?.unbind())).map(|d| d.bind(py).clone()),
        None => Ok(make_numpy_dtype(py, dtype)?.cast_into::<PyArrayDescr>()?),
    }
}

/// Whether `d` marshals (has a NumPy dtype here).
fn dtype_marshals(d: Dtype) -> bool {
    matches!(d, Dtype::Uint8 | Dtype::Int8 | Dtype::Int16 | Dtype::Int32 | Dtype::Int64 | Dtype::Fp16 | Dtype::Fp32 | Dtype::Bfloat16)
}

fn make_numpy_dtype<'py>(py: Python<'py>, dtype: Dtype) -> PyResult<Bound<'py, PyAny>> {
    let np = py.import("numpy")?;
    let name = match dtype {
        Dtype::Uint8 => "uint8",
        Dtype::Int8 => "int8",
        Dtype::Int16 => "<i2",
        Dtype::Int32 => "<i4",
        Dtype::Int64 => "<i8",
        Dtype::Fp16 => "<f2",
        Dtype::Fp32 => "<f4",
        Dtype::Bfloat16 => match py.import("ml_dtypes") {
            Ok(m) => return m.getattr("bfloat16").and_then(|t| np.call_method1("dtype", (t,))),
            Err(_) => "<u2",
        },
        Dtype::Invalid | Dtype::Uint64 | Dtype::Uint16 | Dtype::Uint32 | Dtype::Fp32R | Dtype::Fp8Exp3 | Dtype::Fp8Exp4 | Dtype::Fp8Exp5 => {
            return Err(PyValueError::new_err(format!("dtype {} (code {}) does not marshal", dtype.name(), dtype.code())))
        }
    };
    np.call_method1("dtype", (name,))
}

/// An output of `dtype` and `shape` as a fresh NumPy array holding a
/// copy of `bytes` (the one copy out of the run's memory).
pub fn copy_to_python<'py>(py: Python<'py>, dtype: Dtype, shape: &[u64], bytes: &[u8]) -> PyResult<Bound<'py, PyAny>> {
    let descr = numpy_dtype(py, dtype)?;
    let mut dims: Vec<npy_intp> =
        shape.iter().map(|&d| npy_intp::try_from(d)).collect::<std::result::Result<_, _>>().map_err(|_| PyValueError::new_err("output shape too large"))?;
    let want = shape.iter().try_fold(usize::from(dtype.elem_size()), |n, &d| n.checked_mul(usize::try_from(d).ok()?));
    if want != Some(bytes.len()) || descr.itemsize() != usize::from(dtype.elem_size()) {
        return Err(PyValueError::new_err(format!("output of {} bytes for shape {shape:?} of {}", bytes.len(), dtype.name())));
    }
    // One array of the dtype and shape, made in one call (not a byte array
    // viewed and reshaped: two Python calls), then the one copy into it.
    // SAFETY: PyArray_NewFromDescr with numpy's own array type, a dtype
    // reference it steals (`into_dtype_ptr` gives a new one), `dims` of
    // the shape's rank, no strides or data (it allocates a C-ordered
    // buffer of the shape's size, checked above to be `bytes.len()`).
    let arr = unsafe {
        let p = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            get_type_object(py, NpyTypes::PyArray_Type),
            descr.into_dtype_ptr(),
            dims.len() as std::ffi::c_int,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
        );
        Bound::from_owned_ptr_or_err(py, p)?
    };
    let arr = arr.cast_into::<PyUntypedArray>()?;
    // SAFETY: the fresh array owns a buffer of `bytes.len()` bytes at its
    // data pointer (made just above); nothing else has it yet.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), (*arr.as_array_ptr()).fields.data.cast::<u8>(), bytes.len()) };
    Ok(arr.into_any())
}

/// The output as a NumPy array of its dtype and shape.
pub fn to_python<'py>(py: Python<'py>, a: Array) -> PyResult<Bound<'py, PyAny>> {
    let dtype = numpy_dtype(py, a.dtype)?;
    let shape = PyTuple::new(py, &a.shape)?;
    let flat = PyArray1::<u8>::from_vec(py, a.data);
    flat.call_method1("view", (dtype,))?.call_method1("reshape", (shape,))
}
