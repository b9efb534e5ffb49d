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
    /// [`map_private`](Self::map_private)), without a new mapping: the
    /// pages a run touched (few: a heap's header, a kernel's buffers) are
    /// zeroed in place and kept, not dropped and faulted in fresh by the
    /// next run (issue 28: fresh pages cost a reused simulator's small
    /// run more than the zeroing); when `mincore` cannot tell, all of
    /// them are dropped and read zeros when touched again.
    pub fn zero_private(&self, nx: u32, len: u32) -> io::Result<()> {
        self.check(nx, len as u64)?;
        const PAGE: usize = 4096;
        let pages = (len as usize).div_ceil(PAGE);
        let mut resident = vec![0u8; pages];
        // SAFETY: mincore writes one byte per page of the range (inside
        // our reservation, checked, page aligned) into `resident`, which
        // has that many.
        if unsafe { libc::mincore(self.ptr(nx).cast(), len as usize, resident.as_mut_ptr()) } == 0 {
            for (i, _) in resident.iter().enumerate().filter(|(_, r)| **r & 1 != 0) {
                let n = PAGE.min(len as usize - i * PAGE);
                // SAFETY: page i of the range: mapped read-write private
                // memory inside our reservation, no Rust reference into it.
                unsafe { std::ptr::write_bytes(self.ptr(nx).add(i * PAGE), 0, n) };
            }
            return Ok(());
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeroed_private_memory_reads_zeros_and_keeps_its_touched_pages() {
        let nx = NxSpace::reserve().unwrap();
        let (at, len) = (0x10_0000u32, 64 << 10);
        nx.map_private(at, len).unwrap();
        // Bytes on two pages, one of them the last, and one page only read.
        // SAFETY: inside the private mapping just made.
        unsafe {
            nx.ptr(at + 5).write(7);
            nx.ptr(at + len - 1).write(9);
            let _ = nx.ptr(at + 3 * 4096).read_volatile();
        }
        nx.zero_private(at, len).unwrap();
        // SAFETY: the mapping is readable whole.
        let all = unsafe { std::slice::from_raw_parts(nx.ptr(at), len as usize) };
        assert!(all.iter().all(|&b| b == 0));
        let mut v = [0u8; 16];
        // SAFETY: mincore fills one byte per page of a range inside the mapping.
        assert_eq!(unsafe { libc::mincore(nx.ptr(at).cast(), len as usize, v.as_mut_ptr()) }, 0);
        assert_eq!(v[0] & 1, 1, "a touched page is kept (zeroed), not dropped");
    }
}
