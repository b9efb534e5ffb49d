//! The documented tensor operations (SPEC §10), run in a Rust kernel on
//! the simulator, each against an independent reference (f64 math in the
//! test, rounded to the dtype; integer math in i128, wrapped) over every
//! dtype it accepts; every dtype it does not accept is an error
//! (`DtypeNotSupported`, 88).

use neuroncustomop::custom_ops;
use neuroncustomop::host::{ArgKind, Simulator};
use neuroncustomop::kernel::*;

const ALL: [Dtype; 8] = [Dtype::Uint8, Dtype::Int8, Dtype::Int16, Dtype::Int32, Dtype::Int64, Dtype::Fp16, Dtype::Bfloat16, Dtype::Fp32];
/// Elements per test tensor: more than one 2 KiB staging chunk for every dtype.
const N: usize = 2500;

fn unary_op(t: Tensor, code: i32) -> Result<Tensor> {
    let out = dst_tensor()?;
    let f = [
        ops::abs_out,
        ops::ceil_out,
        ops::floor_out,
        ops::sin_out,
        ops::cos_out,
        ops::tan_out,
        ops::log_out,
        ops::log2_out,
        ops::log10_out,
        ops::exp_out,
        ops::bitwise_not_out,
    ];
    match code {
        0..=10 => f[code as usize](&t, &out)?,
        20 => ops::pow_out(&t, 1.5, &out)?,
        21 => ops::clamp_out(&t, -20i64, 30i64, &out)?,
        22 => ops::fill_(&out, -7i64)?,
        _ => return Err(Error::BadArgKind),
    }
    Ok(out)
}

fn binary_op<'a>(a: Tensor<'a>, b: Tensor<'a>, code: i32) -> Result<Tensor<'a>> {
    let out = dst_tensor()?;
    match code {
        0 => ops::add_out(&a, &b, 2i64, &out)?,
        1 => ops::sub_out(&a, &b, 3i64, &out)?,
        2 => ops::mul_out(&a, &b, &out)?,
        3 => ops::div_out(&a, &b, &out)?,
        4 => ops::bitwise_and_out(&a, &b, &out)?,
        5 => ops::bitwise_or_out(&a, &b, &out)?,
        6 => ops::add_out(&a, &b, 2.5f64, &out)?,
        _ => return Err(Error::BadArgKind),
    }
    Ok(out)
}

/// The allocating forms: the result is an `OwnedTensor` the wrapper
/// returns (copied into the output) and frees.
fn factory(like: Tensor, code: i32) -> Result<OwnedTensor> {
    let d = like.dtype().ok_or(Error::DtypeNotMarshallable)?;
    let s = like.sizes();
    match code {
        0 => ops::zeros(s, d),
        1 => ops::ones(s, d),
        2 => ops::full(s, 5i64, d),
        3 => ops::eye(s[0], s[1], d),
        4 => ops::abs(&like),
        5 => ops::add(&like, &like, 1i64),
        _ => Err(Error::BadArgKind),
    }
}

custom_ops! {
    fn unary_op(t: Tensor, code: i32);
    fn binary_op(a: Tensor, b: Tensor, code: i32);
    fn factory(like: Tensor, code: i32);
}

fn encode(d: Dtype, v: &[f64]) -> Vec<u8> {
    v.iter()
        .flat_map(|&x| match d {
            Dtype::Uint8 => vec![(x as i64) as u8],
            Dtype::Int8 => vec![(x as i64) as i8 as u8],
            Dtype::Int16 => ((x as i64) as i16).to_le_bytes().to_vec(),
            Dtype::Int32 => ((x as i64) as i32).to_le_bytes().to_vec(),
            Dtype::Int64 => (x as i64).to_le_bytes().to_vec(),
            Dtype::Fp16 => f16::from_f64(x).to_le_bytes().to_vec(),
            Dtype::Bfloat16 => bf16::from_f64(x).to_le_bytes().to_vec(),
            _ => (x as f32).to_le_bytes().to_vec(),
        })
        .collect()
}

fn decode(d: Dtype, b: &[u8]) -> Vec<f64> {
    b.chunks(d.elem_size() as usize)
        .map(|c| match d {
            Dtype::Uint8 => c[0] as f64,
            Dtype::Int8 => c[0] as i8 as f64,
            Dtype::Int16 => i16::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::Int32 => i32::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::Int64 => i64::from_le_bytes(c.try_into().unwrap()) as f64,
            Dtype::Fp16 => f16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            Dtype::Bfloat16 => bf16::from_le_bytes(c.try_into().unwrap()).to_f64(),
            _ => f32::from_le_bytes(c.try_into().unwrap()) as f64,
        })
        .collect()
}

/// Wraps an exact integer result to the dtype's width.
fn wrap(d: Dtype, v: i128) -> f64 {
    match d {
        Dtype::Uint8 => v as u8 as f64,
        Dtype::Int8 => v as i8 as f64,
        Dtype::Int16 => v as i16 as f64,
        Dtype::Int32 => v as i32 as f64,
        _ => v as i64 as f64,
    }
}

/// Input values, as the dtype holds them (rounded through it).
fn inputs(d: Dtype, positive: bool, seed: i64) -> Vec<f64> {
    let v: Vec<f64> = (0..N as i64)
        .map(|i| {
            let k = (i * 37 + seed * 11) % 251;
            if d.is_float() {
                if positive {
                    0.05 + k as f64 * 0.2
                } else {
                    (k - 125) as f64 * 0.0625
                }
            } else if d == Dtype::Uint8 {
                k as f64
            } else {
                (k - 125) as f64 * if d == Dtype::Int8 { 1.0 } else { 97.0 }
            }
        })
        .collect();
    decode(d, &encode(d, &v))
}

fn check(d: Dtype, what: &str, got: &[f64], want: &[f64]) {
    let eps = match d {
        Dtype::Fp16 => 1.0 / 1024.0,
        Dtype::Bfloat16 => 1.0 / 128.0,
        Dtype::Fp32 => 1e-6,
        _ => 0.0,
    };
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let ok = (g.is_nan() && w.is_nan()) || (g - w).abs() <= eps * w.abs().max(1.0);
        assert!(ok, "{what} {d:?} element {i}: got {g}, want {w}");
    }
}

fn run(op: &str, tensors: &[&[u8]], d: Dtype, shape: &[u64], code: i32) -> (bool, Vec<f64>, String) {
    let mut s = Simulator::new().unwrap();
    s.register_linked().unwrap();
    for t in tensors {
        s.arg_tensor(d, shape, t).unwrap();
    }
    s.arg_value(ArgKind::Int, Dtype::Int32, &code.to_le_bytes()).unwrap();
    s.set_output(d, shape).unwrap();
    let rep = s.run(op, 1).unwrap();
    // The bytes as they are: a refused op's run fails, and its output is
    // not a result (`read_output` refuses it).
    let mut bytes = vec![0u8; s.output().unwrap().buffer_bytes as usize];
    s.inspect_output(&mut bytes).unwrap();
    let out = decode(d, &bytes);
    (rep.ok(), out, std::format!("{}{rep}", rep.cores[0].printf))
}

/// The op returned `DtypeNotSupported` (the kernel claimed its output
/// first, so the run itself completes; the wrapper prints the error), and
/// the run's verdict is a failure.
fn expect_refused(op: &str, d: Dtype, printf: &str, ok: bool) {
    assert!(printf.contains("custom op failed: error 88"), "{op} must refuse {d:?}: {printf}");
    assert!(!ok, "{op} on {d:?}: the refusal must fail the run");
}

#[test]
fn unary_math_over_every_dtype() {
    type F = fn(f64) -> f64;
    let table: [(i32, &str, bool, bool, F); 10] = [
        (0, "abs", true, false, f64::abs),
        (1, "ceil", true, false, f64::ceil),
        (2, "floor", true, false, f64::floor),
        (3, "sin", false, false, f64::sin),
        (4, "cos", false, false, f64::cos),
        (5, "tan", false, false, f64::tan),
        (6, "log", false, true, f64::ln),
        (7, "log2", false, true, f64::log2),
        (8, "log10", false, true, f64::log10),
        (9, "exp", false, false, f64::exp),
    ];
    for d in ALL {
        for (code, name, ints_too, positive, f) in table {
            let x = inputs(d, positive, code as i64);
            let (ok, got, printf) = run("unary_op", &[&encode(d, &x)], d, &[50, 50], code);
            if !d.is_float() && !ints_too {
                expect_refused(name, d, &printf, ok);
                continue;
            }
            assert!(ok, "{name} {d:?}: {printf}");
            let want: Vec<f64> = if d.is_float() {
                decode(d, &encode(d, &x.iter().map(|&v| f(v)).collect::<Vec<_>>()))
            } else {
                x.iter().map(|&v| wrap(d, if code == 0 { (v as i128).abs() } else { v as i128 })).collect()
            };
            check(d, name, &got, &want);
        }
    }
}

#[test]
fn pow_clamp_fill_bitwise_not() {
    for d in ALL {
        let x = inputs(d, true, 3);
        let (ok, got, printf) = run("unary_op", &[&encode(d, &x)], d, &[N as u64], 20);
        if d.is_float() {
            assert!(ok, "pow {d:?}: {printf}");
            check(d, "pow", &got, &decode(d, &encode(d, &x.iter().map(|v| v.powf(1.5)).collect::<Vec<_>>())));
        } else {
            expect_refused("pow", d, &printf, ok);
        }
        let x = inputs(d, false, 4);
        let (ok, got, printf) = run("unary_op", &[&encode(d, &x)], d, &[N as u64], 21);
        assert!(ok, "clamp {d:?}: {printf}");
        let lo = if d == Dtype::Uint8 { 0.0 } else { -20.0 };
        check(d, "clamp", &got, &x.iter().map(|v| v.clamp(lo, 30.0)).collect::<Vec<_>>());
        let (ok, got, _) = run("unary_op", &[&encode(d, &x)], d, &[N as u64], 22);
        assert!(ok);
        check(d, "fill_", &got, &vec![wrap(d, -7); N].iter().map(|&v| if d.is_float() { -7.0 } else { v }).collect::<Vec<_>>());
        let (ok, got, printf) = run("unary_op", &[&encode(d, &x)], d, &[N as u64], 10);
        if d.is_float() {
            expect_refused("bitwise_not", d, &printf, ok);
        } else {
            assert!(ok, "bitwise_not {d:?}: {printf}");
            check(d, "bitwise_not", &got, &x.iter().map(|&v| wrap(d, !(v as i128))).collect::<Vec<_>>());
        }
    }
}

#[test]
fn binary_ops_over_every_dtype() {
    for d in ALL {
        let a = inputs(d, false, 5);
        let b: Vec<f64> = inputs(d, true, 6);
        let (ea, eb) = (encode(d, &a), encode(d, &b));
        for (code, name) in [(0, "add"), (1, "sub"), (2, "mul"), (3, "div"), (4, "bitwise_and"), (5, "bitwise_or")] {
            let (ok, got, printf) = run("binary_op", &[&ea, &eb], d, &[25, 100], code);
            let float_only = code == 3;
            let int_only = code >= 4;
            if (float_only && !d.is_float()) || (int_only && d.is_float()) {
                expect_refused(name, d, &printf, ok);
                continue;
            }
            assert!(ok, "{name} {d:?}: {printf}");
            let want: Vec<f64> = a
                .iter()
                .zip(&b)
                .map(|(&x, &y)| {
                    if d.is_float() {
                        let v = match code {
                            0 => x + 2.0 * y,
                            1 => x - 3.0 * y,
                            2 => x * y,
                            _ => x / y,
                        };
                        decode(d, &encode(d, &[v]))[0]
                    } else {
                        let (x, y) = (x as i128, y as i128);
                        wrap(
                            d,
                            match code {
                                0 => x + 2 * y,
                                1 => x - 3 * y,
                                2 => x * y,
                                4 => x & y,
                                _ => x | y,
                            },
                        )
                    }
                })
                .collect();
            check(d, name, &got, &want);
        }
        // A floating-point alpha: scales floats; integers refuse it (97),
        // as libtorch does, rather than truncate it to 2.
        let (ok, got, printf) = run("binary_op", &[&ea, &eb], d, &[25, 100], 6);
        if d.is_float() {
            assert!(ok, "add alpha 2.5 {d:?}: {printf}");
            let want: Vec<f64> = a.iter().zip(&b).map(|(&x, &y)| decode(d, &encode(d, &[x + 2.5 * y]))[0]).collect();
            check(d, "add alpha 2.5", &got, &want);
        } else {
            assert!(printf.contains("custom op failed: error 97"), "add alpha 2.5 must refuse {d:?}: {printf}");
            assert!(!ok, "{d:?}: the refusal must fail the run");
        }
    }
}

#[test]
fn factories_and_allocating_forms() {
    for d in ALL {
        let like = inputs(d, false, 7);
        let e = encode(d, &like[..12]);
        let (n, m) = (3usize, 4usize);
        let expect = |code: i32| -> Vec<f64> {
            (0..n * m)
                .map(|i| match code {
                    0 => 0.0,
                    1 => 1.0,
                    2 => 5.0,
                    3 => (i / m == i % m) as i64 as f64,
                    4 => {
                        if d.is_float() {
                            like[i].abs()
                        } else {
                            wrap(d, (like[i] as i128).abs())
                        }
                    }
                    _ => {
                        if d.is_float() {
                            decode(d, &encode(d, &[2.0 * like[i]]))[0]
                        } else {
                            wrap(d, 2 * like[i] as i128)
                        }
                    }
                })
                .collect()
        };
        for code in 0..6 {
            let (ok, got, printf) = run("factory", &[&e], d, &[n as u64, m as u64], code);
            assert!(ok, "factory {code} {d:?}: {printf}");
            check(d, "factory", &got, &expect(code));
        }
    }
}
