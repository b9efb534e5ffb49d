//! The host simulator's C API, for kernel authors who drive their C++
//! kernel from a C or C++ test program linked against the host
//! `libneuroncustomop.a`. Functions return 0 or an error code (> 0).
//! Every pointer is checked: NULL where one is needed is `NullArgument`
//! (104), never a dereference, and a refused call leaves the handle as it
//! was. No panic leaves a function (`no_unwind`).

use super::simulator::Simulator;
use crate::abort::no_unwind;
use core::ffi::{c_char, c_void, CStr};
use neuron_runtime::marshal::descriptor::{RawTensorDesc, DESC_BYTES};
use neuron_runtime::marshal::dtype::Dtype;
use neuron_runtime::marshal::invocation::ArgKind;
use neuron_runtime::Error;
use std::boxed::Box;
use std::vec::Vec;

/// An opaque simulator handle: the simulator, the text of its last run's
/// report and its timings (`neuron_sim_timings`).
pub struct NeuronSim(pub(crate) Simulator, pub(crate) std::ffi::CString, pub(crate) Vec<u64>);

pub(crate) fn code(r: Result<(), Error>) -> i32 {
    r.err().map_or(0, Error::code)
}

/// # Safety
/// `p` must be null or a handle from `neuron_sim_new` not yet freed.
pub(crate) unsafe fn sim<'a>(p: *mut NeuronSim) -> Result<&'a mut Simulator, Error> {
    // SAFETY: the caller guarantees p is a live handle (or null).
    unsafe { p.as_mut() }.map(|s| &mut s.0).ok_or(Error::NullArgument)
}

/// # Safety
/// `shape` must be null or readable for `ndim` values.
pub(crate) unsafe fn shape<'a>(shape: *const u64, ndim: u32) -> Result<&'a [u64], Error> {
    if ndim == 0 || ndim > 8 {
        return Err(Error::BadRank);
    }
    if shape.is_null() {
        return Err(Error::NullArgument);
    }
    // SAFETY: non-null, and the caller guarantees ndim readable values.
    Ok(unsafe { core::slice::from_raw_parts(shape, ndim as usize) })
}

/// A dtype the simulator can place: one of the eight that marshal.
pub(crate) fn dtype(code: u8) -> Result<Dtype, Error> {
    Dtype::marshallable(code).ok_or(Error::DtypeNotMarshallable)
}

/// The caller's output buffer; NULL is an error whatever `n` is.
///
/// # Safety
/// `p` must be null or writable for `n` bytes, with no other reference to
/// them during the call.
unsafe fn out_bytes<'a>(p: *mut c_void, n: usize) -> Result<&'a mut [u8], Error> {
    if p.is_null() {
        return Err(Error::NullArgument);
    }
    // SAFETY: non-null, and the caller guarantees n writable bytes.
    Ok(unsafe { core::slice::from_raw_parts_mut(p.cast::<u8>(), n) })
}

/// # Safety
/// `p` must be null or readable for `n` bytes.
unsafe fn bytes<'a>(p: *const c_void, n: usize) -> Result<&'a [u8], Error> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Error::NullArgument);
    }
    // SAFETY: non-null, and the caller guarantees n readable bytes.
    Ok(unsafe { core::slice::from_raw_parts(p.cast::<u8>(), n) })
}

/// # Safety
/// `name` must be null or a C string.
unsafe fn op_name<'a>(name: *const c_char) -> Result<&'a str, Error> {
    if name.is_null() {
        return Err(Error::NullArgument);
    }
    // SAFETY: non-null, and the caller guarantees a C string.
    unsafe { CStr::from_ptr(name) }.to_str().map_err(|_| Error::UnknownOp)
}

/// A new simulator: a mock SoC with eight reset cores. Null on failure.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_sim_new() -> *mut NeuronSim {
    Simulator::new().map_or(core::ptr::null_mut(), |s| Box::into_raw(Box::new(NeuronSim(s, std::ffi::CString::default(), Vec::new()))))
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

/// Brings a simulator back to the state `neuron_sim_new` and
/// `neuron_sim_register` gave it: HBM and SBUF zeros, the cores that ran
/// stood up afresh, no argument, output or report; the ops stay
/// registered. A process serving many runs makes its SoC once. 0, or
/// `SimResetFailed` (the handle must then be freed).
///
/// # Safety
/// `s` must be null or a live handle.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_reset(s: *mut NeuronSim) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let h = unsafe { s.as_mut() }.ok_or(Error::NullArgument)?;
            h.1 = std::ffi::CString::default();
            h.0.reset().map_err(|_| Error::SimResetFailed)
        })())
    })
}

/// Registers the ops of the linked kernel (`get_func_cnt/name/ptr`) as the
/// loader would. Returns the op count, or -code.
///
/// # Safety
/// `s` must be a live handle; the kernel's op table must be linked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_register(s: *mut NeuronSim) -> i32 {
    no_unwind(|| {
        // SAFETY: forwarded from the caller.
        match unsafe { sim(s) }.and_then(|s| s.register_linked()) {
            Ok(n) => n as i32,
            Err(e) => -e.code(),
        }
    })
}

/// Places a tensor argument (`data`: `nbytes` bytes, row-major) in HBM.
///
/// # Safety
/// `s` null or live; `shape` null or readable for `ndim`; `data` null or
/// readable for `nbytes`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_tensor(s: *mut NeuronSim, dtype_: u8, shape_: *const u64, ndim: u32, data: *const c_void, nbytes: usize) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, shape, bytes) = unsafe { (sim(s)?, shape(shape_, ndim)?, bytes(data, nbytes)?) };
            s.arg_tensor(dtype(dtype_)?, shape, bytes).map(|_| ())
        })())
    })
}

/// Places a one-element value argument of kind `kind` (2 scalar, 3 int,
/// 4 float, 5 long long, 6 double) with dtype `dtype`; `elem` is its bytes.
///
/// # Safety
/// `s` null or live; `elem` null or readable for the dtype's element size.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_value(s: *mut NeuronSim, kind: u8, dtype_: u8, elem: *const c_void) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let s = unsafe { sim(s)? };
            let k = ArgKind::from_code(kind).ok_or(Error::BadArgKind)?;
            let dt = dtype(dtype_)?;
            if elem.is_null() {
                return Err(Error::NullArgument);
            }
            // SAFETY: the caller guarantees one element (non-null, checked).
            let bytes = unsafe { bytes(elem, dt.elem_size() as usize)? };
            s.arg_value(k, dt, bytes).map(|_| ())
        })())
    })
}

/// Appends a raw 48-byte descriptor as argument of kind `kind` (for
/// testing the gates).
///
/// # Safety
/// `s` null or live; `desc` null or readable for 48 bytes, a descriptor
/// whose view reaches only simulator HBM that nothing else uses (a tensor
/// the simulator placed, or part of one): the kernel writes it.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_arg_raw(s: *mut NeuronSim, kind: u8, desc: *const u8) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, b) = unsafe { (sim(s)?, bytes(desc.cast(), DESC_BYTES)?) };
            let k = ArgKind::from_code(kind).ok_or(Error::BadArgKind)?;
            let b: &[u8; DESC_BYTES] = b.try_into().map_err(|_| Error::BadBlockSize)?;
            // SAFETY: forwarded from the caller.
            unsafe { s.push_arg(k, RawTensorDesc::from_bytes(b)) };
            Ok(())
        })())
    })
}

/// Sets the output tensor (in HBM; filled with the sentinel before each
/// run). A tensor larger than the free HBM is refused (`TensorTooLarge`).
///
/// # Safety
/// `s` null or live; `shape` null or readable for `ndim`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_set_output(s: *mut NeuronSim, dtype_: u8, shape_: *const u64, ndim: u32) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, shape) = unsafe { (sim(s)?, shape(shape_, ndim)?) };
            s.set_output(dtype(dtype_)?, shape).map(|_| ())
        })())
    })
}

/// Makes every later run write its output into the file open (for
/// writing) as `fd`, from byte `offset`, as soon as its kernels end: on a
/// thread of the simulator's while the verdict runs, its disk writes
/// started. The simulator keeps a duplicate of `fd`. After a run that
/// passed, `neuron_sim_output_sink_errno` says whether the file holds the
/// output. A negative `fd` is `NullArgument`.
///
/// # Safety
/// `s` null or live; `fd` a descriptor of this process or negative.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_set_output_sink(s: *mut NeuronSim, fd: i32, offset: u64) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let s = unsafe { sim(s)? };
            if fd < 0 {
                return Err(Error::NullArgument);
            }
            // SAFETY: the caller vouches `fd` is open in this process for
            // the call; it is only duplicated here, never closed.
            let file = unsafe { std::os::fd::BorrowedFd::borrow_raw(fd) }.try_clone_to_owned().map_err(|_| Error::NullArgument)?;
            s.set_output_sink(file.into(), offset);
            Ok(())
        })())
    })
}

/// How the last run's write into the output sink ended: 0 when the file
/// holds the output, the `errno` of the write that failed (a full disk:
/// `ENOSPC`), or -1 when no write was made (no sink set, a null `s`, or a
/// run refused before its kernels).
///
/// # Safety
/// `s` null or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_output_sink_errno(s: *mut NeuronSim) -> i32 {
    no_unwind(|| {
        // SAFETY: forwarded from the caller.
        let Ok(s) = (unsafe { sim(s) }) else { return -1 };
        match s.sink_result() {
            Some(Ok(())) => 0,
            Some(Err(e)) => e.raw_os_error().unwrap_or(libc::EIO),
            None => -1,
        }
    })
}

/// Runs op `name` on cores `0..cores` (1 or 8) in parallel. 0 when the
/// run passed; otherwise the code of the first failure: a refusal before
/// the run (`UnknownOp`, `NoOutput`, `BadCoreCount`, ...), else the first
/// error any core recorded (cores in order), a guard overwrite, an op that
/// ignored arguments, or output left unwritten. The report says which.
///
/// # Safety
/// `s` null or live; `name` null or a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_run(s: *mut NeuronSim, name: *const c_char, cores: u32) -> i32 {
    // SAFETY: forwarded from the caller.
    unsafe { run_with(s, name, |sim, n| sim.run(n, cores)) }
}

/// Runs op `name` as [`neuron_sim_run`] does, serving the `len` bytes at
/// `block` as the invocation block byte for byte (a raw block: the
/// runtime's gates decide). The block's descriptors must point at
/// tensors the simulator placed (`neuron_sim_arg_*`, `neuron_sim_set_output`,
/// `neuron_sim_block` gives the block it would build).
///
/// # Safety
/// `s` null or live; `name` null or a C string; `block` null or readable
/// for `len` bytes, its descriptors as `neuron_sim_arg_raw` requires.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_run_block(s: *mut NeuronSim, name: *const c_char, cores: u32, block: *const u8, len: usize) -> i32 {
    // SAFETY: forwarded from the caller.
    let b = match unsafe { bytes(block.cast(), len) } {
        Ok(b) if !b.is_empty() => b,
        Ok(_) => return Error::BadBlockSize.code(),
        Err(e) => return e.code(),
    };
    // SAFETY: forwarded from the caller.
    unsafe { run_with(s, name, |sim, n| sim.run_block(n, cores, b)) }
}

/// Copies the invocation block the pending arguments and output make into
/// `dst` (at most `cap` bytes) and stores its length in `*len`. 0 or code;
/// `cap` too small is `BadBlockSize` (with `*len` set).
///
/// # Safety
/// `s` null or live; `dst` null or writable for `cap` bytes; `len` null
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_block(s: *mut NeuronSim, dst: *mut u8, cap: usize, len: *mut usize) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let s = unsafe { sim(s)? };
            if dst.is_null() || len.is_null() {
                return Err(Error::NullArgument);
            }
            let b = s.block()?;
            // SAFETY: len is non-null and writable (caller).
            unsafe { len.write(b.len()) };
            if b.len() > cap {
                return Err(Error::BadBlockSize);
            }
            // SAFETY: dst is non-null and writable for cap >= b.len() bytes.
            unsafe { core::ptr::copy_nonoverlapping(b.as_ptr(), dst, b.len()) };
            Ok(())
        })())
    })
}

/// Lets the next run on `s` leave output elements unwritten: they are
/// still listed in the report, but do not fail the run. One run only.
///
/// # Safety
/// `s` null or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_allow_unwritten_output(s: *mut NeuronSim) -> i32 {
    // SAFETY: forwarded from the caller.
    code(unsafe { sim(s) }.map(Simulator::allow_unwritten_output))
}

/// Keeps the next run's writer map on `s` (`neuron_sim_writer_map`).
/// One run only.
///
/// # Safety
/// `s` null or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_keep_writer_map(s: *mut NeuronSim) -> i32 {
    // SAFETY: forwarded from the caller.
    code(unsafe { sim(s) }.map(Simulator::keep_writer_map))
}

/// Who wrote the last run's output: at most `cap` cells into `dst`, their
/// count in `*len` and the output's elements in `*elements`. Cell `i`
/// covers elements `[i * elements / cells, (i + 1) * elements / cells)`
/// (one element per cell up to 4096 elements, runs of them beyond); its
/// bits 0-7 are the cores that wrote there, bit 8 a write no hook saw
/// (writer unknown), bit 9 an element never written, bit 10 an element
/// two cores wrote. 0 or code: `NoRunResult` when the run kept no map
/// (not asked for with `neuron_sim_keep_writer_map`, no output placed,
/// or refused), `NullArgument` for a NULL `len` or `elements` (or `dst`
/// with `cap` > 0).
///
/// # Safety
/// `s` null or live; `dst` null or writable for `cap` values; `len` and
/// `elements` null or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_writer_map(s: *mut NeuronSim, dst: *mut u16, cap: usize, len: *mut usize, elements: *mut u64) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let s = unsafe { sim(s)? };
            if len.is_null() || elements.is_null() || (dst.is_null() && cap != 0) {
                return Err(Error::NullArgument);
            }
            let m = s.writer_map().ok_or(Error::NoRunResult)?;
            let k = m.cells.len().min(cap);
            // SAFETY: len and elements non-null and writable; dst writable
            // for cap >= k values (or k = 0).
            unsafe {
                len.write(m.cells.len());
                elements.write(m.elements);
                if k > 0 {
                    core::ptr::copy_nonoverlapping(m.cells.as_ptr(), dst, k);
                }
            }
            Ok(())
        })())
    })
}

/// A run through `f`, with the report text kept on the handle.
///
/// # Safety
/// `s` null or live; `name` null or a C string.
unsafe fn run_with(s: *mut NeuronSim, name: *const c_char, f: impl FnOnce(&mut Simulator, &str) -> Result<super::RunReport, Error>) -> i32 {
    no_unwind(|| {
        // SAFETY: the caller guarantees s is live (or null).
        let Some(h) = (unsafe { s.as_mut() }) else { return Error::NullArgument.code() };
        // SAFETY: forwarded from the caller.
        let r = unsafe { op_name(name) }.and_then(|n| f(&mut h.0, n));
        let text = match &r {
            Ok(rep) => std::format!("{rep}"),
            Err(e) => std::format!("run refused: {e}\n"),
        };
        h.1 = std::ffi::CString::new(text.replace('\0', " ")).unwrap_or_default();
        h.2 = match &r {
            Ok(rep) => core::iter::once(rep.verdict_ns).chain(rep.cores.iter().map(|c| c.kernel_ns)).collect(),
            Err(_) => Vec::new(),
        };
        match r {
            Ok(rep) => rep.code(),
            Err(e) => e.code(),
        }
    })
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

/// Copies the output tensor's bytes into `dst` (at most `n`). 0 or code:
/// `NoRunResult` before a run or after a failed one (no placeholder
/// bytes), `NullArgument` for a NULL `dst`.
///
/// # Safety
/// `s` null or live; `dst` null or writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_read_output(s: *mut NeuronSim, dst: *mut c_void, n: usize) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, d) = unsafe { (sim(s)?, out_bytes(dst, n)?) };
            s.read_output_into(d).map(|_| ())
        })())
    })
}

/// Where the last run's time went, in ns: `dst[0]` the run outside the
/// kernels (the output's sentinel fill, the input pages' hashes, every
/// check of the verdict), then each core's kernel, in core order. Copies
/// at most `cap` values and stores how many there are in `*len` (0
/// before a run or after a refused one). 0 or code.
///
/// # Safety
/// `s` null or live; `dst` null or writable for `cap` values; `len` null
/// or writable.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_timings(s: *mut NeuronSim, dst: *mut u64, cap: usize, len: *mut usize) -> i32 {
    no_unwind(|| {
        // SAFETY: the caller guarantees s is live (or null).
        let Some(h) = (unsafe { s.as_ref() }) else { return Error::NullArgument.code() };
        if len.is_null() || (dst.is_null() && cap != 0) {
            return Error::NullArgument.code();
        }
        let k = h.2.len().min(cap);
        // SAFETY: len non-null and writable; dst writable for cap >= k
        // values (or k = 0).
        unsafe {
            *len = h.2.len();
            if k > 0 {
                core::ptr::copy_nonoverlapping(h.2.as_ptr(), dst, k);
            }
        }
        0
    })
}

/// Copies `n` bytes of the output tensor from byte `offset` on into `dst`
/// (a caller that writes the output out a piece at a time). 0 or code:
/// `NoRunResult` before a run or after a failed one, `BufferTooSmall`
/// for a range past the output's end, `NullArgument` for a NULL `dst`.
///
/// # Safety
/// `s` null or live; `dst` null or writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_read_output_at(s: *mut NeuronSim, offset: u64, dst: *mut c_void, n: usize) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, d) = unsafe { (sim(s)?, out_bytes(dst, n)?) };
            s.read_output_at(offset, d)
        })())
    })
}

/// Copies the output tensor's bytes as they are now into `dst` (at most
/// `n`), whatever the last run did: for checking that a refused run
/// wrote nothing (`neuron_sim_read_output` refuses after a failed run).
///
/// # Safety
/// `s` null or live; `dst` null or writable for `n` bytes.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_inspect_output(s: *mut NeuronSim, dst: *mut c_void, n: usize) -> i32 {
    no_unwind(|| {
        code((|| {
            // SAFETY: forwarded from the caller.
            let (s, d) = unsafe { (sim(s)?, out_bytes(dst, n)?) };
            s.inspect_output(d).map(|_| ())
        })())
    })
}

/// Fills the output tensor's storage with `byte` (a sentinel, to check
/// later that a rejected run wrote nothing). 0 or code.
///
/// # Safety
/// `s` null or live.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_sim_fill_output(s: *mut NeuronSim, byte: u8) -> i32 {
    // SAFETY: forwarded from the caller.
    no_unwind(|| code(unsafe { sim(s) }.and_then(|s| s.fill_output(byte))))
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
