//! An alternate signal stack for a thread that runs an op: a stack
//! overflow's SIGSEGV cannot run its handler on the overflowed stack, so
//! without one the crash report is never written. A Rust program gives
//! its threads one; a Python process's threads, and threads of a C host,
//! have none.

use core::ffi::c_void;

/// Bytes of the alternate stack (the crash handler formats one line).
const SIZE: usize = 64 << 10;

/// An alternate stack this module installed on the calling thread;
/// dropping it uninstalls and frees it (on the same thread).
pub(crate) struct AltStack {
    map: *mut c_void,
}

impl AltStack {
    /// Installs an alternate stack on the calling thread if it has none
    /// (None: it has one, or none could be made; the run goes on).
    pub(crate) fn ensure() -> Option<Self> {
        // SAFETY: querying the thread's alternate stack into a zeroed
        // `stack_t`; then mapping a fresh private region and installing
        // it, undone on failure.
        unsafe {
            let mut old: libc::stack_t = core::mem::zeroed();
            if libc::sigaltstack(core::ptr::null(), &mut old) != 0 || old.ss_flags & libc::SS_DISABLE == 0 {
                return None;
            }
            let map = libc::mmap(core::ptr::null_mut(), SIZE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
            if map == libc::MAP_FAILED {
                return None;
            }
            let st = libc::stack_t { ss_sp: map, ss_flags: 0, ss_size: SIZE };
            if libc::sigaltstack(&st, core::ptr::null_mut()) != 0 {
                libc::munmap(map, SIZE);
                return None;
            }
            Some(Self { map })
        }
    }
}

impl Drop for AltStack {
    fn drop(&mut self) {
        // SAFETY: disabling the alternate stack this value installed on
        // this thread (the guard that owns it lives on the thread, outside
        // any handler), then unmapping it.
        unsafe {
            let off = libc::stack_t { ss_sp: core::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
            libc::sigaltstack(&off, core::ptr::null_mut());
            libc::munmap(self.map, SIZE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_thread_without_one_gets_one_and_loses_it_after() {
        std::thread::spawn(|| {
            let current = || {
                // SAFETY: a query into a zeroed stack_t.
                unsafe {
                    let mut s: libc::stack_t = core::mem::zeroed();
                    libc::sigaltstack(core::ptr::null(), &mut s);
                    s
                }
            };
            // Rust may have given this thread one: start from none.
            let off = libc::stack_t { ss_sp: core::ptr::null_mut(), ss_flags: libc::SS_DISABLE, ss_size: 0 };
            // SAFETY: disabling this thread's alternate stack (its memory
            // stays Rust's, freed at thread exit).
            unsafe { libc::sigaltstack(&off, core::ptr::null_mut()) };
            let a = AltStack::ensure().expect("installed");
            assert_eq!(current().ss_sp, a.map);
            assert_eq!(current().ss_size, SIZE);
            assert!(AltStack::ensure().is_none(), "one is there already");
            drop(a);
            assert_ne!(current().ss_flags & libc::SS_DISABLE, 0);
        })
        .join()
        .unwrap();
    }
}
