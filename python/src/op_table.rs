//! This extension's own kernel op table: empty.
//!
//! Through `customop`, the extension links the host `neuroncustomop`
//! library, whose simulator C API (exported from a shared object like any
//! `#[no_mangle]` function of its dependencies) reads the op table of the
//! kernel linked beside it: `get_func_cnt`, `get_func_name`,
//! `get_func_ptr`, which a kernel's generated wrapper defines. No kernel
//! is linked into the extension (each built library carries its own
//! kernel, table and simulator, and runs through its own exports), so the
//! extension defines the table with no ops; without it, the interpreter's
//! `dlopen` refuses the module for those undefined symbols.

use std::ffi::c_char;

/// No ops.
#[no_mangle]
pub extern "C" fn get_func_cnt() -> i32 {
    0
}

/// No op has a name.
#[no_mangle]
pub extern "C" fn get_func_name(_i: i32) -> *const c_char {
    std::ptr::null()
}

/// No op has a launcher.
#[no_mangle]
pub extern "C" fn get_func_ptr(_i: i32) -> Option<unsafe extern "C" fn() -> i32> {
    None
}
