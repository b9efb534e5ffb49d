//! Running a wrapper on an HBM stack: saving the caller's stack state,
//! installing the new SP and ISL, and restoring both afterwards.

use crate::ffi::launch::WrapperFn;
use neuron_runtime::stack::HbmStack;

/// Smallest HBM stack worth switching to on this architecture: host code
/// (debug builds, the C++ runtime) needs far more than the Q7's 4196 bytes.
#[cfg(not(target_arch = "xtensa"))]
pub const MIN_HBM_STACK: u32 = 256 << 10;

/// Runs `wrapper` with SP at the top of `stack` and ISL at its bottom,
/// then restores the caller's ISL.
///
/// # Safety
/// `stack` must be live memory the core owns for the duration; `wrapper`
/// must be sound to call.
#[cfg(not(target_arch = "xtensa"))]
pub unsafe fn run_on(stack: HbmStack, wrapper: WrapperFn) {
    use neuron_hal::Hal;
    // The HBM stack as corosensei sees it: the mock's HBM is host memory
    // (the pinned window's mapping), so the host CPU can run on it.
    struct OnHbm(HbmStack);
    // SAFETY: base/limit are the ends of a live, exclusively owned block,
    // 64-byte aligned (>= STACK_ALIGNMENT), at least MIN_STACK_SIZE long.
    unsafe impl corosensei::stack::Stack for OnHbm {
        fn base(&self) -> corosensei::stack::StackPointer {
            corosensei::stack::StackPointer::new(self.0.top).expect("stack top is non-zero")
        }
        fn limit(&self) -> corosensei::stack::StackPointer {
            corosensei::stack::StackPointer::new(self.0.limit).expect("stack limit is non-zero")
        }
    }
    let saved_isl = crate::binding::with_core(|b| {
        let old = b.state.hal().stack_limit();
        // SAFETY: the HBM stack from `stack.limit` up is the wrapper's,
        // which runs on it next; the old limit comes back after.
        unsafe { b.state.hal().set_stack_limit(stack.limit) };
        Ok(old)
    });
    // SAFETY: the caller vouches for wrapper; it runs to completion.
    corosensei::on_stack(OnHbm(stack), || unsafe { wrapper() });
    if let Ok(isl) = saved_isl {
        let _ = crate::binding::with_core(|b| {
            // SAFETY: back on the stack whose limit this was.
            unsafe { b.state.hal().set_stack_limit(isl) };
            Ok(())
        });
    }
}

/// Smallest HBM stack worth switching to on the device.
#[cfg(target_arch = "xtensa")]
pub use crate::device::switch::MIN_HBM_STACK;

/// Runs `wrapper` with SP at the top of `stack` and ISL at its bottom
/// (assembly: `src/device/switch.rs`), then restores SP, PS and ISL.
///
/// # Safety
/// `stack` must be live memory the core owns for the duration; `wrapper`
/// must be sound to call.
#[cfg(target_arch = "xtensa")]
pub unsafe fn run_on(stack: HbmStack, wrapper: WrapperFn) {
    // SAFETY: forwarded from the caller.
    unsafe { crate::device::switch::run_on(stack, wrapper) }
}
