//! Sparse physical memory backed by a memfd: pages exist only once touched,
//! and the same bytes can be mapped at several host addresses (the whole
//! range for the SoC's own view, 16/64 MiB slices for translation windows).

use std::io;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

/// An extent of data outside the kept range that [`PhysMemory::zero_keeping`]
/// zeroes in place rather than gives back, and how many bytes of such
/// extents it keeps at most: zeroing a page costs less than giving it back
/// and faulting it in again.
const SMALL_EXTENT: u64 = 64 << 10;
const SMALL_KEPT: u64 = 1 << 20;

/// A range of SoC physical memory.
#[derive(Debug)]
pub struct PhysMemory {
    fd: libc::c_int,
    size: u64,
    /// The whole memory mapped once, for the SoC side (DMA, test access).
    view: NonNull<u8>,
    /// The last extent [lo, hi) found to be data, not a hole (data never
    /// becomes a hole again, so it stays true; the two halves are written
    /// apart, and a mixed pair only makes `is_hole` say "not a hole").
    data_lo: AtomicU64,
    data_hi: AtomicU64,
}

// SAFETY: the struct holds a file descriptor and a mapping address; the
// bytes behind them are plain shared memory, accessed only through raw
// pointers (as on a real SoC, concurrent access is the user's concern).
unsafe impl Send for PhysMemory {}
// SAFETY: as above; no Rust reference to the memory is ever formed here.
unsafe impl Sync for PhysMemory {}

impl PhysMemory {
    /// Creates `size` bytes of zeroed memory; nothing is committed until
    /// written. `size` must be a multiple of the page size.
    pub fn new(name: &str, size: u64) -> io::Result<Self> {
        let cname = std::ffi::CString::new(name).map_err(io::Error::other)?;
        // SAFETY: memfd_create takes a NUL-terminated name and flags.
        let fd = unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Self::own(fd, size, 0)
    }

    /// The memory of a caller's file (a memfd another process maps too):
    /// a duplicate of `fd` is kept; the file is made `size` bytes long if
    /// it is shorter (never shortened); its bytes are kept as they are.
    pub fn on_file(fd: libc::c_int, size: u64) -> io::Result<Self> {
        // SAFETY: fstat fills a plain struct; a bad descriptor is an error.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return Err(io::Error::last_os_error());
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFREG {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "the memory's file is not a regular file (a memfd)"));
        }
        // SAFETY: duplicating a descriptor the caller holds open.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if own < 0 {
            return Err(io::Error::last_os_error());
        }
        Self::own(own, size, st.st_size as u64)
    }

    /// Makes the descriptor this value now owns (`now` bytes long) at
    /// least `size` bytes long and maps its first `size`.
    fn own(fd: libc::c_int, size: u64, now: u64) -> io::Result<Self> {
        // SAFETY: fd is ours; ftruncate only lengthens it.
        if now < size && unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing the descriptor we own.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        // SAFETY: a fresh shared mapping of the whole file at an address the
        // kernel chooses; MAP_NORESERVE keeps untouched pages uncommitted.
        let p = unsafe { libc::mmap(std::ptr::null_mut(), size as usize, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_NORESERVE, fd, 0) };
        if p == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            // SAFETY: closing the descriptor we own.
            unsafe { libc::close(fd) };
            return Err(e);
        }
        let view = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Self { fd, size, view, data_lo: AtomicU64::new(0), data_hi: AtomicU64::new(0) })
    }

    /// Bytes in this memory.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether `[offset, offset + len)` lies in a hole of the memfd: never
    /// written, it reads as zeros. (A page written, or faulted in by a read,
    /// is data: the answer errs towards "not a hole".)
    pub fn is_hole(&self, offset: u64, len: u64) -> bool {
        let Some(end) = offset.checked_add(len).filter(|&e| len != 0 && e <= self.size) else { return false };
        if offset >= self.data_lo.load(Ordering::Relaxed) && end <= self.data_hi.load(Ordering::Relaxed) {
            return false;
        }
        // SAFETY: lseek on the memfd this value owns; it moves only the
        // descriptor's offset, which nothing else uses (the memory is
        // reached through the mapping).
        let next = unsafe { libc::lseek(self.fd, offset as libc::off_t, libc::SEEK_DATA) };
        if next < 0 {
            // ENXIO: no data at or after `offset`.
            return io::Error::last_os_error().raw_os_error() == Some(libc::ENXIO);
        }
        if next as u64 >= end {
            return true;
        }
        // SAFETY: as above.
        let hole = unsafe { libc::lseek(self.fd, next, libc::SEEK_HOLE) };
        if hole > next {
            self.data_lo.store(next as u64, Ordering::Relaxed);
            self.data_hi.store(hole as u64, Ordering::Relaxed);
        }
        false
    }

    /// Whether every page of `[offset, offset + len)` holds data (written
    /// before, or kept by [`zero_keeping`](Self::zero_keeping)): a store
    /// through the view then faults no fresh page in, and is cheaper than
    /// a write through the file. A hint: a wrong answer costs time only.
    pub fn is_data(&self, offset: u64, len: u64) -> bool {
        let Some(end) = offset.checked_add(len).filter(|&e| len != 0 && e <= self.size) else { return false };
        if offset >= self.data_lo.load(Ordering::Relaxed) && end <= self.data_hi.load(Ordering::Relaxed) {
            return true;
        }
        // SAFETY: lseek on the memfd this value owns (as in is_hole).
        let hole = unsafe { libc::lseek(self.fd, offset as libc::off_t, libc::SEEK_HOLE) };
        if hole < 0 || (hole as u64) < end {
            return false;
        }
        self.data_lo.store(offset, Ordering::Relaxed);
        self.data_hi.store(hole as u64, Ordering::Relaxed);
        true
    }

    /// Host pointer to byte `offset` of the SoC-side view, if `offset..offset+len`
    /// lies inside the memory.
    pub fn ptr(&self, offset: u64, len: u64) -> Option<*mut u8> {
        let end = offset.checked_add(len)?;
        if end > self.size {
            return None;
        }
        // SAFETY: offset is within the mapping (checked above).
        Some(unsafe { self.view.as_ptr().add(offset as usize) })
    }

    /// Drops the view's page-table entries of `offset..offset+len` (both
    /// page aligned, inside the memory): the bytes stay in the memfd and
    /// the view faults them back in when touched. A translation window
    /// that shows the range maps the same pages, and a process's RSS counts
    /// a page once per mapping that has it (issue 28: peak RSS).
    pub fn drop_view_pages(&self, offset: u64, len: u64) -> io::Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.size) || !offset.is_multiple_of(4096) || !len.is_multiple_of(4096) {
            return Err(io::Error::other("view range not page aligned or past the end of physical memory"));
        }
        // SAFETY: the range lies inside our shared mapping (checked); for a
        // MAP_SHARED mapping MADV_DONTNEED only unmaps pages, the data stays
        // in the file, and no Rust reference into the view is ever held.
        if unsafe { libc::madvise(self.view.as_ptr().add(offset as usize).cast(), len as usize, libc::MADV_DONTNEED) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Writes `data` at byte `offset` through the file, not the mapping
    /// (the same bytes in every view): a page the write covers whole is
    /// allocated without being zeroed first, which a store through the
    /// mapping cannot avoid (a fault zeroes the page, then the store
    /// writes it again). For large writes; the pages are not mapped yet.
    ///
    /// # Safety
    /// No core loads or stores the bytes this changes while it runs (no
    /// run is in progress over them, no other thread writes them): a
    /// change racing a load or store through a mapping is undefined
    /// behaviour.
    pub unsafe fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        if offset.checked_add(data.len() as u64).is_none_or(|e| e > self.size) {
            return Err(io::Error::other("writing past the end of physical memory"));
        }
        let mut done = 0;
        while done < data.len() {
            let rest = &data[done..];
            // SAFETY: pwrite reads `rest` (a live slice, its length) and
            // writes our own memfd inside its size (checked above).
            let n = unsafe { libc::pwrite(self.fd, rest.as_ptr().cast(), rest.len(), (offset + done as u64) as libc::off_t) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if n == 0 {
                return Err(io::Error::other("physical memory took no bytes"));
            }
            done += n as usize;
        }
        Ok(())
    }

    /// Maps `len` bytes starting at `offset` over the host range at `at`,
    /// replacing whatever was mapped there.
    ///
    /// # Safety
    /// `at..at+len` must be a range the caller reserved (an [`crate::NxSpace`]),
    /// page aligned, with no live Rust references into it.
    pub(crate) unsafe fn map_at(&self, at: *mut u8, offset: u64, len: u64) -> io::Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.size) {
            return Err(io::Error::other("mapping past the end of physical memory"));
        }
        // SAFETY: the caller owns the range; MAP_FIXED replaces it atomically.
        let p = unsafe {
            libc::mmap(
                at.cast(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED | libc::MAP_NORESERVE,
                self.fd,
                offset as libc::off_t,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Gives every page back: the memory reads as zeros again, as when it
    /// was made, in every view of it (a reused simulator's reset).
    ///
    /// # Safety
    /// No core loads or stores the bytes this changes while it runs (no
    /// run is in progress over them, no other thread writes them): a
    /// change racing a load or store through a mapping is undefined
    /// behaviour.
    pub unsafe fn discard(&self) -> io::Result<()> {
        // SAFETY: punching a hole in our own memfd; every mapping of it
        // then reads zeros, which is what fresh memory holds.
        let r = unsafe { libc::fallocate(self.fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, self.size as libc::off_t) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Brings the memory back to zeros as [`discard`](Self::discard) does,
    /// but keeps the pages of `[keep_lo, keep_hi)` (zeroed in place) so a
    /// reused simulator's next run does not fault them in again, and those
    /// of small extents of data elsewhere (up to a bound): every other
    /// page that holds data is given back. For the range each run
    /// reuses (the simulator's tensor area): a zeroing costs what the
    /// kernel's own clearing of a faulted page does, without the fault.
    ///
    /// # Safety
    /// No core loads or stores the bytes this changes while it runs (no
    /// run is in progress over them, no other thread writes them): a
    /// change racing a load or store through a mapping is undefined
    /// behaviour.
    pub unsafe fn zero_keeping(&self, keep_lo: u64, keep_hi: u64) -> io::Result<()> {
        self.zero_around(keep_lo, keep_hi, true).map(|_| ())
    }

    /// As [`zero_keeping`](Self::zero_keeping), but the bytes of
    /// `[lo, hi)` are left as they are (a range another process owns
    /// between runs: a staging simulator's tensor area). Returns where the
    /// last data in `[lo, hi)` ends (`lo`: none), so the caller knows how
    /// far stale bytes may lie.
    ///
    /// # Safety
    /// No core loads or stores the bytes this changes while it runs (no
    /// run is in progress over them, no other thread writes them): a
    /// change racing a load or store through a mapping is undefined
    /// behaviour.
    pub unsafe fn zero_outside(&self, lo: u64, hi: u64) -> io::Result<u64> {
        self.zero_around(lo, hi, false)
    }

    /// [`zero_keeping`](Self::zero_keeping) (`zero_kept`) or
    /// [`zero_outside`](Self::zero_outside): where the last data in the
    /// kept range ends.
    fn zero_around(&self, keep_lo: u64, keep_hi: u64, zero_kept: bool) -> io::Result<u64> {
        let keep_hi = keep_hi.min(self.size);
        // The cached data extent may be a hole after this.
        self.data_hi.store(0, Ordering::Relaxed);
        let (mut at, mut small, mut last) = (0u64, 0u64, keep_lo);
        // The largest range kept (zeroed in place: data still), remembered
        // as the known data extent: the next run's writes over it (the
        // tensor area) then ask no `lseek`, which walks every page of it.
        let mut kept = (0u64, 0u64);
        let remember = |kept: (u64, u64)| {
            self.data_lo.store(kept.0, Ordering::Relaxed);
            self.data_hi.store(kept.1, Ordering::Relaxed);
        };
        while at < self.size {
            // SAFETY: lseek on the memfd this value owns (as in is_hole).
            let lo = unsafe { libc::lseek(self.fd, at as libc::off_t, libc::SEEK_DATA) };
            if lo < 0 {
                let e = io::Error::last_os_error();
                // ENXIO: no data at or after `at`.
                if e.raw_os_error() == Some(libc::ENXIO) {
                    remember(kept);
                    return Ok(last);
                }
                return Err(e);
            }
            // SAFETY: as above.
            let hi = unsafe { libc::lseek(self.fd, lo, libc::SEEK_HOLE) };
            if hi < lo {
                return Err(io::Error::last_os_error());
            }
            let (lo, hi) = (lo as u64, (hi as u64).min(self.size));
            // The extent's part inside the kept range is zeroed (or left),
            // the rest (below and above it) punched out; a small extent
            // elsewhere (a heap's header every run writes) is zeroed too,
            // while those kept stay small.
            let (mut klo, mut khi) = (lo.max(keep_lo), hi.min(keep_hi));
            let inside = klo < khi;
            if inside {
                last = last.max(khi);
            }
            if !inside && hi - lo <= SMALL_EXTENT && small + (hi - lo) <= SMALL_KEPT {
                small += hi - lo;
                (klo, khi) = (lo, hi);
            }
            if klo < khi {
                self.punch(lo, klo - lo)?;
                if zero_kept || !inside {
                    // SAFETY: [klo, khi) lies inside the mapping (hi <= size);
                    // plain bytes, no Rust reference into them.
                    unsafe { std::ptr::write_bytes(self.view.as_ptr().add(klo as usize), 0, (khi - klo) as usize) };
                }
                self.punch(khi, hi - khi)?;
                if khi - klo > kept.1 - kept.0 {
                    kept = (klo, khi);
                }
            } else {
                self.punch(lo, hi - lo)?;
            }
            at = hi;
        }
        remember(kept);
        Ok(last)
    }

    /// Zeroes `[offset, offset + len)`: pages it covers whole are given
    /// back (a hole reads zeros, and punching one costs nothing), the
    /// partial pages at its ends are zeroed in place.
    ///
    /// # Safety
    /// No core loads or stores the bytes this changes while it runs (no
    /// run is in progress over them, no other thread writes them): a
    /// change racing a load or store through a mapping is undefined
    /// behaviour.
    pub unsafe fn zero_range(&self, offset: u64, len: u64) -> io::Result<()> {
        let end = offset.checked_add(len).filter(|&e| e <= self.size).ok_or_else(|| io::Error::other("zeroing past the end of physical memory"))?;
        let (a, b) = (offset.next_multiple_of(4096).min(end), (end & !4095).max(offset));
        for (lo, hi) in [(offset, a), (b.max(a), end)] {
            if lo < hi && !self.is_hole(lo, hi - lo) {
                // SAFETY: [lo, hi) lies inside the mapping (end <= size).
                unsafe { std::ptr::write_bytes(self.view.as_ptr().add(lo as usize), 0, (hi - lo) as usize) };
            }
        }
        if a < b {
            self.data_hi.store(0, Ordering::Relaxed);
            self.punch(a, b - a)?;
        }
        Ok(())
    }

    /// Gives the pages of `[offset, offset + len)` back (reads zeros).
    fn punch(&self, offset: u64, len: u64) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        // SAFETY: punching a hole in our own memfd, inside its size.
        let r = unsafe { libc::fallocate(self.fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, offset as libc::off_t, len as libc::off_t) };
        if r != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Bytes of this memory the host really committed (pages touched).
    pub fn resident_bytes(&self) -> u64 {
        // SAFETY: fstat fills a plain struct for a descriptor we own.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fd is valid for our lifetime; st is a valid out pointer.
        if unsafe { libc::fstat(self.fd, &mut st) } != 0 {
            return 0;
        }
        st.st_blocks as u64 * 512
    }
}

impl Drop for PhysMemory {
    fn drop(&mut self) {
        // SAFETY: unmapping our own view and closing our own descriptor;
        // windows mapped elsewhere keep the file alive until they go.
        unsafe {
            libc::munmap(self.view.as_ptr().cast(), self.size as usize);
            libc::close(self.fd);
        }
    }
}

#[cfg(test)]
mod tests;
