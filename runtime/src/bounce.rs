//! Bounce blocks: data-RAM heap blocks lent to one copy that needs local
//! memory the DMA engine reaches (the staging window past the runtime's
//! reserve), for a caller's buffer elsewhere or an HBM → HBM copy.

use crate::heap::DataRamHeap;
use core::ptr::NonNull;

/// Largest bounce buffer taken from the data-RAM heap for one transfer
/// (defined here; the stream accessors use 4 KiB buffers, this is larger
/// so a bounced copy needs fewer descriptors).
pub const BOUNCE_BYTES: usize = 16 << 10;
/// Smallest bounce buffer worth trying before giving up.
pub const MIN_BOUNCE_BYTES: usize = 64;

/// Takes a bounce buffer of at most `want` bytes (and at most
/// [`BOUNCE_BYTES`]) from `heap`, halving the request on failure down to
/// [`MIN_BOUNCE_BYTES`]. Returns the block and its usable size; the caller
/// frees it with `heap.free`.
pub fn take(heap: &mut DataRamHeap, want: u64) -> Option<(NonNull<u8>, usize)> {
    let mut size = (want.min(BOUNCE_BYTES as u64) as usize).max(1);
    loop {
        if let Ok(p) = heap.allocate(size, 0) {
            return Some((p, size));
        }
        if size <= MIN_BOUNCE_BYTES {
            return None;
        }
        size = (size / 2).max(MIN_BOUNCE_BYTES);
    }
}
