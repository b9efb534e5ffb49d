//! A `customop run` argument from its text: a `.npy` tensor (mapped) or
//! a number checked against the kind the op's signature gives it.

use super::*;

/// One argument, ready to place.
/// One argument of a run, ready to place in the simulated HBM (also the
/// Python package's, which makes them from arrays and numbers).
pub enum Placed {
    /// A tensor.
    Tensor(Array),
    /// A one-element value: its kind, its marshalled dtype and bytes, and
    /// what the shape function sees.
    Value { kind: ArgKind, dtype: Dtype, bytes: Vec<u8>, value: Value },
}

/// What the shape function is given for `placed`.
pub fn shape_values(placed: &[Placed]) -> Vec<Value> {
    placed
        .iter()
        .map(|p| match p {
            Placed::Tensor(a) => Value::Tensor(a.dtype, a.shape.clone()),
            Placed::Value { value, .. } => value.clone(),
        })
        .collect()
}

/// Why `text` is not an integer argument of range `[lo, hi]`: an integer
/// outside it, or not an integer at all.
fn not_in(what: &str, kind: &str, text: &str, lo: i128, hi: i128) -> String {
    match integer_text(text) {
        true => format!("{what} is {kind}: `{text}` is outside its range [{lo}, {hi}]"),
        false => format!("{what} is {kind}: `{text}` is not an integer"),
    }
}

/// The f32 a floating value travels as (no dtype wider than f32
/// marshals), refused where that would change it beyond rounding: a
/// finite value that overflows to infinity, a non-zero one that underflows
/// to 0, and for a `Scalar` one whose integer view (`.to<int64_t>()`, what
/// the shape function sees as its int) would saturate. One rule for
/// `customop run` and the Python ops.
pub fn marshal_float(what: &str, kind: ArgKind, v: f64) -> Result<f32> {
    let f = v as f32;
    if v.is_finite() && f.is_infinite() {
        return Err(bad(format!("{what}: {v:e} overflows float32 (largest finite: {:e}); it would arrive as infinity", f32::MAX)));
    }
    if v != 0.0 && f == 0.0 {
        return Err(bad(format!("{what}: {v:e} underflows float32 (smallest non-zero: {:e}); it would arrive as 0", f32::from_bits(1))));
    }
    // 2^63: the first value past int64's range.
    if kind == ArgKind::Scalar && v.is_finite() && v.abs() >= 9_223_372_036_854_775_808.0 {
        return Err(bad(format!("{what}: {v:e} is outside the 64-bit integer range a Scalar's integer value has (|v| < 2^63)")));
    }
    Ok(f)
}

/// Whether `text` is written as an integer (sign and digits).
fn integer_text(text: &str) -> bool {
    let t = text.strip_prefix(['-', '+']).unwrap_or(text);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// Parses argument `i` (1-based in messages) of `op` for its declared kind;
/// a tensor is read whole, or with `mapped` only mapped (its data is
/// there, the `Placed` has none).
pub(super) fn parse_arg(op: &Op, i: usize, text: &str, mapped: Option<&mut Option<npy::Mapped>>) -> Result<Placed> {
    let p = &op.params[i];
    let what = format!("argument {} of op `{}` ({})", i + 1, op.name, p.cpp_type);
    let int = || text.parse::<i64>().ok();
    let float = || text.parse::<f64>().ok().filter(|_| !text.is_empty());
    Ok(match p.kind {
        ArgKind::Tensor => {
            if float().is_some() {
                return Err(bad(format!("{what} is a tensor: give a .npy file, not the number {text}")));
            }
            match mapped {
                Some(m) => {
                    let f = npy::map(Path::new(text))?;
                    let a = Array { dtype: f.layout.dtype, shape: f.layout.shape.clone(), data: Vec::new() };
                    *m = Some(f);
                    Placed::Tensor(a)
                }
                None => Placed::Tensor(npy::read(Path::new(text))?),
            }
        }
        ArgKind::Scalar => match (int(), float()) {
            (Some(v), _) => Placed::Value { kind: p.kind, dtype: Dtype::Int64, bytes: v.to_le_bytes().to_vec(), value: Value::Int(v) },
            (None, _) if integer_text(text) => return Err(bad(not_in(&what, "a Scalar", text, i64::MIN.into(), i64::MAX.into()))),
            (None, Some(v)) => {
                let f = marshal_float(&what, p.kind, v)?;
                Placed::Value { kind: p.kind, dtype: Dtype::Fp32, bytes: f.to_le_bytes().to_vec(), value: Value::Float(v) }
            }
            _ => return Err(bad(format!("{what} is a scalar: give a number, not `{text}`"))),
        },
        ArgKind::Int => {
            let v = int().and_then(|v| i32::try_from(v).ok()).ok_or_else(|| bad(not_in(&what, "an int", text, i32::MIN.into(), i32::MAX.into())))?;
            Placed::Value { kind: p.kind, dtype: Dtype::Int32, bytes: v.to_le_bytes().to_vec(), value: Value::Int(v.into()) }
        }
        ArgKind::LongLong => {
            let v = int().ok_or_else(|| bad(not_in(&what, "a 64-bit integer", text, i64::MIN.into(), i64::MAX.into())))?;
            Placed::Value { kind: p.kind, dtype: Dtype::Int64, bytes: v.to_le_bytes().to_vec(), value: Value::Int(v) }
        }
        // No dtype wider than f32 marshals: a double travels as f32.
        ArgKind::Float | ArgKind::Double => {
            let v = float().ok_or_else(|| bad(format!("{what} is a floating-point number: `{text}` is not a number")))?;
            let f = marshal_float(&what, p.kind, v)?;
            Placed::Value { kind: p.kind, dtype: Dtype::Fp32, bytes: f.to_le_bytes().to_vec(), value: Value::Float(v) }
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::schema::Param;

    fn op(kind: ArgKind, cpp: &str) -> Op {
        Op { name: "k".into(), compute_fn: "k".into(), shape_fn: "s".into(), params: vec![Param { kind, cpp_type: cpp.into() }], declared_at: "s.cpp:1".into() }
    }

    fn refused(kind: ArgKind, cpp: &str, text: &str) -> String {
        match parse_arg(&op(kind, cpp), 0, text, None) {
            Ok(_) => panic!("{text} accepted for {cpp}"),
            Err(e) => {
                assert_eq!(e.kind, ErrorKind::BadInput);
                e.message
            }
        }
    }

    #[test]
    fn values_out_of_range_for_their_kind_are_refused() {
        let m = refused(ArgKind::Scalar, "const torch::Scalar&", "9223372036854775808");
        assert!(m.contains("`9223372036854775808` is outside its range [-9223372036854775808, 9223372036854775807]"), "{m}");
        assert!(refused(ArgKind::Scalar, "const torch::Scalar&", "1e20").contains("outside the 64-bit integer range a Scalar's integer value has"));
        assert!(refused(ArgKind::LongLong, "int64_t", "-9223372036854775809").contains("outside its range"));
        assert!(refused(ArgKind::LongLong, "int64_t", "99999999999999999999999999999999999999999").contains("outside its range"));
        assert!(refused(ArgKind::Float, "float", "1e39").contains("1e39 overflows float32"));
        assert!(refused(ArgKind::Double, "double", "1e39").contains("overflows float32"));
        assert!(refused(ArgKind::Float, "float", "1e-50").contains("1e-50 underflows float32"));
        assert!(refused(ArgKind::Scalar, "const torch::Scalar&", "-1e-50").contains("underflows"));
        // The edges that do fit, and values given as infinity on purpose.
        for (kind, text) in [
            (ArgKind::Scalar, "9223372036854775807"),
            (ArgKind::Scalar, "1e18"),
            (ArgKind::Float, "3.4e38"),
            (ArgKind::Float, "1e-45"),
            (ArgKind::Double, "inf"),
            (ArgKind::Float, "0.0"),
        ] {
            assert!(parse_arg(&op(kind, "x"), 0, text, None).is_ok(), "{text}");
        }
    }
}
