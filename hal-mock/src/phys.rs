//! Sparse physical memory backed by a memfd: pages exist only once touched,
//! and the same bytes can be mapped at several host addresses (the whole
//! range for the SoC's own view, 16/64 MiB slices for translation windows).

use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::RwLock;

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
    /// A file shown in place of a page-aligned range ([`show_file`](Self::show_file)).
    shown: RwLock<Option<Shown>>,
}

/// A file shown in place of `[lo, hi)` of the memory: its byte 0 at `lo`.
#[derive(Debug)]
struct Shown {
    lo: u64,
    hi: u64,
    file: OwnedFd,
}

impl Shown {
    /// The part of `[offset, offset + len)` the file shows, if any.
    fn part(&self, offset: u64, len: u64) -> Option<(u64, u64)> {
        let (a, b) = (offset.max(self.lo), offset.saturating_add(len).min(self.hi));
        (a < b).then_some((a, b))
    }
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
        // SAFETY: fd is the descriptor just created; ftruncate only sizes it.
        if unsafe { libc::ftruncate(fd, size as libc::off_t) } != 0 {
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
        Ok(Self { fd, size, view, data_lo: AtomicU64::new(0), data_hi: AtomicU64::new(0), shown: RwLock::new(None) })
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
        // A shown file's pages are not the memfd's: never "a hole".
        if self.shown_part(offset, len).is_some() {
            return false;
        }
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
    pub fn write_at(&self, offset: u64, data: &[u8]) -> io::Result<()> {
        if offset.checked_add(data.len() as u64).is_none_or(|e| e > self.size) {
            return Err(io::Error::other("writing past the end of physical memory"));
        }
        // The part a shown file holds goes to the file, the rest (before
        // and after it) to the memfd.
        if let Some((a, b, file_at)) = self.shown_part(offset, data.len() as u64) {
            let (i, j) = ((a - offset) as usize, (b - offset) as usize);
            self.write_at(offset, &data[..i])?;
            let guard = self.shown.read().unwrap_or_else(|e| e.into_inner());
            let fd = guard.as_ref().map_or(-1, |s| s.file.as_raw_fd());
            pwrite_all(fd, &data[i..j], file_at)?;
            drop(guard);
            return self.write_at(b, &data[j..]);
        }
        pwrite_all(self.fd, data, offset)
    }

    /// Where `[offset, offset + len)` meets the shown file: `(lo, hi,
    /// file offset of lo)`.
    fn shown_part(&self, offset: u64, len: u64) -> Option<(u64, u64, u64)> {
        let shown = self.shown.read().unwrap_or_else(|e| e.into_inner());
        let s = shown.as_ref()?;
        let (a, b) = s.part(offset, len)?;
        Some((a, b, a - s.lo))
    }

    /// Shows `file` in place of `[offset, offset + len)` (page aligned),
    /// its byte 0 at `offset`, in the SoC view and in every window mapped
    /// from now on: stores there land in the file's pages, and a tensor
    /// placed there is the file's data with no copy out. One file at a
    /// time; [`hide_file`](Self::hide_file) gives the memory back. The
    /// file must be at least as long as the range's last page starts (a
    /// page wholly past its end faults).
    pub fn show_file(&self, offset: u64, len: u64, file: OwnedFd) -> io::Result<()> {
        const PAGE: u64 = 4096;
        if !offset.is_multiple_of(PAGE) || !len.is_multiple_of(PAGE) || len == 0 || offset.checked_add(len).is_none_or(|e| e > self.size) {
            return Err(io::Error::other("a shown file's range must be whole pages inside the memory"));
        }
        let mut shown = self.shown.write().unwrap_or_else(|e| e.into_inner());
        if shown.is_some() {
            return Err(io::Error::other("a file is shown already"));
        }
        // SAFETY: the range lies inside the view (checked above), which
        // this value owns; MAP_FIXED replaces those pages of it at once,
        // and no Rust reference into the view is ever formed.
        let p = unsafe {
            libc::mmap(
                self.view.as_ptr().add(offset as usize).cast(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED,
                file.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        *shown = Some(Shown { lo: offset, hi: offset + len, file });
        Ok(())
    }

    /// Starts (does not wait for) the disk writes of a shown file's dirty
    /// pages: called when the kernels are done with it, so the flush at
    /// the end waits for less. Submitting them takes the file system some
    /// CPU (~10 ms for 64 MiB), so it is done on a thread of its own while
    /// the caller goes on. None shown: nothing.
    pub fn start_writeback(&self) {
        let shown = self.shown.read().unwrap_or_else(|e| e.into_inner());
        let Some(file) = shown.as_ref().and_then(|s| s.file.try_clone().ok()) else { return };
        // Best effort: without the thread, the caller's flush does it all.
        let _ = std::thread::Builder::new().name("writeback".into()).spawn(move || {
            // SAFETY: sync_file_range on a descriptor the thread owns; it
            // only queues writeback (no pointer). A failure shows again in
            // the caller's flush.
            let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
        });
    }

    /// Shows the memory itself again where a file was shown (windows
    /// mapped meanwhile are the caller's to map again).
    pub fn hide_file(&self) -> io::Result<()> {
        let mut shown = self.shown.write().unwrap_or_else(|e| e.into_inner());
        let Some(s) = shown.take() else { return Ok(()) };
        // SAFETY: as in show_file: the view's own pages, replaced by the
        // memfd's at the same offsets.
        unsafe { self.map_fd_at(self.view.as_ptr().add(s.lo as usize), self.fd, s.lo, s.hi - s.lo) }
    }
}

/// `pwrite`s all of `data` at `offset` of `fd` (the memfd or the shown
/// file of a [`PhysMemory`], never a descriptor from outside).
fn pwrite_all(fd: libc::c_int, data: &[u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < data.len() {
        let rest = &data[done..];
        // SAFETY: pwrite reads `rest` (a live slice, its length) and
        // writes a file of ours at an offset the caller checked.
        let n = unsafe { libc::pwrite(fd, rest.as_ptr().cast(), rest.len(), (offset + done as u64) as libc::off_t) };
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

impl PhysMemory {
    /// Maps `len` bytes starting at `offset` over the host range at `at`,
    /// replacing whatever was mapped there; the part a shown file holds
    /// ([`show_file`](Self::show_file)) from the file.
    ///
    /// # Safety
    /// `at..at+len` must be a range the caller reserved (an [`crate::NxSpace`]),
    /// page aligned, with no live Rust references into it.
    pub(crate) unsafe fn map_at(&self, at: *mut u8, offset: u64, len: u64) -> io::Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.size) {
            return Err(io::Error::other("mapping past the end of physical memory"));
        }
        // SAFETY: the caller's contract, passed on.
        unsafe { self.map_fd_at(at, self.fd, offset, len)? };
        let shown = self.shown.read().unwrap_or_else(|e| e.into_inner());
        if let Some((s, (a, b))) = shown.as_ref().and_then(|s| Some((s, s.part(offset, len)?))) {
            // SAFETY: [a, b) lies inside [offset, offset + len), so the
            // host range is inside the caller's; page aligned, as both
            // ranges are.
            unsafe { self.map_fd_at(at.add((a - offset) as usize), s.file.as_raw_fd(), a - s.lo, b - a)? };
        }
        Ok(())
    }

    /// Maps `len` bytes of `fd` from `offset` at `at`, shared.
    ///
    /// # Safety
    /// As [`map_at`](Self::map_at); `fd` is this memory's memfd or its
    /// shown file.
    unsafe fn map_fd_at(&self, at: *mut u8, fd: libc::c_int, offset: u64, len: u64) -> io::Result<()> {
        // SAFETY: the caller owns the range; MAP_FIXED replaces it atomically.
        let p = unsafe {
            libc::mmap(
                at.cast(),
                len as usize,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_FIXED | libc::MAP_NORESERVE,
                fd,
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
    pub fn discard(&self) -> io::Result<()> {
        self.hide_file()?;
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
    pub fn zero_keeping(&self, keep_lo: u64, keep_hi: u64) -> io::Result<()> {
        self.hide_file()?;
        let keep_hi = keep_hi.min(self.size);
        // The cached data extent may be a hole after this.
        self.data_hi.store(0, Ordering::Relaxed);
        let (mut at, mut small) = (0u64, 0u64);
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
                    return Ok(());
                }
                return Err(e);
            }
            // SAFETY: as above.
            let hi = unsafe { libc::lseek(self.fd, lo, libc::SEEK_HOLE) };
            if hi < lo {
                return Err(io::Error::last_os_error());
            }
            let (lo, hi) = (lo as u64, (hi as u64).min(self.size));
            // The extent's part inside the kept range is zeroed, the rest
            // (below and above it) punched out; a small extent elsewhere
            // (a heap's header every run writes) is zeroed too, while
            // those kept stay small.
            let (mut klo, mut khi) = (lo.max(keep_lo), hi.min(keep_hi));
            if klo >= khi && hi - lo <= SMALL_EXTENT && small + (hi - lo) <= SMALL_KEPT {
                small += hi - lo;
                (klo, khi) = (lo, hi);
            }
            if klo < khi {
                self.punch(lo, klo - lo)?;
                // SAFETY: [klo, khi) lies inside the mapping (hi <= size);
                // plain bytes, no Rust reference into them.
                unsafe { std::ptr::write_bytes(self.view.as_ptr().add(klo as usize), 0, (khi - klo) as usize) };
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
mod tests {
    use super::*;

    /// A temporary file of `len` zero bytes, open for reading and writing.
    fn temp_file(len: u64) -> std::fs::File {
        let path = std::env::temp_dir().join(format!("phys-shown-{}-{len}", std::process::id()));
        let f = std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        f.set_len(len).unwrap();
        f
    }

    #[test]
    fn a_shown_file_is_the_memory_in_the_view_in_windows_and_for_writes_until_hidden() {
        use std::os::unix::fs::FileExt;
        let m = PhysMemory::new("shown-test", 1 << 20).unwrap();
        let f = temp_file(3 * 4096 + 100);
        m.show_file(64 << 10, 4 * 4096, f.try_clone().unwrap().into()).unwrap();
        assert!(m.show_file(0, 4096, temp_file(4096).into()).is_err(), "one file at a time");
        // A store through the view lands in the file.
        // SAFETY: inside the 1 MiB mapping, in the shown range.
        unsafe { m.ptr((64 << 10) + 4096 + 7, 1).unwrap().write(0xAB) };
        let mut b = [0u8; 1];
        f.read_exact_at(&mut b, 4096 + 7).unwrap();
        assert_eq!(b, [0xAB]);
        // A write through the memory's file side, across the shown range's
        // start: the memfd before it, the file inside.
        m.write_at((64 << 10) - 2, &[1, 2, 3, 4]).unwrap();
        f.read_exact_at(&mut b, 1).unwrap();
        assert_eq!(b, [4]);
        // SAFETY: inside the mapping, below the shown range.
        assert_eq!(unsafe { m.ptr((64 << 10) - 1, 1).unwrap().read() }, 2);
        assert!(!m.is_hole(64 << 10, 4096), "the file's pages are not the memfd's holes");
        // A window mapped now shows the file too.
        let nx = crate::NxSpace::reserve().unwrap();
        nx.map_phys(0, 256 << 10, &m, 0).unwrap();
        // SAFETY: NX 64 KiB + 4096 + 7 is inside the window just mapped.
        assert_eq!(unsafe { nx.ptr((64 << 10) + 4096 + 7).read() }, 0xAB);
        f.write_all_at(&[0xCD], 2 * 4096).unwrap();
        // SAFETY: as above.
        assert_eq!(unsafe { nx.ptr((64 << 10) + 2 * 4096).read() }, 0xCD);
        // Hidden: the memfd shows again (it was never written there).
        m.hide_file().unwrap();
        assert!(m.is_hole((64 << 10) + 4096, 4096));
        // SAFETY: inside the mapping.
        assert_eq!(unsafe { m.ptr((64 << 10) + 4096 + 7, 1).unwrap().read() }, 0);
        assert!(m.show_file(100, 4096, temp_file(4096).into()).is_err(), "whole pages only");
    }

    #[test]
    fn only_never_written_pages_are_holes() {
        let m = PhysMemory::new("hole-test", 1 << 20).unwrap();
        assert!(m.is_hole(0, 1 << 20));
        // SAFETY: offset 5000 is inside the 1 MiB mapping.
        unsafe { m.ptr(5000, 1).unwrap().write(0) };
        assert!(!m.is_hole(4096, 4096), "a page written, even with a zero, is data");
        assert!(!m.is_hole(0, 8192), "a range partly data");
        assert!(!m.is_hole(4100, 16), "inside the extent found before");
        assert!(m.is_hole(0, 4096));
        assert!(m.is_hole(8192, 4096));
        assert!(!m.is_hole(0, 0), "nothing is not a hole");
        assert!(!m.is_hole(1 << 20, 1), "past the end");
        assert!(m.is_data(4096, 4096) && m.is_data(4100, 16));
        assert!(!m.is_data(4096, 8192), "a range partly a hole");
        assert!(!m.is_data(0, 4096) && !m.is_data(4096, 0) && !m.is_data(1 << 20, 1));
    }

    #[test]
    fn zeroing_keeps_the_kept_range_and_gives_the_rest_back() {
        let m = PhysMemory::new("zero-test", 1 << 20).unwrap();
        // Data: a small extent below the kept range [64 KiB, 128 KiB), one
        // across its start, one inside, and a large one above it.
        for (off, len) in [(4096u64, 8192usize), ((60 << 10) + 5, 8192), (100 << 10, 8192), (512 << 10, 256 << 10)] {
            // SAFETY: every range is inside the 1 MiB mapping.
            unsafe { std::ptr::write_bytes(m.ptr(off, len as u64).unwrap(), 0x5A, len) };
        }
        m.zero_keeping(64 << 10, 128 << 10).unwrap();
        assert!(m.resident_bytes() >= 8192 && m.resident_bytes() <= 96 << 10, "the kept pages stay: {}", m.resident_bytes());
        assert!(m.is_hole(512 << 10, 256 << 10), "a large extent elsewhere is given back");
        assert!(m.is_hole(56 << 10, 8 << 10), "so is the part of one outside the kept range");
        assert!(!m.is_hole(64 << 10, 4096), "kept");
        assert!(!m.is_hole(4096, 4096), "a small extent is kept too");
        assert!(m.is_data(64 << 10, 8 << 10) && m.is_data((100 << 10) + 7, 100), "the kept extents are still data");
        assert!(!m.is_data(56 << 10, 16 << 10), "not where it was given back");
        // (Last: reading a hole faults its page in.)
        // SAFETY: the whole mapping is readable.
        let all = unsafe { std::slice::from_raw_parts(m.ptr(0, 1 << 20).unwrap(), 1 << 20) };
        assert!(all.iter().all(|&b| b == 0), "every byte reads zero again");
    }

    #[test]
    fn a_write_through_the_file_is_seen_in_the_view() {
        let m = PhysMemory::new("write-at-test", 1 << 20).unwrap();
        let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
        m.write_at(3000, &data).unwrap();
        // SAFETY: [3000, 13000) is inside the 1 MiB mapping.
        let seen = unsafe { std::slice::from_raw_parts(m.ptr(3000, 10_000).unwrap(), 10_000) };
        assert_eq!(seen, &data[..]);
        assert!(m.write_at((1 << 20) - 10, &data).is_err(), "past the end");
    }
}
