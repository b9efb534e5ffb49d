//! The two version axes of SPEC §9.

use core::ffi::c_char;

/// Package version of the original this library reimplements.
pub const PACKAGE_VERSION: &core::ffi::CStr = c"0.21.2.0";
/// The ucode-lib ABI version string (`SUNDA_UCODE_LIB_VERSION_STR`).
pub const UCODE_LIB_VERSION: &core::ffi::CStr = c"1.21.1.0";

/// The package version, "0.21.2.0".
#[unsafe(no_mangle)]
pub extern "C" fn neuron_customop_version() -> *const c_char {
    PACKAGE_VERSION.as_ptr()
}

/// The ucode-lib ABI version, "1.21.1.0".
#[unsafe(no_mangle)]
pub extern "C" fn neuron_ucode_lib_version() -> *const c_char {
    UCODE_LIB_VERSION.as_ptr()
}
