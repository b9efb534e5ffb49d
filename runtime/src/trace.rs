//! The emulated board's trace port (`neuron_hal::xtensa::trace`) for what
//! the runtime takes for itself from pools the kernel also allocates from
//! (the stream buffers of the TCM pool): the checking plugin then knows
//! those bytes are the library's. Only the emulated board's build
//! (feature `qemu` on Xtensa) sends anything; elsewhere these are empty.

#[cfg(all(target_arch = "xtensa", feature = "qemu"))]
mod port {
    use neuron_hal::xtensa::trace::{event, kind, what};

    pub fn library_block(p: *mut u8, n: usize) {
        event(kind::BLOCK, p as u32, n as u32, what::LIBRARY);
    }
    pub fn freed(p: *mut u8) {
        event(kind::FREE, p as u32, 0, 0);
    }
}

#[cfg(not(all(target_arch = "xtensa", feature = "qemu")))]
mod port {
    #[inline(always)]
    pub fn library_block(_: *mut u8, _: usize) {}
    #[inline(always)]
    pub fn freed(_: *mut u8) {}
}

/// `p`, `n` bytes, is now a buffer of the library's.
#[inline(always)]
pub(crate) fn library_block(p: *mut u8, n: usize) {
    port::library_block(p, n);
}

/// The library's buffer `p` went back to its pool.
#[inline(always)]
pub(crate) fn freed(p: *mut u8) {
    port::freed(p);
}

/// [`neuron_hal::quietly`], the one definition.
pub(crate) use neuron_hal::quietly;
