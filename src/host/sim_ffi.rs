//! The host simulator's C API, for kernel authors who drive their C++
//! kernel from a C or C++ test program linked against the host
//! `libneuroncustomop.a`. Functions return 0 or an error code (> 0).

use super::simulator::Simulator;
use crate::ffi::launch::OpTable;
use core::ffi::{c_char, c_void, CStr};
use neuron_runtime::marshal::descriptor::{RawTensorDesc, DESC_BYTES};
use neuron_runtime::marshal::dtype::Dtype;
use neuron_runtime::marshal::invocation::ArgKind;
use neuron_runtime::Error;
use std::boxed::Box;

/// An opaque simulator handle: the simulator and the text of its last
/// run's report.
pub struct NeuronSim(Simulator, std::ffi::CString);

fn code(r: Result<(), Error>) -> i32 {
    r.err().map_or(0, Error::code)
}

/// # Safety
/// `p` must be null or a handle from `neuron_sim_new` not yet freed.
unsafe fn sim<'a>(p: *mut NeuronSim) -> Result<&'a mut Simulator, Error> {
    // SAFETY: the caller guarantees p is a live handle (or null).
    unsafe { p.as_mut() }.map(|s| &mut s.0).ok_or(Error::NoCore)
}

/// # Safety
/// `shape` must be readable for `ndim` values (or `ndim` 0).
unsafe fn shape<'a>(shape: *const u64, ndim: u32) -> Result<&'a [u64], Error> {
    if ndim == 0 || shape.is_null() || ndim > 8 {
        return Err(Error::BadRank);
    }
    // SAFETY: the caller guarantees ndim readable values.
    Ok(unsafe { core::slice::from_raw_parts(shape, ndim as usize) })
}

/// A new simulator: a mock SoC with eight reset cores. Null on failure.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_sim_new() -> *mut NeuronSim {
    Simulator::new().map_or(core::ptr::null_mut(), |s| Box::into_raw(Box::new(NeuronSim(s, std::ffi::CString::default()))))
}

/// Frees a simulator.
///
/// # Safety
/// `s` must be null or a handle from `neuron_sim_new`, not used again.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_free(s: *mut NeuronSim) {
    if !s.is_null() {
        // SAFETY: the caller hands back ownership of a Box we made.
        drop(unsafe { Box::from_raw(s) });
    }
}

/// Registers the ops of the linked kernel (`get_func_cnt/name/ptr`) as the
/// loader would. Returns the op count, or -code.
///
/// # Safety
/// `s` must be a live handle; the kernel's op table must be linked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_register(s: *mut NeuronSim) -> i32 {
    // SAFETY: forwarded from the caller.
    match unsafe { sim(s) }.and_then(|s| s.register(OpTable::linked())) {
        Ok(n) => n as i32,
        Err(e) => -e.code(),
    }
}

/// Places a tensor argument (`data`: `nbytes` bytes, row-major) in HBM.
///
/// # Safety
/// `s` live; `shape` readable for `ndim`; `data` readable for `nbytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_tensor(s: *mut NeuronSim, dtype: u8, shape_: *const u64, ndim: u32, data: *const c_void, nbytes: usize) -> i32 {
    code((|| {
        // SAFETY: forwarded from the caller.
        let (s, shape) = unsafe { (sim(s)?, shape(shape_, ndim)?) };
        let dt = Dtype::from_code(dtype).ok_or(Error::DtypeNotMarshallable)?;
        // SAFETY: the caller guarantees nbytes readable bytes.
        let bytes = unsafe { core::slice::from_raw_parts(data.cast::<u8>(), nbytes) };
        s.arg_tensor(dt, shape, bytes).map(|_| ())
    })())
}

/// Places a one-element value argument of kind `kind` (2 scalar, 3 int,
/// 4 float, 5 long long, 6 double) with dtype `dtype`; `elem` is its bytes.
///
/// # Safety
/// `s` live; `elem` readable for the dtype's element size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_value(s: *mut NeuronSim, kind: u8, dtype: u8, elem: *const c_void) -> i32 {
    code((|| {
        // SAFETY: forwarded from the caller.
        let s = unsafe { sim(s)? };
        let k = ArgKind::from_code(kind).ok_or(Error::BadArgKind)?;
        let dt = Dtype::from_code(dtype).ok_or(Error::DtypeNotMarshallable)?;
        // SAFETY: the caller guarantees one element.
        let bytes = unsafe { core::slice::from_raw_parts(elem.cast::<u8>(), dt.elem_size() as usize) };
        s.arg_value(k, dt, bytes).map(|_| ())
    })())
}

/// Appends a raw 48-byte descriptor as argument of kind `kind` (for
/// testing the gates).
///
/// # Safety
/// `s` live; `desc` readable for 48 bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_raw(s: *mut NeuronSim, kind: u8, desc: *const u8) -> i32 {
    code((|| {
        // SAFETY: forwarded from the caller.
        let s = unsafe { sim(s)? };
        // SAFETY: the caller guarantees 48 readable bytes.
        let b = unsafe { &*desc.cast::<[u8; DESC_BYTES]>() };
        let k = ArgKind::from_code(kind).ok_or(Error::BadArgKind)?;
        s.push_arg(k, RawTensorDesc::from_bytes(b));
        Ok(())
    })())
}

/// Sets the output tensor (zeroed, in HBM).
///
/// # Safety
/// `s` live; `shape` readable for `ndim`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_set_output(s: *mut NeuronSim, dtype: u8, shape_: *const u64, ndim: u32) -> i32 {
    code((|| {
        // SAFETY: forwarded from the caller.
        let (s, shape) = unsafe { (sim(s)?, shape(shape_, ndim)?) };
        let dt = Dtype::from_code(dtype).ok_or(Error::DtypeNotMarshallable)?;
        s.set_output(dt, shape).map(|_| ())
    })())
}

/// Runs op `name` on cores `0..cores` (1..=8) in parallel. 0 if every core
/// finished with status 0, else the first failing core's code.
///
/// # Safety
/// `s` live; `name` a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_run(s: *mut NeuronSim, name: *const c_char, cores: u32) -> i32 {
    // SAFETY: the caller guarantees s is live (or null).
    let Some(h) = (unsafe { s.as_mut() }) else { return Error::NoCore.code() };
    // SAFETY: the caller guarantees name is a C string.
    let name = unsafe { CStr::from_ptr(name) };
    let r = name.to_str().map_err(|_| Error::NoInvocation).and_then(|n| h.0.run(n, cores));
    let text = match &r {
        Ok(rep) => std::format!("{rep}"),
        Err(e) => std::format!("run refused: {e}\n"),
    };
    h.1 = std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default();
    match r {
        Ok(rep) if !rep.guard_errors.is_empty() && rep.cores.iter().all(|c| c.status == 0) => Error::GuardOverwritten.code(),
        Ok(rep) => rep.cores.iter().map(|c| if c.status != 0 { c.status } else { c.returned.abs() }).find(|c| *c != 0).unwrap_or(0),
        Err(e) => e.code(),
    }
}

/// The last run's report as text (per core: translate hits and misses with
/// the thrash warning, DMA bytes, heap and stack high-water marks, the
/// kernel's printf output; guard-region overwrites). Valid until the next
/// run or `neuron_sim_free`; empty before the first run.
///
/// # Safety
/// `s` must be a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_report(s: *mut NeuronSim) -> *const c_char {
    // SAFETY: the caller guarantees s is live (or null).
    unsafe { s.as_ref() }.map_or(c"".as_ptr(), |h| h.1.as_ptr())
}

/// Copies the output tensor's bytes into `dst` (at most `n`). 0 or code.
///
/// # Safety
/// `s` live; `dst` writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_read_output(s: *mut NeuronSim, dst: *mut c_void, n: usize) -> i32 {
    code((|| {
        // SAFETY: forwarded from the caller.
        let s = unsafe { sim(s)? };
        let v = s.read_output()?;
        let k = v.len().min(n);
        // SAFETY: the caller guarantees n writable bytes; k <= n.
        unsafe { core::ptr::copy_nonoverlapping(v.as_ptr(), dst.cast::<u8>(), k) };
        Ok(())
    })())
}

/// Fills the output tensor's storage with `byte` (a sentinel, to check
/// later that a rejected run wrote nothing). 0 or code.
///
/// # Safety
/// `s` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_fill_output(s: *mut NeuronSim, byte: u8) -> i32 {
    // SAFETY: forwarded from the caller.
    code(unsafe { sim(s) }.and_then(|s| s.fill_output(byte)))
}

/// Clears the pending arguments and output.
///
/// # Safety
/// `s` live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_clear_args(s: *mut NeuronSim) {
    // SAFETY: forwarded from the caller.
    if let Ok(s) = unsafe { sim(s) } {
        s.clear_args();
    }
}
