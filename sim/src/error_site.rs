//! Host: the C++ header tells where in the kernel an error happened, on
//! its error path only (the device's header makes no such call): the
//! accessor's caller's file and line, captured by default arguments at the
//! kernel's own call (`__builtin_FILE()`, `__builtin_LINE()`).

use crate::binding::site::ErrorSite;
use core::ffi::{c_char, CStr};
use std::string::ToString;

/// Where the error the calling core logged last happened: `file` and
/// `line` in the kernel's source, `tensor` a SoC address inside the tensor
/// accessed (0: none), and, when `dims_left` is not 0, the `index` that
/// fell outside a dimension of `size` elements with `dims_left`
/// dimensions left to index (this one included; `0xFFFFFFFF`: `index` is
/// an element of the tensor in order, of `size`). Kept once per error;
/// nothing when no error is logged or no core is bound.
///
/// # Safety
/// `file` is null or a NUL-terminated string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_error_site(tensor: u64, index: i64, size: i64, dims_left: u32, file: *const c_char, line: u32) {
    let file = match file.is_null() {
        true => "?".to_string(),
        // SAFETY: non-null and NUL-terminated, as the caller promises.
        false => unsafe { CStr::from_ptr(file) }.to_string_lossy().into_owned(),
    };
    let index = (dims_left != 0).then_some((index, size, dims_left));
    // Not `with_core`: a call that finds no core bound must not log an
    // error of its own, which this site would then name.
    if crate::binding::is_bound() {
        let _ = crate::binding::with_core(|b| {
            b.note_site(ErrorSite { entry: 0, tensor, index, file, line, detail: None });
            Ok(())
        });
    }
}
