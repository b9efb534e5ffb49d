//! Where a finding was first made: the return addresses on the stack of
//! the access that made it, for the tools to name the kernel's line.
//! Taken once per finding (kind, region, core), so it costs a run
//! nothing; glibc's `backtrace` walks the unwind tables, which the
//! runtime's and the kernel's (C++) frames both have.

use std::vec::Vec;

/// The most frames kept: the hooks between a kernel's access and the
/// sanitizer are about 20 deep in a debug build.
pub const MAX_FRAMES: usize = 48;

/// The return addresses of the calling stack, innermost first (empty
/// where there is no glibc).
pub fn here() -> Vec<usize> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        let mut buf = [core::ptr::null_mut::<core::ffi::c_void>(); MAX_FRAMES];
        // SAFETY: `backtrace` writes at most its second argument's count
        // of pointers into the buffer, which has that many.
        let n = unsafe { libc::backtrace(buf.as_mut_ptr(), MAX_FRAMES as libc::c_int) };
        buf[..n.clamp(0, MAX_FRAMES as libc::c_int) as usize].iter().map(|p| p.addr()).collect()
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    Vec::new()
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_callers_frames_are_taken() {
        let f = super::here();
        assert!(f.len() > 2 && f.iter().all(|&p| p != 0), "{f:?}");
    }
}
