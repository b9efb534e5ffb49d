//! The three heaps of SPEC §4: first-fit, address-ordered, coalescing,
//! 64-byte aligned, no locks (each core's memory is private).

pub mod dataram;
pub mod hbm;
pub mod libc;
mod stats;

pub use dataram::DataRamHeap;
pub use hbm::HbmHeap;
pub use libc::LibcHeap;
pub use stats::HeapStats;

/// Every block starts on this boundary and is a multiple of it in size.
pub const HEAP_ALIGN: usize = 64;

/// Rounds `n` up to a multiple of `align` (a power of two); `None` on overflow.
pub(crate) const fn round_up(n: u64, align: u64) -> Option<u64> {
    match n.checked_add(align - 1) {
        Some(v) => Some(v & !(align - 1)),
        None => None,
    }
}

/// The effective alignment: at least [`HEAP_ALIGN`], a power of two.
pub(crate) fn effective_align(align: usize) -> crate::Result<usize> {
    if align == 0 || align.is_power_of_two() {
        Ok(align.max(HEAP_ALIGN))
    } else {
        Err(crate::Error::BadAlignment)
    }
}
