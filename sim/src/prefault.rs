//! Faulting a tensor's pages of the simulated HBM in at once before the
//! host first writes it whole (an input placed, the output's sentinel
//! fill): one `madvise(MADV_POPULATE_WRITE)` instead of a page fault per
//! 4 KiB page inside the copy, which was most of a large copy's time.
//! Best effort: a kernel without it (before Linux 5.14) faults as before.

/// Populates the host pages of `[p, p + len)` for writing.
pub fn populate(p: *mut u8, len: u64) {
    const PAGE: usize = 4096;
    let start = p as usize & !(PAGE - 1);
    let end = (p as usize).saturating_add(len as usize);
    if len == 0 {
        return;
    }
    // SAFETY: madvise only changes how the kernel backs the pages of a
    // range the caller resolved to the SoC's mapping (rounded down to its
    // page); POPULATE_WRITE never changes their contents.
    let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE) };
}
