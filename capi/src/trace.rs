//! What the library hands out and takes back, told to the emulated run's
//! checking plugin through the QEMU board's trace port
//! (`neuron_hal::xtensa::trace`). Only the emulated board's build (feature
//! `qemu` on Xtensa) sends anything; elsewhere every function here is an
//! empty inline, so the Q7's image and the host build carry none of it.

use core::ffi::c_void;

#[cfg(all(target_arch = "xtensa", feature = "qemu"))]
pub use neuron_hal::xtensa::trace::what;

/// What handed a block out (stand-ins where no port exists).
#[cfg(not(all(target_arch = "xtensa", feature = "qemu")))]
#[allow(dead_code)]
pub mod what {
    /// `tcm_malloc`.
    pub const TCM: u32 = 1;
    /// `malloc`.
    pub const MALLOC: u32 = 2;
    /// `calloc`.
    pub const CALLOC: u32 = 3;
    /// `torch::empty`.
    pub const TENSOR: u32 = 4;
}

#[cfg(all(target_arch = "xtensa", feature = "qemu"))]
mod port {
    use neuron_hal::xtensa::trace::{event, kind};

    pub fn block(p: usize, n: usize, what: u32) {
        if p != 0 {
            event(kind::BLOCK, p as u32, n as u32, what);
        }
    }
    pub fn freed(p: usize) {
        if p != 0 {
            event(kind::FREE, p as u32, 0, 0);
        }
    }
    pub fn reallocated(new: usize, old: usize, n: usize) {
        if new != 0 {
            event(kind::REALLOC, new as u32, old as u32, n as u32);
        }
    }
    pub fn stack_limit(isl: usize) {
        event(kind::STACK, isl as u32, 0, 0);
    }
    /// Where the core reaches SoC `soc` (hbm_scratch only: the rest of
    /// HBM has no RAM on the emulated board); 0 elsewhere.
    pub fn nx(soc: u64) -> usize {
        use neuron_hal::platform::{PINNED_WINDOW_SIZE, QEMU};
        match soc.checked_sub(QEMU.scratch_soc_base) {
            Some(off) if off < PINNED_WINDOW_SIZE => QEMU.scratch_window_nx as usize + off as usize,
            _ => 0,
        }
    }
}

#[cfg(not(all(target_arch = "xtensa", feature = "qemu")))]
mod port {
    #[inline(always)]
    pub fn block(_: usize, _: usize, _: u32) {}
    #[inline(always)]
    pub fn freed(_: usize) {}
    #[inline(always)]
    #[allow(dead_code)]
    pub fn reallocated(_: usize, _: usize, _: usize) {}
    #[inline(always)]
    #[allow(dead_code)]
    pub fn stack_limit(_: usize) {}
    #[inline(always)]
    pub fn nx(_: u64) -> usize {
        0
    }
}

/// Block `p` of `n` bytes was handed out by `what` (null: nothing).
#[inline(always)]
pub fn block(p: *const c_void, n: usize, what: u32) {
    port::block(p as usize, n, what);
}

/// Block `p` was given back (null: nothing).
#[inline(always)]
pub fn freed(p: *const c_void) {
    port::freed(p as usize);
}

/// `realloc` moved (or kept) block `old` as `new` of `n` bytes.
#[inline(always)]
#[allow(dead_code)]
pub fn reallocated(new: *const c_void, old: *const c_void, n: usize) {
    port::reallocated(new as usize, old as usize, n);
}

/// This core's stack limit is now `isl`.
#[inline(always)]
#[allow(dead_code)]
pub fn stack_limit(isl: usize) {
    port::stack_limit(isl);
}

/// A tensor's storage at SoC `soc` of `n` bytes was made by `what`.
#[inline(always)]
pub fn tensor(soc: u64, n: u64, what: u32) {
    port::block(port::nx(soc), n as usize, what);
}

/// The tensor storage at SoC `soc` was given back.
#[inline(always)]
pub fn tensor_freed(soc: u64) {
    port::freed(port::nx(soc));
}

/// [`neuron_hal::quietly`], the one definition.
pub(crate) use neuron_hal::quietly;

/// Evaluates `$run`, the kernel's wrapper launched with its stack's top at
/// `$top` (0: the current stack pointer) and `$bytes` of stack asked for
/// (`-DSTACK_SIZE`), telling the check before and after. A macro for the
/// reason [`quietly`] is: the Q7's image is the same code without it.
macro_rules! on_kernel_stack {
    ($top:expr, $bytes:expr, $run:expr) => {{
        #[cfg(all(target_arch = "xtensa", feature = "qemu"))]
        neuron_hal::xtensa::trace::kernel_stack($top as u32, $bytes);
        $run;
        #[cfg(all(target_arch = "xtensa", feature = "qemu"))]
        neuron_hal::xtensa::trace::kernel_stack(0, 0);
    }};
}
pub(crate) use on_kernel_stack;
