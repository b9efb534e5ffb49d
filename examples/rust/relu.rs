//! The vendor's public relu kernel in its two forms, on the Rust kernel
//! API (`neuroncustomop::kernel`). Copy this file (and its Cargo.toml) to
//! start a kernel crate; it is run by `tests/example_relu_rust.rs` on the
//! host simulator.
//!
//! - `relu`: per-element accessor (one translate per element access);
//!   single core.
//! - `relu_tcm`: TCM staging on every core; each core takes its slice by
//!   `cpu_id()`/`cpu_count()` and writes the output in place
//!   (`dst_tensor()`). In multicore mode only TCM access and the claimed
//!   destination are safe.

use neuroncustomop::custom_ops;
use neuroncustomop::kernel::*;

/// relu through per-element accessors into a new tensor (returned: the
/// wrapper copies it into the output and frees it).
pub fn relu(t_in: Tensor) -> Result<OwnedTensor> {
    let n = t_in.numel() as i64;
    let t_out = ops::zeros(&[n], Dtype::Fp32)?;
    {
        let inp = t_in.const_accessor::<f32, 1>()?;
        let out = t_out.tensor().accessor::<f32, 1>()?;
        for i in 0..n {
            let x = inp.get([i])?;
            out.set([i], if x > 0.0 { x } else { 0.0 })?;
        }
    }
    Ok(t_out)
}

/// relu through TCM, this core's slice, in place.
pub fn relu_tcm(t_in: Tensor) -> Result<Tensor> {
    let n = t_in.numel();
    let t_out = dst_tensor()?;
    let (cpu, cores) = (cpu_id() as u64, cpu_count() as u64);
    let base = n / cores;
    let start = base * cpu;
    let len = if cpu == cores - 1 { n - base * (cores - 1) } else { base };
    const BUFFER: usize = 1024;
    // The buffer lives in the scope: it cannot outlive the core's binding.
    tcm_scope(|s| {
        let mut buf = s.buf::<f32>(BUFFER).ok_or(Error::OutOfMemory)?;
        let (inp, out) = (t_in.tcm_accessor(), t_out.tcm_accessor());
        let mut i = 0;
        while i < len {
            let k = (len - i).min(BUFFER as u64) as usize;
            inp.tensor_to_tcm(&mut buf[..k], start + i)?;
            for x in &mut buf[..k] {
                *x = x.max(0.0);
            }
            out.tcm_to_tensor(&buf[..k], start + i)?;
            i += k as u64;
        }
        Ok(())
    })?;
    Ok(t_out)
}

custom_ops! {
    fn relu(t_in: Tensor);
    fn relu_tcm(t_in: Tensor);
}
