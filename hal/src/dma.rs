//! The DMA descriptor and its ring (assumed layout, defined here).
//!
//! The references name the CME buffer-descriptor ring, the M2S/S2M
//! increment registers and a busy-poll on completion, but not the bits.
//! This is our definition; the mock engine implements exactly it.

use static_assertions::const_assert_eq;

/// The two directions of the engine, each with its own ring and doorbell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum DmaDirection {
    /// Memory to stream: HBM → data RAM (a read, a stream refill).
    M2S = 0,
    /// Stream to memory: data RAM → HBM (a write, a stream flush).
    S2M = 1,
}

impl DmaDirection {
    /// Both directions, M2S first (the register bank order).
    pub const ALL: [DmaDirection; 2] = [DmaDirection::M2S, DmaDirection::S2M];

    /// Index of the register bank and ring of this direction.
    pub const fn index(self) -> usize {
        self as usize
    }
}

bitflags::bitflags! {
    /// Control bits of a descriptor, written by the core.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    pub struct DescriptorFlags: u32 {
        /// The descriptor is filled in and owned by the engine.
        const VALID = 1 << 0;
        /// Last descriptor of a transfer (informational for tools).
        const LAST = 1 << 1;
    }
}

/// Completion status, written by the engine.
pub mod status {
    /// Not processed yet.
    pub const PENDING: u32 = 0;
    /// Bytes moved.
    pub const DONE: u32 = 1;
    /// An address did not resolve; nothing moved.
    pub const FAULT: u32 = 2;
}

/// One buffer descriptor, 32 bytes, in the ring in data RAM.
///
/// Both addresses are SoC addresses: HBM for one side, the core's data-RAM
/// aperture for the other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct DmaDescriptor {
    /// Source SoC address.
    pub src: u64,
    /// Destination SoC address.
    pub dst: u64,
    /// Bytes to move.
    pub len: u32,
    /// [`DescriptorFlags`] bits.
    pub flags: u32,
    /// A [`status`] value, written by the engine.
    pub status: u32,
    /// Must be 0.
    pub reserved: u32,
}

const_assert_eq!(core::mem::size_of::<DmaDescriptor>(), 32);
const_assert_eq!(core::mem::align_of::<DmaDescriptor>(), 8);

impl DmaDescriptor {
    /// Stores `self` at `at` as eight volatile 32-bit words (the status
    /// word and the flags last but one), not as one aggregate volatile
    /// store, which the compiler lowers to a `memcpy` call (~80
    /// instructions on the Q7 against 8 stores).
    ///
    /// # Safety
    /// `at` must be valid for writes of a descriptor and 4-byte aligned.
    #[inline(always)]
    pub unsafe fn store_volatile(self, at: *mut DmaDescriptor) {
        let w = at.cast::<u32>();
        // Word order of a u64 in memory.
        let (lo, hi) = if cfg!(target_endian = "little") { (0, 1) } else { (1, 0) };
        // SAFETY: the caller gives 32 writable, 4-aligned bytes at `at`;
        // offsets 0..8 words stay inside them. No reference is formed.
        unsafe {
            w.add(lo).write_volatile(self.src as u32);
            w.add(hi).write_volatile((self.src >> 32) as u32);
            w.add(2 + lo).write_volatile(self.dst as u32);
            w.add(2 + hi).write_volatile((self.dst >> 32) as u32);
            w.add(4).write_volatile(self.len);
            w.add(6).write_volatile(self.status);
            w.add(7).write_volatile(self.reserved);
            w.add(5).write_volatile(self.flags);
        }
    }
}

/// Largest transfer one descriptor carries (the staging window's size).
pub const MAX_DESCRIPTOR_BYTES: u32 = crate::platform::DMA_WINDOW_SIZE;
/// Descriptors per ring (defined here).
pub const RING_LEN: u32 = 16;
/// Bytes of one ring.
pub const RING_BYTES: u32 = RING_LEN * core::mem::size_of::<DmaDescriptor>() as u32;

/// Where the ring of `dir` starts in the DMA staging window: the two
/// rings side by side at its start (the runtime's reserve).
pub const fn ring_offset(dir: DmaDirection) -> u32 {
    dir.index() as u32 * RING_BYTES
}
