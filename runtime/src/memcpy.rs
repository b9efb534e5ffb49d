//! `neuron_memcpy` (SPEC §5): bulk copies between SoC memory (HBM, SBUF)
//! and local memory, over a method table.
//!
//! - [`MemcpyMethod::CMemcpy`]: through the translation windows, byte copy.
//! - [`MemcpyMethod::VecMemcpy`]: through the translation windows, 8-byte
//!   words four at a time (the vector-load path of the original; on the
//!   host the same windows, a distinct copy loop).
//! - [`MemcpyMethod::Dma`] (default): descriptors on the DMA rings.
//!
//! The window paths cut a copy at every 16 MiB boundary and translate at
//! each piece, so no access crosses a window and no NX pointer is held
//! across another translate. The core cannot stream SoC → SoC; such copies
//! bounce through a data-RAM buffer.

use crate::bounce;
use crate::dma::DmaQueue;
use crate::error::{Error, Result};
use crate::heap::DataRamHeap;
use crate::translate::Translator;
use neuron_hal::platform::DYNAMIC_WINDOW_SIZE;
use neuron_hal::Hal;

/// The memcpy backends, numbered as the original's method table.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum MemcpyMethod {
    /// Through translation windows, byte by byte.
    CMemcpy = 0,
    /// Through translation windows, word-wide and unrolled.
    VecMemcpy = 1,
    /// Through the DMA engine (the default).
    #[default]
    Dma = 2,
}

impl MemcpyMethod {
    /// Entries in the method table; any value at or above it is refused
    /// (the original's guard is `>= 4`, which lets 3 index past the table).
    pub const COUNT: u32 = 3;

    /// The method numbered `m`, if there is one.
    pub const fn from_u32(m: u32) -> Option<Self> {
        match m {
            0 => Some(Self::CMemcpy),
            1 => Some(Self::VecMemcpy),
            2 => Some(Self::Dma),
            _ => None,
        }
    }
}

/// Which way a window copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Way {
    /// SoC → local.
    Load,
    /// Local → SoC.
    Store,
}

/// Copies `n` bytes with 8-byte unaligned loads and stores, four per
/// iteration, then the tail byte by byte.
///
/// # Safety
/// `src` valid for reads and `dst` for writes of `n` bytes; the ranges do
/// not overlap.
unsafe fn copy_words(dst: *mut u8, src: *const u8, n: usize) {
    let mut i = 0usize;
    // SAFETY: (whole body) every access is at offset < n of the caller's
    // ranges; unaligned accesses need no alignment; no reference formed.
    unsafe {
        while i + 32 <= n {
            let s = src.add(i).cast::<u64>();
            let d = dst.add(i).cast::<u64>();
            let a = s.read_unaligned();
            let b = s.add(1).read_unaligned();
            let c = s.add(2).read_unaligned();
            let e = s.add(3).read_unaligned();
            d.write_unaligned(a);
            d.add(1).write_unaligned(b);
            d.add(2).write_unaligned(c);
            d.add(3).write_unaligned(e);
            i += 32;
        }
        while i + 8 <= n {
            dst.add(i).cast::<u64>().write_unaligned(src.add(i).cast::<u64>().read_unaligned());
            i += 8;
        }
        while i < n {
            dst.add(i).write(src.add(i).read());
            i += 1;
        }
    }
}

/// What a `neuron_memcpy` needs of the core, borrowed: the HAL, the
/// translator (window methods), the DMA queue and the data-RAM heap that
/// lends bounce blocks (DMA method, SoC → SoC copies). Built by
/// `CoreState::copier`; nothing here knows the whole state.
pub struct Copier<'a, H: Hal> {
    /// The core's hardware.
    pub hal: &'a H,
    /// The translation context the window methods translate through.
    pub translator: &'a mut Translator,
    /// The DMA rings.
    pub dma: &'a mut DmaQueue,
    /// The heap bounce blocks come from.
    pub dataram: &'a mut DataRamHeap,
}

impl<H: Hal> Copier<'_, H> {
    /// Whether `[addr, addr+n)` lies wholly in HBM or wholly in SBUF, the
    /// regions the windows can show.
    fn check_window_range(&self, addr: u64, n: u64) -> Result<()> {
        let p = self.hal.platform();
        let end = addr.checked_add(n).ok_or(Error::AddressUnmapped)?;
        let last = end - 1;
        let in_hbm = p.is_hbm(addr) && p.is_hbm(last);
        let in_sbuf = addr >= p.sbuf_soc_base && end - p.sbuf_soc_base <= p.sbuf_size;
        if in_hbm || in_sbuf {
            Ok(())
        } else {
            Err(Error::AddressUnmapped)
        }
    }

    /// Copies through the windows, one translate per piece, pieces cut at
    /// 16 MiB boundaries.
    ///
    /// # Safety
    /// `local` valid for `n` bytes in the direction of `way`, not
    /// overlapping the SoC range's window view.
    unsafe fn window_copy(&mut self, way: Way, local: *mut u8, soc: u64, n: u64, wide: bool) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        self.check_window_range(soc, n)?;
        let mut done = 0u64;
        while done < n {
            let addr = soc + done;
            let room = DYNAMIC_WINDOW_SIZE - (addr & (DYNAMIC_WINDOW_SIZE - 1));
            let c = (n - done).min(room) as usize;
            // The pointer lives only for this piece: the next translate
            // may reprogram the window it points into.
            let nx = self.translator.translate(self.hal, addr)?;
            // SAFETY: `nx..nx+c` is mapped (the range check keeps it in
            // HBM or SBUF, the translate maps its 16 MiB region and `c`
            // stops at the region's end); `local + done .. + c` is inside
            // the caller's buffer; the caller guarantees no overlap.
            unsafe {
                let l = local.add(done as usize);
                let (d, s) = match way {
                    Way::Load => (l, nx.cast_const()),
                    Way::Store => (nx, l.cast_const()),
                };
                if wide {
                    copy_words(d, s, c);
                } else {
                    core::ptr::copy_nonoverlapping(s, d, c);
                }
            }
            done += c as u64;
        }
        Ok(())
    }

    /// `neuron_memcpy(void* dst, u64 src, u32 n)` with `method`.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `n` bytes and overlap neither the
    /// source's window view nor a runtime data-RAM heap block.
    #[inline(always)]
    pub unsafe fn from_soc(&mut self, method: MemcpyMethod, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        self.hal.note_soc_read(src, u64::from(n));
        // SAFETY: forwarded from the caller.
        unsafe { self.load(method, dst, src, n) }
    }

    /// [`from_soc`](Self::from_soc) without telling the HAL (a half of a
    /// SoC → SoC copy, which is told whole).
    ///
    /// # Safety
    /// As [`from_soc`](Self::from_soc).
    #[inline(always)]
    unsafe fn load(&mut self, method: MemcpyMethod, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller.
        unsafe {
            match method {
                MemcpyMethod::CMemcpy => self.window_copy(Way::Load, dst, src, n as u64, false),
                MemcpyMethod::VecMemcpy => self.window_copy(Way::Load, dst, src, n as u64, true),
                MemcpyMethod::Dma => self.dma.read(self.hal, self.dataram, dst, src, n),
            }
        }
    }

    /// `neuron_memcpy(u64 dst, const void* src, u32 n)` with `method`.
    ///
    /// # Safety
    /// `src` must be valid for reads of `n` bytes and overlap neither the
    /// destination's window view nor a runtime data-RAM heap block.
    #[inline(always)]
    pub unsafe fn to_soc(&mut self, method: MemcpyMethod, dst: u64, src: *const u8, n: u32) -> Result<()> {
        self.hal.note_soc_write(dst, u64::from(n));
        // SAFETY: forwarded from the caller.
        unsafe { self.store(method, dst, src, n) }
    }

    /// [`to_soc`](Self::to_soc) without telling the HAL.
    ///
    /// # Safety
    /// As [`to_soc`](Self::to_soc).
    #[inline(always)]
    unsafe fn store(&mut self, method: MemcpyMethod, dst: u64, src: *const u8, n: u32) -> Result<()> {
        // SAFETY: forwarded from the caller; a store only reads `src`.
        unsafe {
            match method {
                MemcpyMethod::CMemcpy => self.window_copy(Way::Store, src.cast_mut(), dst, n as u64, false),
                MemcpyMethod::VecMemcpy => self.window_copy(Way::Store, src.cast_mut(), dst, n as u64, true),
                MemcpyMethod::Dma => self.dma.write(self.hal, self.dataram, dst, src, n),
            }
        }
    }

    /// SoC → SoC copy of `n` bytes, bounced through a data-RAM block (the
    /// core cannot stream SoC → SoC), each half with `method`. The ranges
    /// must not overlap.
    ///
    /// # Safety
    /// Nothing Rust owns lies in `[dst, dst + n)`: not this core's heaps'
    /// arenas (the libc heap, Rust's allocator on the device, sits in HBM
    /// scratch), not memory a live reference points into. `src` is only
    /// read; an address the core cannot reach is an error.
    #[inline(always)]
    pub unsafe fn soc_to_soc(&mut self, method: MemcpyMethod, dst: u64, src: u64, n: u64) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        if src.checked_add(n).is_none() || dst.checked_add(n).is_none() {
            return Err(Error::SizeOverflow);
        }
        let Some((buf, cap)) = bounce::take(self.dataram, n) else {
            return Err(Error::OutOfMemory);
        };
        self.hal.note_soc_copy(dst, src, n);
        let mut off = 0u64;
        let mut r = Ok(());
        while off < n {
            let c = (n - off).min(cap as u64) as u32;
            // SAFETY: `buf` is a live heap block of `cap >= c` bytes owned
            // by this call; it is in data RAM, so no window shows it.
            r = unsafe { self.load(method, buf.as_ptr(), src + off, c) };
            if r.is_err() {
                break;
            }
            // SAFETY: as above.
            r = unsafe { self.store(method, dst + off, buf.as_ptr(), c) };
            if r.is_err() {
                break;
            }
            off += c as u64;
        }
        let _ = self.dataram.free(buf.as_ptr());
        r
    }
}
