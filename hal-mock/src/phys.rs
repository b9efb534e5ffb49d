//! Sparse physical memory backed by a memfd: pages exist only once touched,
//! and the same bytes can be mapped at several host addresses (the whole
//! range for the SoC's own view, 16/64 MiB slices for translation windows).

use std::io;
use std::ptr::NonNull;

/// A range of SoC physical memory.
#[derive(Debug)]
pub struct PhysMemory {
    fd: libc::c_int,
    size: u64,
    /// The whole memory mapped once, for the SoC side (DMA, test access).
    view: NonNull<u8>,
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
        Ok(Self { fd, size, view })
    }

    /// Bytes in this memory.
    pub fn size(&self) -> u64 {
        self.size
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
    pub fn discard(&self) -> io::Result<()> {
        // SAFETY: punching a hole in our own memfd; every mapping of it
        // then reads zeros, which is what fresh memory holds.
        let r = unsafe { libc::fallocate(self.fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, self.size as libc::off_t) };
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
