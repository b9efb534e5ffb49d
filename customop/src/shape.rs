//! Evaluating an op's shape function on the host: the query the runner
//! fills and the generated `customop_shape_eval` answers (layout shared
//! with `torchneuron::ShapeQuery` in `include/torchneuron/register.h`),
//! run through `neuron_sim_call` so the shape function's torch factories
//! have a simulated core to allocate on.

use crate::error::{Error, ErrorKind, Result};
use crate::npy::Dtype;
use crate::schema::{ArgKind, Op};
use crate::sim::SimApi;
use std::ffi::{c_char, c_void, CStr, CString};

/// `torchneuron::kShapeQueryVersion`.
pub const QUERY_VERSION: u32 = 1;

/// `torchneuron::ShapeArg`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct ShapeArg {
    /// Argument kind code.
    pub kind: u8,
    /// Tensors: ISA dtype code.
    pub dtype: u8,
    /// Tensors: rank.
    pub ndim: u8,
    /// Values: 1 if `f` holds it.
    pub is_float: u8,
    /// 0.
    pub reserved: u32,
    /// Tensors: the shape.
    pub sizes: [i64; 8],
    /// Integer value.
    pub i: i64,
    /// Floating value.
    pub f: f64,
}

/// `torchneuron::ShapeQuery`.
#[repr(C)]
#[derive(Debug)]
pub struct ShapeQuery {
    /// [`QUERY_VERSION`].
    pub version: u32,
    /// Arguments used.
    pub nargs: u32,
    /// The op's name (C string).
    pub op: *const c_char,
    /// The arguments.
    pub args: [ShapeArg; 10],
    /// Answer: ISA dtype code.
    pub out_dtype: u8,
    /// Answer: rank.
    pub out_ndim: u8,
    /// 0.
    pub reserved: [u8; 6],
    /// Answer: shape.
    pub out_sizes: [i64; 8],
    /// Why it failed.
    pub message: [u8; 256],
}

const _: () = assert!(std::mem::size_of::<ShapeArg>() == 88);
const _: () = assert!(std::mem::size_of::<ShapeQuery>() == 16 + 880 + 8 + 64 + 256);

/// One argument as the shape function sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// A tensor of this dtype and shape.
    Tensor(Dtype, Vec<u64>),
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Float(f64),
}

/// The output the shape function gives.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputSpec {
    /// Its dtype.
    pub dtype: Dtype,
    /// Its shape.
    pub shape: Vec<u64>,
}

/// Runs `op`'s shape function in `api`'s library on `args` (already
/// checked against the op's kinds).
pub fn evaluate(api: &SimApi, op: &Op, args: &[Value]) -> Result<OutputSpec> {
    let name = CString::new(op.name.as_str()).expect("op names are identifiers");
    let mut q = ShapeQuery {
        version: QUERY_VERSION,
        nargs: args.len() as u32,
        op: name.as_ptr(),
        args: [ShapeArg::default(); 10],
        out_dtype: 0,
        out_ndim: 0,
        reserved: [0; 6],
        out_sizes: [0; 8],
        message: [0; 256],
    };
    for ((slot, v), p) in q.args.iter_mut().zip(args).zip(&op.params) {
        slot.kind = p.kind.code();
        match v {
            Value::Tensor(dt, shape) => {
                slot.dtype = dt.code();
                slot.ndim = shape.len() as u8;
                for (s, d) in slot.sizes.iter_mut().zip(shape) {
                    *s = *d as i64;
                }
            }
            Value::Int(i) => {
                slot.i = *i;
                slot.f = *i as f64;
            }
            Value::Float(f) => {
                slot.is_float = 1;
                slot.f = *f;
                slot.i = *f as i64;
            }
        }
        debug_assert!(matches!(v, Value::Tensor(..)) == (p.kind == ArgKind::Tensor));
    }
    // SAFETY: `eval` is the library's generated `customop_shape_eval`,
    // which takes a ShapeQuery of the layout above; `q` and `name` live
    // across the call.
    let rc = unsafe { (api.call)(Some(api.shape_eval), (&mut q as *mut ShapeQuery).cast::<c_void>()) };
    if rc == neuroncustomop::runtime::Error::NoCore.code() {
        // `neuron_sim_call` could not make a simulator: say why (the
        // address space for the simulated HBM or a core, under a limit).
        if let Some(why) = neuroncustomop::host::reserve::why_no_simulator() {
            return Err(Error::new(ErrorKind::Environment, format!("op `{}`: no simulator for the shape function `{}`: {why}", op.name, op.shape_fn)));
        }
    }
    if rc != 0 {
        let msg = CStr::from_bytes_until_nul(&q.message).map(|m| m.to_string_lossy().into_owned()).unwrap_or_default();
        let why = if msg.is_empty() { api.error_message(rc) } else { msg };
        return Err(Error::new(ErrorKind::ShapeFailed, format!("op `{}`: shape function `{}` failed (code {rc}): {why}", op.name, op.shape_fn)));
    }
    let dtype = Dtype::marshallable(q.out_dtype)
        .ok_or_else(|| Error::new(ErrorKind::ShapeFailed, format!("op `{}`: shape function gave dtype code {}", op.name, q.out_dtype)))?;
    let shape = q.out_sizes[..q.out_ndim.min(8) as usize].iter().map(|&d| d.max(0) as u64).collect::<Vec<_>>();
    if shape.is_empty() || shape.contains(&0) {
        return Err(Error::new(ErrorKind::ShapeFailed, format!("op `{}`: shape function gave the empty shape {shape:?}", op.name)));
    }
    Ok(OutputSpec { dtype, shape })
}
