//! The SoC: shared physical memories and the cores that see them.

use crate::core::MockCore;
use crate::phys::PhysMemory;
use crate::sanitizer::Sanitizer;
use neuron_hal::platform::{Platform, Q7};
use std::io;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// HBM and SBUF, shared by every core, and the platform table the cores use.
#[derive(Debug)]
pub struct MockSoc {
    platform: Platform,
    hbm: PhysMemory,
    sbuf: PhysMemory,
    sanitizer: Sanitizer,
    /// Zero fills of memory that reads as zeros are left out
    /// ([`Hal::reads_zero`](neuron_hal::Hal::reads_zero)): a SoC made for
    /// shape functions only.
    elide_zero_fills: AtomicBool,
    /// A bit per cpu with a live `MockCore` (see `CoreClaim`).
    live_cores: AtomicU64,
}

impl MockSoc {
    /// A SoC with the Q7 address map (64 GiB of sparse HBM).
    pub fn new() -> io::Result<Arc<Self>> {
        Self::with_platform(Q7)
    }

    /// A SoC with another address map (sizes of HBM and SBUF from it).
    pub fn with_platform(platform: Platform) -> io::Result<Arc<Self>> {
        Ok(Arc::new(Self {
            hbm: PhysMemory::new("mock-hbm", platform.hbm_size)?,
            sbuf: PhysMemory::new("mock-sbuf", platform.sbuf_size)?,
            platform,
            sanitizer: Sanitizer::default(),
            elide_zero_fills: AtomicBool::new(false),
            live_cores: AtomicU64::new(0),
        }))
    }

    /// A SoC whose HBM is the caller's file `hbm_fd` (a memfd another
    /// process maps too: it stages tensors in it, and reads outputs from
    /// it, without a copy). Its bytes are kept; the file is lengthened to
    /// the HBM's size if shorter.
    pub fn with_platform_on(platform: Platform, hbm_fd: libc::c_int) -> io::Result<Arc<Self>> {
        Ok(Arc::new(Self {
            hbm: PhysMemory::on_file(hbm_fd, platform.hbm_size)?,
            sbuf: PhysMemory::new("mock-sbuf", platform.sbuf_size)?,
            platform,
            sanitizer: Sanitizer::default(),
            elide_zero_fills: AtomicBool::new(false),
            live_cores: AtomicU64::new(0),
        }))
    }

    /// The address map.
    pub fn platform(&self) -> &Platform {
        &self.platform
    }

    /// Makes this a SoC for shape functions: its cores leave out a zero
    /// fill of memory that reads as zeros ([`Hal::reads_zero`](neuron_hal::Hal::reads_zero)).
    /// Never for a kernel's run, whose DMA traffic is the device's.
    pub fn elide_zero_fills(&self) {
        self.elide_zero_fills.store(true, Ordering::Relaxed);
    }

    /// Whether [`elide_zero_fills`](Self::elide_zero_fills) was asked.
    pub fn zero_fills_elided(&self) -> bool {
        self.elide_zero_fills.load(Ordering::Relaxed)
    }

    /// The sanitizer that watches what the cores read and write.
    pub fn sanitizer(&self) -> &Sanitizer {
        &self.sanitizer
    }

    /// The HBM memory.
    pub fn hbm(&self) -> &PhysMemory {
        &self.hbm
    }

    /// The SBUF memory.
    pub fn sbuf(&self) -> &PhysMemory {
        &self.sbuf
    }

    /// Stands up core `cpu` (its PRID): a fresh NX space, data RAM and
    /// pinned windows. Refused (`AlreadyExists`) while a core for `cpu`
    /// of this SoC is live: one handle per core, as the `Hal` contract
    /// requires.
    pub fn core(self: &Arc<Self>, cpu: u32) -> io::Result<MockCore> {
        MockCore::new(Arc::clone(self), cpu)
    }

    /// The cpus with a live core, a bit each.
    pub(crate) fn live_cores(&self) -> &AtomicU64 {
        &self.live_cores
    }

    /// The physical memory behind SoC address `addr` and the offset in it,
    /// if `addr..addr+len` is HBM or SBUF.
    pub fn resolve(&self, addr: u64, len: u64) -> Option<(&PhysMemory, u64)> {
        let p = &self.platform;
        for (mem, base) in [(&self.hbm, p.hbm_soc_base), (&self.sbuf, p.sbuf_soc_base)] {
            if let Some(off) = addr.checked_sub(base) {
                if off.checked_add(len).is_some_and(|end| end <= mem.size()) {
                    return Some((mem, off));
                }
            }
        }
        None
    }

    /// Whether SoC range `addr..addr+len` (HBM or SBUF) was never written:
    /// it reads as zeros.
    pub fn is_hole(&self, addr: u64, len: u64) -> bool {
        self.resolve(addr, len).is_some_and(|(mem, off)| mem.is_hole(off, len))
    }

    /// Host pointer for SoC range `addr..addr+len` (HBM or SBUF).
    pub fn soc_ptr(&self, addr: u64, len: u64) -> Option<*mut u8> {
        let (mem, off) = self.resolve(addr, len)?;
        mem.ptr(off, len)
    }

    /// Copies `data` into SoC memory at `addr` (the host placing a tensor).
    /// Every writer of the SoC's memory is `unsafe`: a safe caller could
    /// race a running core.
    ///
    /// ```compile_fail,E0133
    /// fn f(soc: &neuron_hal_mock::MockSoc, at: u64) {
    ///     let _ = soc.write(at, &[0; 8]);
    ///     let _ = soc.fill(at, 8, 0);
    ///     let _ = soc.write_mapped(at, &[0; 8]);
    ///     let _ = soc.write_unmapped(at, &[0; 8]);
    /// }
    /// ```
    ///
    /// ```compile_fail,E0133
    /// fn f(soc: &neuron_hal_mock::MockSoc) {
    ///     let _ = soc.hbm().zero_range(0, 8);
    ///     let _ = soc.hbm().write_at(0, &[0; 8]);
    /// }
    /// ```
    ///
    /// # Safety
    /// No core loads or stores the range while this runs (no run is in
    /// progress over it, no other thread writes it): the SoC's memory is
    /// shared by every core and the host, and a store racing theirs is
    /// undefined behaviour. What is written is plain data to the runtime
    /// (a heap's bookkeeping there is checked when it is read).
    pub unsafe fn write(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        if data.len() >= THROUGH_FILE && !self.is_data(addr, data.len() as u64) {
            // SAFETY: this function's contract, for the same bytes.
            unsafe { self.write_unmapped(addr, data) }?;
            // Mapped now, in one call, not a fault per page later.
            self.populate(addr, data.len() as u64);
            return Ok(());
        }
        // SAFETY: this function's contract, for the same bytes.
        unsafe { self.write_mapped(addr, data) }
    }

    /// Whether every page of SoC range `addr..addr+len` holds data already
    /// (a reused simulator's kept tensor area): a store through the
    /// mapping then costs a copy and nothing more, less than a write
    /// through the file (which looks up and locks every page).
    pub fn is_data(&self, addr: u64, len: u64) -> bool {
        self.resolve(addr, len).is_some_and(|(mem, off)| mem.is_data(off, len))
    }

    /// Copies `data` into SoC memory at `addr` through the mapping (for a
    /// small copy, or pages that hold data already: see [`is_data`](Self::is_data)).
    ///
    /// # Safety
    /// No core loads or stores the range while this runs (no run is in
    /// progress over it, no other thread writes it): the SoC's memory is
    /// shared by every core and the host, and a store racing theirs is
    /// undefined behaviour. What is written is plain data to the runtime
    /// (a heap's bookkeeping there is checked when it is read).
    pub unsafe fn write_mapped(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        let p = self.soc_ptr(addr, data.len() as u64).ok_or_else(|| out_of_map(addr))?;
        // SAFETY: p is valid for data.len() bytes (resolved above), which
        // nothing else touches meanwhile (the contract); the source is a
        // distinct host slice.
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), p, data.len()) };
        Ok(())
    }

    /// Copies `data` into SoC memory at `addr` through the memory's file
    /// ([`PhysMemory::write_at`]): no page zeroed before it is written
    /// whole, none mapped either (the caller maps a range written in
    /// pieces with one [`populate`](Self::populate) at the end).
    ///
    /// # Safety
    /// No core loads or stores the range while this runs (no run is in
    /// progress over it, no other thread writes it): the SoC's memory is
    /// shared by every core and the host, and a store racing theirs is
    /// undefined behaviour. What is written is plain data to the runtime
    /// (a heap's bookkeeping there is checked when it is read).
    pub unsafe fn write_unmapped(&self, addr: u64, data: &[u8]) -> io::Result<()> {
        let (mem, off) = self.resolve(addr, data.len() as u64).ok_or_else(|| out_of_map(addr))?;
        // SAFETY: this function's contract, for the same bytes.
        unsafe { mem.write_at(off, data) }
    }

    /// Sets `len` bytes of SoC memory at `addr` to `byte` (the simulator's
    /// fill sentinel), with no host buffer however long the range. Memory
    /// never written reads as zeros already: a zero fill of it (an empty
    /// tensor on a fresh SoC, the shape function's) is not made, nor are
    /// its pages faulted in.
    ///
    /// # Safety
    /// No core loads or stores the range while this runs (no run is in
    /// progress over it, no other thread writes it): the SoC's memory is
    /// shared by every core and the host, and a store racing theirs is
    /// undefined behaviour. What is written is plain data to the runtime
    /// (a heap's bookkeeping there is checked when it is read).
    pub unsafe fn fill(&self, addr: u64, len: u64, byte: u8) -> io::Result<()> {
        if len == 0 {
            return Ok(());
        }
        let n = usize::try_from(len).map_err(|_| out_of_map(addr))?;
        let p = self.soc_ptr(addr, len).ok_or_else(|| out_of_map(addr))?;
        if byte == 0 && self.is_hole(addr, len) {
            return Ok(());
        }
        if self.is_data(addr, len) {
            // SAFETY: p is valid for len bytes (resolved above), which
            // nothing else touches meanwhile (the contract).
            unsafe { std::ptr::write_bytes(p, byte, n) };
            return Ok(());
        }
        if n >= THROUGH_FILE {
            // Through the file, a piece at a time (see `write`).
            let piece = std::vec![byte; n.min(1 << 20)];
            let mut at = 0;
            while at < n {
                let k = (n - at).min(piece.len());
                // SAFETY: this function's contract, for the same bytes.
                unsafe { self.write_unmapped(addr + at as u64, &piece[..k]) }?;
                at += k;
            }
            self.populate(addr, len);
            return Ok(());
        }
        self.populate(addr, len);
        // SAFETY: p is valid for len bytes (resolved above), which
        // nothing else touches meanwhile (the contract).
        unsafe { std::ptr::write_bytes(p, byte, n) };
        Ok(())
    }

    /// Faults the host pages of SoC `[addr, addr + len)` in at once, for
    /// writing, before the host writes the range whole (a placed input,
    /// a fill): one `madvise(MADV_POPULATE_WRITE)` instead of a page fault
    /// per 4 KiB page inside the copy, most of a large copy's time. Best
    /// effort: without it (Linux before 5.14) the copy faults as before.
    pub fn populate(&self, addr: u64, len: u64) {
        const PAGE: usize = 4096;
        let Some(p) = self.soc_ptr(addr, len).filter(|_| len != 0) else { return };
        let start = p as usize & !(PAGE - 1);
        let end = (p as usize).saturating_add(len as usize);
        // SAFETY: madvise only changes how the kernel backs the pages of a
        // range resolved to the SoC's mapping (rounded down to its page);
        // POPULATE_WRITE never changes their contents.
        let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_POPULATE_WRITE) };
    }

    /// Copies SoC memory at `addr` into `buf` (the host reading a result).
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> io::Result<()> {
        let p = self.soc_ptr(addr, buf.len() as u64).ok_or_else(|| out_of_map(addr))?;
        // SAFETY: p is valid for buf.len() bytes (resolved above).
        unsafe { std::ptr::copy_nonoverlapping(p, buf.as_mut_ptr(), buf.len()) };
        Ok(())
    }
}

/// From this many bytes a host write goes through the memfd
/// ([`PhysMemory::write_at`]: pages not zeroed before they are written)
/// rather than a copy into the mapping.
const THROUGH_FILE: usize = 64 << 10;

fn out_of_map(addr: u64) -> io::Error {
    io::Error::other(format!("SoC address {addr:#x} is neither HBM nor SBUF"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_fills_and_writes_through_the_file_land_where_asked() {
        let soc = MockSoc::new().unwrap();
        let base = soc.platform().hbm_soc_base + (1 << 30);
        // Odd start and length: partial pages at both ends.
        let (at, len) = (base + 1000, (3 << 20) + 12_345);
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(base, &[7; 1000]) }.unwrap();
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.fill(at, len, 0xA5) }.unwrap();
        let mut v = std::vec![0u8; len as usize + 2000];
        soc.read(base, &mut v).unwrap();
        assert!(v[..1000].iter().all(|&b| b == 7), "before the range: kept");
        assert!(v[1000..1000 + len as usize].iter().all(|&b| b == 0xA5));
        assert!(v[1000 + len as usize..].iter().all(|&b| b == 0), "after the range: untouched");
        let data: Vec<u8> = (0..THROUGH_FILE as u32 * 3 + 5).map(|i| (i % 249) as u8).collect();
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(at + 3, &data) }.unwrap();
        let mut back = std::vec![0u8; data.len()];
        soc.read(at + 3, &mut back).unwrap();
        assert_eq!(back, data);
    }
}
