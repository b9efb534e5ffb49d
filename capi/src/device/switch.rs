//! The stack switch on Xtensa (SPEC §7): running a wrapper on an HBM
//! stack under the windowed register ABI.
//!
//! `neuron_stack_switch_call(ctx)` is one assembly frame T between the
//! caller C (Rust, `run_on`) and the wrapper W:
//!
//! 1. `entry a1, 48`; keep the old SP (a4) and `ctx` (a5) in registers
//!    that survive `callx8`.
//! 2. Spill every live register window but T's own: a `call12` recursion
//!    7 frames deep (84 registers, more than any register file) forces
//!    the overflow handler through all of them, oldest first. Afterwards
//!    C and everything older is on the old stack, and [old_sp-16, old_sp)
//!    holds C's base save area (C's a0..a3; C's SP at -12).
//! 3. With interrupts masked (`rsil`), copy that base save area to the 16
//!    bytes below the new SP, install SP = new top, restore PS. T now
//!    looks as if it had always lived at the new SP: when W's callees
//!    overflow T, its a0..a3 go below W's SP (new stack) and its a4..a7 to
//!    [C_sp-32, C_sp-16) on the old stack (T's own frame there), found
//!    through the copied C_sp; underflow reads them back the same way.
//! 4. ISL = new stack base (a call into Rust, on the new stack, so SP is
//!    never below ISL), then `callx8` the wrapper.
//! 5. `switchBack`: ISL = the old limit (still on the new stack), mask
//!    interrupts, SP = old SP, restore PS, `retw`. C's window was spilled,
//!    so the return underflows it from [old_sp-16, old_sp), untouched
//!    since step 2.
//!
//! The HBM stack is allocated (and freed) by the caller in
//! `ffi::launch`, through the pinned hbm_scratch window, so no dynamic
//! window can be reprogrammed under the running stack.

use crate::ffi::launch::WrapperFn;
use neuron_runtime::stack::HbmStack;

/// Smallest HBM stack worth switching to on the device.
pub const MIN_HBM_STACK: u32 = 16 << 10;

/// What the assembly needs, in one block it reads by offset.
///
/// cbindgen:ignore
#[repr(C)]
struct SwitchCtx {
    /// +0: the wrapper.
    wrapper: WrapperFn,
    /// +4: the new SP (16-byte aligned top of the HBM stack).
    sp: usize,
    /// +8: the new ISL (the HBM stack's base).
    isl: usize,
    /// +12: the caller's ISL, put back before SP is.
    old_isl: usize,
}

const _: () = assert!(core::mem::offset_of!(SwitchCtx, old_isl) == 12);

/// Called by the trampoline, on the new stack, to set ISL.
///
/// cbindgen:ignore
#[unsafe(no_mangle)]
extern "C" fn neuron_stack_switch_set_isl(isl: usize) {
    // SAFETY: the trampoline calls it on the new stack, whose bottom `isl`
    // is, and again with the old limit once back on the old stack.
    unsafe { crate::device::set_stack_limit(isl) };
}

/// `switchBack` for code that calls it at the end of a wrapper (the
/// original's generated wrapper does): here the switch back happens when
/// the wrapper returns into the trampoline, so this is a plain, harmless
/// function.
#[unsafe(no_mangle)]
pub extern "C" fn switchBack() {}

/// Runs `wrapper` with SP at the top of `stack` and ISL at its bottom,
/// then restores SP, PS and ISL.
///
/// # Safety
/// `stack` must be live memory the core owns for the duration, reachable
/// without a dynamic window; `wrapper` must be sound to call.
pub unsafe fn run_on(stack: HbmStack, wrapper: WrapperFn) {
    // Declared here, not at module level, so the header generator does
    // not export the trampoline.
    unsafe extern "C" {
        /// The assembly trampoline (below).
        fn neuron_stack_switch_call(ctx: *const SwitchCtx);
    }
    let ctx = SwitchCtx { wrapper, sp: stack.top & !15, isl: stack.limit, old_isl: crate::device::stack_limit() };
    // SAFETY: the caller vouches for the stack and the wrapper; `ctx`
    // outlives the call (the trampoline reads it from the new stack too,
    // as plain memory on the old one).
    unsafe { neuron_stack_switch_call(&ctx) };
}

core::arch::global_asm!(
    r#"
    .section .text.neuron_stack_switch_call, "ax"
    .balign 4
.Lsw_spill:
    .long   neuron_window_spill_rec
.Lsw_set_isl:
    .long   neuron_stack_switch_set_isl
    .global neuron_stack_switch_call
    .type neuron_stack_switch_call, @function
    .balign 4
neuron_stack_switch_call:
    entry   a1, 48
    mov     a4, a1
    mov     a5, a2
    movi    a14, 6
    l32r    a8, .Lsw_spill
    callx12 a8
    rsr     a6, ps
    rsil    a7, 15
    l32i    a8, a5, 4
    addi    a9, a4, -16
    addi    a10, a8, -16
    l32i    a11, a9, 0
    s32i    a11, a10, 0
    l32i    a11, a9, 4
    s32i    a11, a10, 4
    l32i    a11, a9, 8
    s32i    a11, a10, 8
    l32i    a11, a9, 12
    s32i    a11, a10, 12
    mov     a1, a8
    wsr     a6, ps
    rsync
    l32i    a10, a5, 8
    l32r    a8, .Lsw_set_isl
    callx8  a8
    l32i    a8, a5, 0
    callx8  a8
    .global neuron_stack_switch_back
neuron_stack_switch_back:
    l32i    a10, a5, 12
    l32r    a8, .Lsw_set_isl
    callx8  a8
    rsil    a7, 15
    mov     a1, a4
    wsr     a6, ps
    rsync
    retw
    .size neuron_stack_switch_call, . - neuron_stack_switch_call

    .section .text.neuron_window_spill_rec, "ax"
    .balign 4
.Lspill_self:
    .long   neuron_window_spill_rec
    .global neuron_window_spill_rec
    .type neuron_window_spill_rec, @function
    .balign 4
neuron_window_spill_rec:
    entry   a1, 48
    beqz    a2, 1f
    addi    a14, a2, -1
    l32r    a8, .Lspill_self
    callx12 a8
1:
    retw
    .size neuron_window_spill_rec, . - neuron_window_spill_rec
    "#
);
