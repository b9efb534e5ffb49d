//! QEMU Xtensa semihosting (`simcall`; QEMU must run with
//! `-semihosting-config enable=on`, otherwise `simcall` is a no-op).
//!
//! Call number in a2, arguments in a3..a5; result in a2, errno in a3.

/// `exit(status)`.
pub const SYS_EXIT: u32 = 1;
/// `write(fd, buf, len)`.
pub const SYS_WRITE: u32 = 4;
/// `argc()`.
pub const SYS_ARGC: u32 = 1000;
/// Bytes needed by `argv`: pointer array (argc + 1) plus the strings.
pub const SYS_ARGV_SZ: u32 = 1001;
/// `argv(buf)`: fills `buf` with the pointer array and the strings.
pub const SYS_ARGV: u32 = 1002;

/// Raw semihosting call. Returns `(a2, a3)` = (result, errno).
///
/// # Safety
/// The arguments must be valid for the call: any pointer argument must
/// point to memory valid for the access the call makes (reads for `write`,
/// writes of the reported size for `argv`).
#[inline(always)]
pub unsafe fn simcall(nr: u32, a: u32, b: u32, c: u32) -> (i32, i32) {
    let ret: i32;
    let errno: i32;
    // SAFETY: `simcall` (encoded by hand: LLVM does not know the mnemonic)
    // traps to QEMU, which reads a2..a5 and writes a2/a3; the caller
    // guarantees the pointer arguments. Memory is not marked untouched.
    unsafe {
        core::arch::asm!(
            ".byte 0x00, 0x51, 0x00",
            inout("a2") nr as i32 => ret,
            inout("a3") a => errno,
            in("a4") b,
            in("a5") c,
            options(nostack),
        );
    }
    (ret, errno)
}

/// Write `buf` to host file descriptor `fd` (1 = stdout, 2 = stderr).
/// Returns the number of bytes written, or a negative value on error.
pub fn write(fd: u32, buf: &[u8]) -> i32 {
    // SAFETY: `buf` is valid for reads of `buf.len()` bytes.
    unsafe { simcall(SYS_WRITE, fd, buf.as_ptr() as u32, buf.len() as u32).0 }
}

/// Terminate QEMU with `status` (QEMU exits with `status & 0xff`).
pub fn exit(status: u32) -> ! {
    // SAFETY: `exit` takes no pointers.
    unsafe { simcall(SYS_EXIT, status, 0, 0) };
    // Only reached when semihosting is disabled: stop the core; the
    // runner's timeout reports the hang.
    super::park()
}

/// Number of semihosting arguments (`arg=` items of `-semihosting-config`).
pub fn argc() -> u32 {
    // SAFETY: no pointers.
    unsafe { simcall(SYS_ARGC, 0, 0, 0).0 as u32 }
}

/// Size in bytes of the buffer [`argv`] needs.
pub fn argv_size() -> u32 {
    // SAFETY: no pointers.
    unsafe { simcall(SYS_ARGV_SZ, 0, 0, 0).0 as u32 }
}

/// Fill `buf` with argv: `argc + 1` pointers (absolute addresses, last one
/// 0) followed by the NUL-terminated strings. Returns `false` (without
/// calling QEMU) if `buf` is smaller than [`argv_size`].
pub fn argv(buf: &mut [u32]) -> bool {
    if (argv_size() as usize) > core::mem::size_of_val(buf) {
        return false;
    }
    // SAFETY: `buf` is valid for writes of `argv_size()` bytes (checked).
    unsafe { simcall(SYS_ARGV, buf.as_mut_ptr() as u32, 0, 0) };
    true
}
