//! What libc++ needs out of line on the device: `operator new`
//! and `delete` in every form on the core's libc heap, `std::nothrow`, the
//! abort paths of a `-fno-exceptions` build (`neuron_libcxx_abort`, which
//! the device `__config_site` routes `_LIBCPP_VERBOSE_ABORT` to) and the
//! pure-virtual-call traps, and `__cxa_atexit` for function-local statics.
//!
//! The symbols are the Itanium C++ ABI's names for the Xtensa target
//! (`size_t` is `unsigned int`, mangled `j`), so a kernel compiled by
//! clang links against them like against libc++abi. As in the vendor's
//! `-fno-exceptions` library, a throwing `new` that gets no memory does not
//! return null: it stops the core with the abort report (`OutOfMemory`,
//! the size asked for); the `nothrow` forms return null.

use crate::abort::abort_at;
use crate::binding::with_core;
use core::ffi::{c_char, c_int, c_void, CStr};
use core::fmt::Write;
use neuron_runtime::printf::LineBuf;
use neuron_runtime::Error;

/// The place the abort report names for a stop inside libc++ (which has
/// no file and line of its own to give).
const WHERE: &str = "libc++";

/// A block of `n` bytes aligned to `align` (0: the heap's own 64), or the
/// heap's refusal. A zero size asks for one byte: every `new` returns a
/// distinct pointer.
fn allocate(n: usize, align: usize) -> Result<*mut c_void, Error> {
    let n = n.max(1);
    let p =
        crate::trace::quietly!(with_core(|b| if align == 0 { b.state.libc().malloc(n) } else { b.state.libc().memalign(align, n) })).map(|p| p.as_ptr().cast());
    if let Ok(p) = p {
        crate::trace::block(p, n, crate::trace::what::MALLOC);
    }
    p
}

/// The throwing forms: the block, or the abort report naming the size.
fn new_or_abort(n: usize, align: usize) -> *mut c_void {
    match allocate(n, align) {
        Ok(p) => p,
        Err(e) => {
            let mut what = LineBuf::<120>::new();
            let _ = write!(what, "operator new({n} bytes");
            if align != 0 {
                let _ = write!(what, ", align {align}");
            }
            let _ = write!(what, ") found no room on the core's libc heap (-fno-exceptions: no std::bad_alloc)");
            abort_at(e, core::str::from_utf8(what.as_bytes()).unwrap_or("operator new"), WHERE, 0)
        }
    }
}

/// The `nothrow` forms: null when the heap has no room.
fn new_or_null(n: usize, align: usize) -> *mut c_void {
    allocate(n, align).unwrap_or_default()
}

/// # Safety
/// As [`super::heap::free`] (C++'s `delete`: `p` is null or a block `new`
/// handed out that is no longer used).
unsafe fn delete(p: *mut c_void) {
    // SAFETY: forwarded from the caller.
    unsafe { super::heap::free(p) }
}

/// `std::nothrow` (an empty `std::nothrow_t`, one byte as every object).
#[unsafe(export_name = "_ZSt7nothrow")]
pub static NOTHROW: u8 = 0;

/// `operator new(size_t)`.
#[unsafe(export_name = "_Znwj")]
pub extern "C" fn new(n: usize) -> *mut c_void {
    new_or_abort(n, 0)
}

/// `operator new[](size_t)`.
#[unsafe(export_name = "_Znaj")]
pub extern "C" fn new_array(n: usize) -> *mut c_void {
    new_or_abort(n, 0)
}

/// `operator new(size_t, const std::nothrow_t&)`.
#[unsafe(export_name = "_ZnwjRKSt9nothrow_t")]
pub extern "C" fn new_nothrow(n: usize, _: *const u8) -> *mut c_void {
    new_or_null(n, 0)
}

/// `operator new[](size_t, const std::nothrow_t&)`.
#[unsafe(export_name = "_ZnajRKSt9nothrow_t")]
pub extern "C" fn new_array_nothrow(n: usize, _: *const u8) -> *mut c_void {
    new_or_null(n, 0)
}

/// `operator new(size_t, std::align_val_t)`.
#[unsafe(export_name = "_ZnwjSt11align_val_t")]
pub extern "C" fn new_aligned(n: usize, align: usize) -> *mut c_void {
    new_or_abort(n, align)
}

/// `operator new[](size_t, std::align_val_t)`.
#[unsafe(export_name = "_ZnajSt11align_val_t")]
pub extern "C" fn new_array_aligned(n: usize, align: usize) -> *mut c_void {
    new_or_abort(n, align)
}

/// `operator new(size_t, std::align_val_t, const std::nothrow_t&)`.
#[unsafe(export_name = "_ZnwjSt11align_val_tRKSt9nothrow_t")]
pub extern "C" fn new_aligned_nothrow(n: usize, align: usize, _: *const u8) -> *mut c_void {
    new_or_null(n, align)
}

/// `operator new[](size_t, std::align_val_t, const std::nothrow_t&)`.
#[unsafe(export_name = "_ZnajSt11align_val_tRKSt9nothrow_t")]
pub extern "C" fn new_array_aligned_nothrow(n: usize, align: usize, _: *const u8) -> *mut c_void {
    new_or_null(n, align)
}

/// `operator delete(void*)`; every form below frees the same way (the
/// heap knows each block's size and alignment).
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdlPv")]
pub unsafe extern "C" fn delete_plain(p: *mut c_void) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete[](void*)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdaPv")]
pub unsafe extern "C" fn delete_array(p: *mut c_void) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete(void*, size_t)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdlPvj")]
pub unsafe extern "C" fn delete_sized(p: *mut c_void, _: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete[](void*, size_t)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdaPvj")]
pub unsafe extern "C" fn delete_array_sized(p: *mut c_void, _: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete(void*, const std::nothrow_t&)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdlPvRKSt9nothrow_t")]
pub unsafe extern "C" fn delete_nothrow(p: *mut c_void, _: *const u8) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete[](void*, const std::nothrow_t&)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdaPvRKSt9nothrow_t")]
pub unsafe extern "C" fn delete_array_nothrow(p: *mut c_void, _: *const u8) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete(void*, std::align_val_t)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdlPvSt11align_val_t")]
pub unsafe extern "C" fn delete_aligned(p: *mut c_void, _: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete[](void*, std::align_val_t)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdaPvSt11align_val_t")]
pub unsafe extern "C" fn delete_array_aligned(p: *mut c_void, _: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete(void*, size_t, std::align_val_t)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdlPvjSt11align_val_t")]
pub unsafe extern "C" fn delete_sized_aligned(p: *mut c_void, _: usize, _: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete[](void*, size_t, std::align_val_t)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdaPvjSt11align_val_t")]
pub unsafe extern "C" fn delete_array_sized_aligned(p: *mut c_void, _: usize, _: usize) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete(void*, std::align_val_t, const std::nothrow_t&)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdlPvSt11align_val_tRKSt9nothrow_t")]
pub unsafe extern "C" fn delete_aligned_nothrow(p: *mut c_void, _: usize, _: *const u8) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// `operator delete[](void*, std::align_val_t, const std::nothrow_t&)`.
///
/// # Safety
/// As C++'s `delete`: `p` is null or a live block of `new`.
#[unsafe(export_name = "_ZdaPvSt11align_val_tRKSt9nothrow_t")]
pub unsafe extern "C" fn delete_array_aligned_nothrow(p: *mut c_void, _: usize, _: *const u8) {
    // SAFETY: forwarded from the caller.
    unsafe { delete(p) }
}

/// Where the device `__config_site` sends `_LIBCPP_VERBOSE_ABORT`: a
/// `throw` in a `-fno-exceptions` build (`std::vector` past `max_size()`,
/// `at()` out of range, ...) or a failed hardening check. `format` is
/// libc++'s message; its first `%s` is `arg` when that is not null (the
/// only argument libc++'s messages carry; one with other arguments comes
/// with `arg` null and is shown as it is). Stops the core with the abort
/// report (`CxxLibraryAbort`, 99).
///
/// # Safety
/// `format` and `arg` are null or NUL-terminated strings.
#[unsafe(no_mangle)]
#[cold]
pub unsafe extern "C" fn neuron_libcxx_abort(format: *const c_char, arg: *const c_char) -> ! {
    // Bytes, not `str` searching and slicing: their panic paths would pull
    // core's Unicode tables into every image that can reach this.
    // SAFETY: the caller's contract: null or a NUL-terminated string.
    let bytes = |p: *const c_char| if p.is_null() { None } else { Some(unsafe { CStr::from_ptr(p) }.to_bytes()) };
    let format = bytes(format).unwrap_or(b"?");
    let mut what = LineBuf::<200>::new();
    let mut put = |b: &[u8]| {
        let _ = what.write_str(core::str::from_utf8(b).unwrap_or("?"));
    };
    match bytes(arg).zip(format.windows(2).position(|w| w == b"%s")) {
        Some((a, at)) => {
            put(format.get(..at).unwrap_or_default());
            put(a);
            put(format.get(at + 2..).unwrap_or_default());
        }
        None => put(format),
    }
    abort_at(Error::CxxLibraryAbort, core::str::from_utf8(what.as_bytes()).unwrap_or("?"), WHERE, 0)
}

/// A call through a pure virtual function (an object used during its
/// base's construction or destruction): the abort report.
#[unsafe(no_mangle)]
#[cold]
pub extern "C" fn __cxa_pure_virtual() -> ! {
    abort_at(Error::CxxLibraryAbort, "pure virtual function called", WHERE, 0)
}

/// A call through a deleted virtual function: the abort report.
#[unsafe(no_mangle)]
#[cold]
pub extern "C" fn __cxa_deleted_virtual() -> ! {
    abort_at(Error::CxxLibraryAbort, "deleted virtual function called", WHERE, 0)
}

/// `__cxa_atexit`: a function-local static with a destructor (`static
/// std::vector<float> scratch;`) registers it on first use. A kernel image
/// never exits (the cores are stopped, not shut down), so nothing is
/// recorded and the destructor never runs: 0, success.
#[unsafe(no_mangle)]
pub extern "C" fn __cxa_atexit(_destructor: Option<unsafe extern "C" fn(*mut c_void)>, _object: *mut c_void, _dso: *mut c_void) -> c_int {
    0
}

/// `__dso_handle`: the image's identity for `__cxa_atexit` (one image, one
/// handle; its value is never read).
#[unsafe(no_mangle)]
#[allow(non_upper_case_globals)]
pub static __dso_handle: u8 = 0;
