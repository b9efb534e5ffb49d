//! Reading why a call failed.

use core::ffi::c_char;
use neuron_runtime::Error;

/// The code of the last error on the calling core (0 if none yet).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_last_error() -> i32 {
    crate::binding::last_error()
}

/// The message for error `code`, a static NUL-terminated string; an
/// unknown code gets a generic message. Never null.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_error_message(code: i32) -> *const c_char {
    match Error::from_code(code) {
        Some(e) => e.message_c().as_ptr().cast(),
        None if code == 0 => c"no error".as_ptr(),
        None => c"unknown error code".as_ptr(),
    }
}

/// Records `DimOutOfRange` (96) as the calling core's error and returns
/// 0: what the C++ `size(d)` and `stride(d)` give for a dimension past
/// the tensor's rank, where libtorch throws, so the run fails naming it
/// (not with a later error from the 0).
#[unsafe(no_mangle)]
#[cold]
pub extern "C" fn neuron_dim_out_of_range() -> i64 {
    let _ = crate::binding::with_core(|_| Err::<(), _>(neuron_runtime::Error::DimOutOfRange));
    0
}

/// The device `<assert.h>`'s failure path: stops the core with the abort
/// report (`AssertFailed`, 98), naming the expression `expr` at `file`:
/// `line` (either string null: `?`). Never returns.
///
/// # Safety
/// `expr` and `file` are null or NUL-terminated strings.
#[unsafe(no_mangle)]
#[cold]
pub unsafe extern "C" fn neuron_assert_fail(expr: *const core::ffi::c_char, file: *const core::ffi::c_char, line: u32) -> ! {
    // SAFETY: the caller's contract: null or a NUL-terminated string.
    let text = |p: *const core::ffi::c_char| if p.is_null() { "?" } else { unsafe { core::ffi::CStr::from_ptr(p) }.to_str().unwrap_or("?") };
    crate::abort::abort_at(neuron_runtime::Error::AssertFailed, text(expr), text(file), line)
}

/// Clears the calling core's last error, and marks every error recorded
/// so far as handled: a kernel that probes an error on purpose says so
/// with this call, and the simulator's verdict then does not fail the run
/// for it (the report still lists it).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_clear_error() {
    let _ = crate::binding::with_core(|b| {
        b.last_error = 0;
        b.errors.acknowledge();
        Ok(())
    });
}

/// The first error the calling core recorded that the kernel did not
/// acknowledge with [`neuron_clear_error`] (0 if none): what the
/// simulator's verdict fails a run for, for a device-side runner to report
/// the same way.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_first_unhandled_error() -> i32 {
    crate::binding::with_core(|b| Ok(b.errors.first_unacknowledged().map_or(0, Error::code))).unwrap_or_else(Error::code)
}
