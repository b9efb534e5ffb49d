//! A core's 32-bit NX address space, reserved whole in the host's address
//! space so that an NX address maps to a host pointer by one addition.

use crate::phys::PhysMemory;
use std::io;
use std::ptr::NonNull;

/// Bytes of NX space (32-bit addresses).
const NX_SPACE_SIZE: usize = 1 << 32;

/// 4 GiB of host address space standing for one core's NX space. Nothing is
/// accessible until mapped: a stray NX access faults, as on the device.
#[derive(Debug)]
pub struct NxSpace {
    base: NonNull<u8>,
}

// SAFETY: the reservation is plain address space, owned by this value.
unsafe impl Send for NxSpace {}

impl NxSpace {
    /// Reserves the space, inaccessible.
    pub fn reserve() -> io::Result<Self> {
        // SAFETY: an anonymous PROT_NONE reservation at a kernel-chosen
        // address; it commits no memory.
        let p =
            unsafe { libc::mmap(std::ptr::null_mut(), NX_SPACE_SIZE, libc::PROT_NONE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let base = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        Ok(Self { base })
    }

    /// Host pointer for NX address `nx`.
    pub fn ptr(&self, nx: u32) -> *mut u8 {
        // SAFETY: every u32 offset lies inside the 4 GiB reservation.
        unsafe { self.base.as_ptr().add(nx as usize) }
    }

    /// Maps private zeroed memory (data RAM) at `nx..nx+len`.
    pub fn map_private(&self, nx: u32, len: u32) -> io::Result<()> {
        self.check(nx, len as u64)?;
        // SAFETY: the range is inside our reservation (checked) and page
        // aligned; MAP_FIXED replaces the PROT_NONE pages.
        let p = unsafe {
            libc::mmap(self.ptr(nx).cast(), len as usize, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED, -1, 0)
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Zeroes the private memory at `nx..nx+len` (mapped by
    /// [`map_private`](Self::map_private)): its pages are dropped, and
    /// read zeros when touched again, without a new mapping.
    pub fn zero_private(&self, nx: u32, len: u32) -> io::Result<()> {
        self.check(nx, len as u64)?;
        // SAFETY: the range is inside our reservation (checked), page
        // aligned, private anonymous memory no Rust reference points into;
        // MADV_DONTNEED makes it read zeros again.
        if unsafe { libc::madvise(self.ptr(nx).cast(), len as usize, libc::MADV_DONTNEED) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Shows `len` bytes of `mem` from `offset` at `nx` (a translation window).
    pub fn map_phys(&self, nx: u32, len: u64, mem: &PhysMemory, offset: u64) -> io::Result<()> {
        self.check(nx, len)?;
        // SAFETY: the range is inside our reservation (checked), aligned,
        // and no Rust reference into NX space is ever held.
        unsafe { mem.map_at(self.ptr(nx), offset, len) }
    }

    /// Drops the page-table entries of the window at `nx..nx+len` (mapped
    /// by [`map_phys`](Self::map_phys) or [`unmap`](Self::unmap)): the
    /// mapping stays, a shown memory's bytes stay in its memfd and fault
    /// back in when touched. RSS counts a page once per mapping that has
    /// it, so a window left populated counts its pages twice (issue 28).
    pub fn drop_window_pages(&self, nx: u32, len: u64) -> io::Result<()> {
        self.check(nx, len)?;
        // SAFETY: the range is inside our reservation (checked) and mapped
        // shared (a memfd) or PROT_NONE: MADV_DONTNEED loses no data in
        // either; no Rust reference into NX space is ever held.
        if unsafe { libc::madvise(self.ptr(nx).cast(), len as usize, libc::MADV_DONTNEED) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Makes `nx..nx+len` inaccessible again (a window showing nothing).
    pub fn unmap(&self, nx: u32, len: u64) -> io::Result<()> {
        self.check(nx, len)?;
        // SAFETY: as in map_private; PROT_NONE anonymous pages replace it.
        let p = unsafe {
            libc::mmap(
                self.ptr(nx).cast(),
                len as usize,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    fn check(&self, nx: u32, len: u64) -> io::Result<()> {
        let page = 4096u64;
        if !(nx as u64).is_multiple_of(page) || !len.is_multiple_of(page) || nx as u64 + len > NX_SPACE_SIZE as u64 {
            return Err(io::Error::other("NX mapping not page aligned or past 4 GiB"));
        }
        Ok(())
    }
}

impl Drop for NxSpace {
    fn drop(&mut self) {
        // SAFETY: releasing our own reservation (and every mapping in it).
        unsafe { libc::munmap(self.base.as_ptr().cast(), NX_SPACE_SIZE) };
    }
}
