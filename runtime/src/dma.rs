//! The DMA driver (SPEC §5): the two descriptor rings, submission,
//! completion polling and draining, over [`Hal`].
//!
//! The rings sit at the start of the data-RAM staging window, inside
//! [`DATARAM_RUNTIME_RESERVED`]: the M2S ring (HBM → data RAM) first, the
//! S2M ring (data RAM → HBM) right after it. A transfer is cut into
//! descriptors of at most [`DmaQueue::max_descriptor_bytes`] bytes, written
//! with volatile stores, published with two `memw` fences and announced by
//! one doorbell write; the core then busy-polls the engine's completion
//! counter and checks each completed descriptor's status word.
//!
//! Counters are free-running `u32`s compared with wrapping arithmetic:
//! `head` counts descriptors written since the ring was armed, the engine
//! counts completions from whatever value it showed at arming (`base`).
//! [`RING_LEN`] divides 2³², so slot indices stay consistent across a wrap.
//!
//! The engine addresses data RAM through the core's SoC aperture; only the
//! staging window past the runtime's reserve is reachable. A local buffer
//! elsewhere is bounced through a block of the data-RAM heap (which lies
//! entirely in the staging window).

use crate::bounce;
use crate::error::{Error, Result};
use crate::heap::DataRamHeap;
use core::mem::size_of;
use core::ptr::addr_of;
use neuron_hal::dma::{status, DescriptorFlags, DmaDescriptor, DmaDirection, MAX_DESCRIPTOR_BYTES, RING_BYTES, RING_LEN};
use neuron_hal::platform::{DATARAM_RUNTIME_RESERVED, DMA_WINDOW_SIZE};
use neuron_hal::Hal;
use static_assertions::const_assert;

/// Bytes of one descriptor in the ring.
const DESC_BYTES: u32 = size_of::<DmaDescriptor>() as u32;

// Both rings fit in the reserve at the start of the staging window.
const_assert!(2 * RING_BYTES <= DATARAM_RUNTIME_RESERVED);
/// Where the invocation block lies in the staging window: in the
/// runtime's reserve, right after both rings. `customop_setup` DMAs the
/// block there and the readers validate its descriptors in place.
pub const BLOCK_OFFSET: u32 = 2 * RING_BYTES;
// The largest block fits the reserve after the rings.
const_assert!(BLOCK_OFFSET as usize + crate::marshal::MAX_BLOCK_BYTES <= DATARAM_RUNTIME_RESERVED as usize);
// 16-byte aligned, so each descriptor (at 32 + 48·i) is word-aligned.
const_assert!(BLOCK_OFFSET.is_multiple_of(16));

// Slot = counter % RING_LEN stays right when the u32 counter wraps.
const_assert!(RING_LEN.is_power_of_two());

pub use crate::bounce::{BOUNCE_BYTES, MIN_BOUNCE_BYTES};

/// NX offset of `dir`'s ring from the staging window's start.
pub const fn ring_offset(dir: DmaDirection) -> u32 {
    neuron_hal::dma::ring_offset(dir)
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Ring {
    /// NX address of slot 0.
    nx: u32,
    /// Where slot 0 is for the core (`hal.nx_ptr(nx)` at arming, kept as
    /// an address so the queue stays plain data): slot `k` is 32·k past
    /// it, with no `nx_ptr` per descriptor.
    slots: usize,
    /// Descriptors written since arming (wrapping).
    head: u32,
    /// Descriptors announced through the doorbell since arming.
    rung: u32,
    /// The engine's completion counter right after arming.
    base: u32,
    /// Completed descriptors whose status was examined.
    checked: u32,
    /// A descriptor completed with a status other than DONE since the last
    /// wait reported.
    faulted: bool,
}

/// The state of both DMA queues of one core.
#[derive(Debug)]
pub struct DmaQueue {
    armed: bool,
    rings: [Ring; 2],
    /// Where the staging window starts for the core (`hal.nx_ptr`).
    window_ptr: usize,
    /// SoC address of the staging window's start (the core's aperture).
    aperture_soc: u64,
    max_desc_bytes: u32,
    /// Per ring: slots `0..dirty` may be non-zero (written since the last
    /// clear). `init` clears only those; all of them the first time.
    dirty: [u32; 2],
}

impl Default for DmaQueue {
    fn default() -> Self {
        Self::new()
    }
}

impl DmaQueue {
    /// An unarmed queue.
    pub const fn new() -> Self {
        const R: Ring = Ring { nx: 0, slots: 0, head: 0, rung: 0, base: 0, checked: 0, faulted: false };
        Self { armed: false, rings: [R; 2], window_ptr: 0, aperture_soc: 0, max_desc_bytes: MAX_DESCRIPTOR_BYTES, dirty: [RING_LEN; 2] }
    }

    /// Whether [`DmaQueue::init`] armed the rings.
    pub fn is_armed(&self) -> bool {
        self.armed
    }

    /// Largest descriptor this queue writes.
    pub fn max_descriptor_bytes(&self) -> u32 {
        self.max_desc_bytes
    }

    /// Lowers the descriptor size (clamped to `1..=MAX_DESCRIPTOR_BYTES`),
    /// to exercise chunking and ring wrap-around with small transfers.
    pub fn set_max_descriptor_bytes(&mut self, n: u32) {
        self.max_desc_bytes = n.clamp(1, MAX_DESCRIPTOR_BYTES);
    }

    /// `init_dma_queue`: checks `MEM_WINDOW0_LO`, clears both rings and
    /// arms them in the engine. `cpu` selects the core's SoC aperture.
    /// Outstanding descriptors are forgotten: drain first.
    pub(crate) fn init<H: Hal>(&mut self, hal: &H, cpu: u32) -> Result<()> {
        let p = hal.platform();
        self.armed = false;
        if hal.read_window_register(p.mem_window0_nx) != p.apb_base as u64 {
            return Err(Error::DmaWindowCheck);
        }
        for dir in DmaDirection::ALL {
            let nx = p.dma_ring_nx(dir);
            let slots = hal.nx_ptr(nx);
            // Slots past `dirty` were cleared and never written since
            // (slot = count % RING_LEN from 0 after arming): still zero.
            let dirty = core::mem::replace(&mut self.dirty[dir.index()], 0).min(RING_LEN);
            let mut at = slots.cast::<DmaDescriptor>();
            for _ in 0..dirty {
                // SAFETY: the ring lies in the runtime's reserve at the
                // start of the staging window (const-asserted to fit),
                // which is this core's mapped data RAM; at most RING_LEN
                // slots from the cached slot 0; 4 KiB-aligned, so aligned.
                // Volatile word stores: plain ones become a `memset` call
                // (~100 instructions for the usual two slots). No
                // reference formed.
                unsafe {
                    DmaDescriptor::default().store_volatile(at);
                    at = at.add(1);
                }
            }
            hal.memw();
            // SAFETY: this queue is its core state's (its arming methods
            // are the crate's, called by the state with its own HAL), and
            // nothing is outstanding: `CoreState::init_dma_queue`, the one
            // caller, drains an armed queue first.
            unsafe { hal.dma_arm(dir) };
            let base = hal.dma_completed(dir);
            self.rings[dir.index()] = Ring { nx, slots: slots as usize, head: 0, rung: 0, base, checked: 0, faulted: false };
        }
        self.window_ptr = hal.nx_ptr(p.dma_window_nx) as usize;
        self.aperture_soc = p.aperture_soc(cpu);
        self.armed = true;
        Ok(())
    }

    /// The SoC address at which the engine sees local bytes `p..p+len`, if
    /// they lie in the staging window past the runtime's reserve.
    pub fn local_soc(&self, p: *const u8, len: u64) -> Option<u64> {
        if !self.armed {
            return None;
        }
        let off = (p as usize).checked_sub(self.window_ptr)? as u64;
        let end = off.checked_add(len)?;
        if off < DATARAM_RUNTIME_RESERVED as u64 || end > DMA_WINDOW_SIZE as u64 {
            return None;
        }
        Some(self.aperture_soc + off)
    }

    /// The SoC address at which the engine sees byte `off` of the staging
    /// window (the runtime's reserve included, which
    /// [`DmaQueue::local_soc`] refuses to callers' buffers).
    #[inline(always)]
    pub(crate) fn reserve_soc(&self, off: u32) -> u64 {
        self.aperture_soc + off as u64
    }

    /// Descriptors of `dir` written but not yet seen complete.
    #[inline(always)]
    pub fn outstanding(&self, dir: DmaDirection) -> u32 {
        let r = &self.rings[dir.index()];
        r.head.wrapping_sub(r.checked)
    }

    /// The slot of descriptor number `count` (from the cached slot 0).
    #[inline(always)]
    fn slot_ptr(r: &Ring, count: u32) -> *mut DmaDescriptor {
        (r.slots + ((count % RING_LEN) * DESC_BYTES) as usize) as *mut DmaDescriptor
    }

    /// Reads the engine's counter, then examines every newly completed
    /// descriptor's status. Returns how many are still outstanding.
    #[inline(always)]
    fn reap<H: Hal>(&mut self, hal: &H, dir: DmaDirection) -> u32 {
        let r = &mut self.rings[dir.index()];
        let mut done = hal.dma_completed(dir).wrapping_sub(r.base);
        // An engine that claims more than was written is clamped, so the
        // bookkeeping never runs ahead of the ring.
        if done.wrapping_sub(r.checked) > r.head.wrapping_sub(r.checked) {
            done = r.head;
        }
        while r.checked != done {
            let at = Self::slot_ptr(r, r.checked);
            // SAFETY: `at` is a slot of the armed ring in data RAM (see
            // `init`); the engine wrote its status before counting it.
            let st = unsafe { addr_of!((*at).status).read_volatile() };
            if st != status::DONE {
                r.faulted = true;
            }
            r.checked = r.checked.wrapping_add(1);
        }
        r.head.wrapping_sub(r.checked)
    }

    /// Publishes the descriptors written since the last doorbell: two
    /// fences, then one doorbell write with their count. The fences are
    /// what orders the descriptors' plain stores (see [`store_desc`])
    /// before the doorbell's MMIO store.
    #[inline(always)]
    fn ring_doorbell<H: Hal>(&mut self, hal: &H, dir: DmaDirection) {
        let r = &mut self.rings[dir.index()];
        let count = r.head.wrapping_sub(r.rung);
        if count == 0 {
            return;
        }
        hal.memw();
        hal.memw();
        // SAFETY: this queue is its core state's and armed the ring; the
        // `count` descriptors since the last ring were written whole by
        // `submit`, between SoC places its callers vouched for.
        unsafe { hal.dma_doorbell(dir, count) };
        r.rung = r.head;
    }

    /// Writes the descriptors moving `len` bytes from SoC `src` to SoC
    /// `dst` into `dir`'s ring and rings the doorbell, without waiting for
    /// completion (only for free slots when the ring is full). Bytes move
    /// when the engine processes the descriptors; [`DmaQueue::wait`]
    /// waits for that.
    pub(crate) fn submit<H: Hal>(&mut self, hal: &H, dir: DmaDirection, dst: u64, src: u64, len: u64) -> Result<()> {
        if !self.armed {
            return Err(Error::DmaNotArmed);
        }
        if src.checked_add(len).is_none() || dst.checked_add(len).is_none() {
            return Err(Error::SizeOverflow);
        }
        // The usual case, one descriptor into a ring with room, straight
        // through; the general loop is out of line.
        if len != 0 && len <= self.max_desc_bytes as u64 && self.outstanding(dir) < RING_LEN {
            self.put(dir, dst, src, len as u32, DescriptorFlags::VALID.bits() | DescriptorFlags::LAST.bits());
            self.ring_doorbell(hal, dir);
            return Ok(());
        }
        self.submit_chunks(hal, dir, dst, src, len);
        Ok(())
    }

    /// Writes one descriptor into the next slot of `dir`'s ring, which
    /// has room (fewer than RING_LEN outstanding).
    #[inline(always)]
    fn put(&mut self, dir: DmaDirection, dst: u64, src: u64, n: u32, flags: u32) {
        let d = dir.index();
        let Some(r) = self.rings.get_mut(d) else { return };
        let slot = r.head % RING_LEN;
        let at = Self::slot_ptr(r, r.head);
        r.head = r.head.wrapping_add(1);
        if let Some(dirty) = self.dirty.get_mut(d) {
            *dirty = (*dirty).max(slot + 1);
        }
        // SAFETY: a slot of the armed ring (see `init`), free because
        // fewer than RING_LEN descriptors are outstanding.
        unsafe { store_desc(at, src, dst, n, flags) };
    }

    /// [`DmaQueue::submit`] of a transfer cut into several descriptors or
    /// meeting a full ring (the checks done).
    #[inline(never)]
    fn submit_chunks<H: Hal>(&mut self, hal: &H, dir: DmaDirection, dst: u64, src: u64, len: u64) {
        let max = self.max_desc_bytes as u64;
        let mut off = 0u64;
        while off < len {
            let n = (len - off).min(max) as u32;
            if self.outstanding(dir) >= RING_LEN {
                self.wait_for_slot(hal, dir);
            }
            let last = off + n as u64 == len;
            let flags = if last { DescriptorFlags::VALID.bits() | DescriptorFlags::LAST.bits() } else { DescriptorFlags::VALID.bits() };
            self.put(dir, dst + off, src + off, n, flags);
            off += n as u64;
        }
        self.ring_doorbell(hal, dir);
    }

    /// The ring of `dir` is full: announce what is written, then wait for
    /// a slot. Out of line (rare: more than RING_LEN descriptors queued).
    #[inline(never)]
    fn wait_for_slot<H: Hal>(&mut self, hal: &H, dir: DmaDirection) {
        self.ring_doorbell(hal, dir);
        while self.reap(hal, dir) >= RING_LEN {}
    }

    /// Busy-polls until every descriptor of `dir` completed, then reports
    /// whether any faulted since the last wait (and forgets it).
    pub(crate) fn wait<H: Hal>(&mut self, hal: &H, dir: DmaDirection) -> Result<()> {
        if !self.armed {
            return Ok(());
        }
        self.ring_doorbell(hal, dir);
        while self.reap(hal, dir) != 0 {}
        let r = &mut self.rings[dir.index()];
        if core::mem::take(&mut r.faulted) {
            return Err(Error::DmaFault);
        }
        Ok(())
    }

    /// Drains both directions (M2S then S2M); the first fault is reported
    /// after both are drained.
    pub(crate) fn drain<H: Hal>(&mut self, hal: &H) -> Result<()> {
        let a = self.wait(hal, DmaDirection::M2S);
        let b = self.wait(hal, DmaDirection::S2M);
        a.and(b)
    }

    /// [`DmaQueue::submit`] then [`DmaQueue::wait`].
    #[inline(always)]
    pub(crate) fn transfer<H: Hal>(&mut self, hal: &H, dir: DmaDirection, dst: u64, src: u64, len: u64) -> Result<()> {
        self.submit(hal, dir, dst, src, len)?;
        self.wait(hal, dir)
    }
}

/// Writes one descriptor at `at` with plain 32-bit stores, the flags
/// (VALID) last. Plain, not volatile: a volatile store is a `memw` + store
/// each on the Xtensa, and the engine cannot look at the slot before the
/// doorbell anyway. The ordering the hardware needs — every word of every
/// descriptor visible before the doorbell's MMIO store — is given by the
/// two `memw` of [`DmaQueue::ring_doorbell`] (an `asm!` without `nomem`, so
/// also a compiler barrier: the stores are not moved past it). A slot is
/// only rewritten after the engine reported it complete.
///
/// # Safety
/// `at` must be valid for writes of a descriptor and 4-byte aligned.
#[inline(always)]
unsafe fn store_desc(at: *mut DmaDescriptor, src: u64, dst: u64, len: u32, flags: u32) {
    let w = at.cast::<u32>();
    // Word order of a u64 in memory.
    let (lo, hi) = if cfg!(target_endian = "little") { (0, 1) } else { (1, 0) };
    // SAFETY: the caller gives 32 writable, 4-aligned bytes at `at`;
    // offsets 0..8 words stay inside them. No reference is formed.
    unsafe {
        w.add(lo).write(src as u32);
        w.add(hi).write((src >> 32) as u32);
        w.add(2 + lo).write(dst as u32);
        w.add(2 + hi).write((dst >> 32) as u32);
        w.add(4).write(len);
        w.add(6).write(status::PENDING);
        w.add(7).write(0);
        w.add(5).write(flags);
    }
}

/// Local memory through the rings (`neuron_memcpy`'s DMA method): over the
/// HAL and the data-RAM heap that lends bounce blocks, not the core's whole
/// state.
impl DmaQueue {
    /// DMA from SoC `src` (HBM or SBUF) into local memory at `dst`,
    /// bouncing through a block of `heap` when `dst` is not in the staging
    /// window.
    ///
    /// # Safety
    /// `dst` must be valid for writes of `n` bytes and not overlap a
    /// data-RAM heap block the runtime uses during the call.
    pub unsafe fn read<H: Hal>(&mut self, hal: &H, heap: &mut DataRamHeap, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        if !self.armed {
            return Err(Error::DmaNotArmed);
        }
        if n == 0 {
            return Ok(());
        }
        if let Some(soc) = self.local_soc(dst, n as u64) {
            return self.transfer(hal, DmaDirection::M2S, soc, src, n as u64);
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.read_bounced(hal, heap, dst, src, n) }
    }

    /// [`DmaQueue::read`] through a bounce block, out of line (its frame
    /// stays off the direct path's stack).
    ///
    /// # Safety
    /// As [`DmaQueue::read`].
    #[inline(never)]
    unsafe fn read_bounced<H: Hal>(&mut self, hal: &H, heap: &mut DataRamHeap, dst: *mut u8, src: u64, n: u32) -> Result<()> {
        self.bounced(heap, n, |q, bounce, bsoc, off, c| {
            q.transfer(hal, DmaDirection::M2S, bsoc, src.wrapping_add(off as u64), c as u64)?;
            // SAFETY: the bounce block holds `c` bytes the engine just
            // wrote; `dst + off .. + c` is inside the caller's buffer; the
            // two do not overlap (the caller's buffer is not a runtime heap
            // block).
            unsafe { core::ptr::copy_nonoverlapping(bounce, dst.add(off), c) };
            Ok(())
        })
    }

    /// DMA from local memory at `src` to SoC `dst` (HBM or SBUF),
    /// bouncing through a block of `heap` when `src` is not in the staging
    /// window.
    ///
    /// # Safety
    /// `src` must be valid for reads of `n` bytes and not overlap a
    /// data-RAM heap block the runtime uses during the call.
    pub unsafe fn write<H: Hal>(&mut self, hal: &H, heap: &mut DataRamHeap, dst: u64, src: *const u8, n: u32) -> Result<()> {
        if !self.armed {
            return Err(Error::DmaNotArmed);
        }
        if n == 0 {
            return Ok(());
        }
        if let Some(soc) = self.local_soc(src, n as u64) {
            return self.transfer(hal, DmaDirection::S2M, dst, soc, n as u64);
        }
        // SAFETY: forwarded from the caller.
        unsafe { self.write_bounced(hal, heap, dst, src, n) }
    }

    /// [`DmaQueue::write`] through a bounce block, out of line.
    ///
    /// # Safety
    /// As [`DmaQueue::write`].
    #[inline(never)]
    unsafe fn write_bounced<H: Hal>(&mut self, hal: &H, heap: &mut DataRamHeap, dst: u64, src: *const u8, n: u32) -> Result<()> {
        self.bounced(heap, n, |q, bounce, bsoc, off, c| {
            // SAFETY: as in `read_bounced`, with the roles swapped.
            unsafe { core::ptr::copy_nonoverlapping(src.add(off), bounce, c) };
            q.transfer(hal, DmaDirection::S2M, dst.wrapping_add(off as u64), bsoc, c as u64)
        })
    }

    /// Moves `n` bytes in chunks through a bounce block of `heap` (for
    /// local memory outside the staging window). `step(queue, bounce,
    /// bounce_soc, offset, len)` moves one chunk; the block is freed
    /// afterwards.
    fn bounced(&mut self, heap: &mut DataRamHeap, n: u32, mut step: impl FnMut(&mut Self, *mut u8, u64, usize, usize) -> Result<()>) -> Result<()> {
        let Some((buf, cap)) = bounce::take(heap, n as u64) else {
            return Err(Error::DmaUnreachable);
        };
        let r = (|| {
            let bsoc = self.local_soc(buf.as_ptr(), cap as u64).ok_or(Error::DmaUnreachable)?;
            let mut off = 0usize;
            while off < n as usize {
                let c = (n as usize - off).min(cap);
                step(self, buf.as_ptr(), bsoc, off, c)?;
                off += c;
            }
            Ok(())
        })();
        let _ = heap.free(buf.as_ptr());
        r
    }
}
