//! Device-only parts of the library (`target_arch = "xtensa"`): the libc
//! heap exports and Rust's global allocator, what libc++ needs out of line
//! (`operator new`/`delete`, its abort paths), the panic handler, the stack
//! switch, and what a test board or loader needs to stand a core up. (The C
//! math library is the `neuron-libm` crate, in the archive through the
//! `neuroncustomop` shell.)

pub mod cxx;
pub mod heap;
#[cfg(feature = "panic-handler")]
mod panic;
#[cfg(feature = "qemu")]
pub(crate) mod semihosting;
pub(crate) mod switch;

use crate::binding::with_core;
use neuron_hal::Hal;

/// What the firmware does at boot on the Q7: set the stack-limit register
/// to the bottom of the core's on-core stack. A test board calls this
/// (under QEMU, where ISL is a RAM word, it starts at 0).
///
/// # Safety
/// The code running on this core has its stack from `isl` up to the stack
/// pointer, and nothing else lives there: a lower limit lets the stack
/// grow over other memory unchecked.
pub unsafe fn set_stack_limit(isl: usize) {
    let _ = with_core(|b| {
        // SAFETY: the caller's contract.
        unsafe { b.state.hal().set_stack_limit(isl) };
        Ok(())
    });
    crate::trace::stack_limit(isl);
}

/// The current stack-limit register.
pub fn stack_limit() -> usize {
    with_core(|b| Ok(b.state.hal().stack_limit())).unwrap_or(0)
}

/// QEMU only: what the loader does before it starts an op: post the SoC
/// address of the invocation block in this core's mailbox register.
#[cfg(feature = "qemu")]
pub fn post_invocation(block: u64) {
    let _ = with_core(|b| {
        b.state.hal().post_invocation(block);
        Ok(())
    });
}

/// Runs `f` on the calling core's runtime state (for on-target tests that
/// look at heap statistics or the translation context).
pub fn with_state<R>(f: impl FnOnce(&mut neuron_runtime::CoreState<crate::binding::CoreHal>) -> R) -> Option<R> {
    with_core(|b| Ok(f(&mut b.state))).ok()
}
