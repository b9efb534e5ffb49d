//! QEMU only: the trace port that tells the emulated run's checking
//! plugin (`perf/profile.c`) what the runtime hands out and takes back.
//!
//! QEMU 7.2's plugins see a store's address, not its value, so every
//! field travels in the address of a byte store into
//! [`qemu::TRACE_PORT_NX`]: `+ (field << 16 | 16 bits)`. Fields 0..6 are
//! the event's three 32-bit words (low half, high half); a store to field
//! 7 commits the event with its kind as the value. Field 6 alone is the
//! quiet switch: the allocator's own reads and writes of its bookkeeping
//! are not the kernel's. The plugin assembles events per vCPU, so cores
//! never mix their fields.
//!
//! Never inlined: `cargo xtask perf` and the profile leave this module's
//! functions (as the DMA engine's) out of the instruction counts by
//! address, so the counted paths pay only the call.

use crate::platform::qemu;

/// Kinds of events (the plugin's numbering).
pub mod kind {
    /// A block was handed out: address, bytes, [`super::what`] code.
    pub const BLOCK: u16 = 1;
    /// A block was given back: address.
    pub const FREE: u16 = 2;
    /// An input tensor's storage: address, bytes, argument index.
    pub const INPUT: u16 = 3;
    /// The output tensor's storage: address, bytes.
    pub const OUTPUT: u16 = 4;
    /// The stack limit of this core is now the address.
    pub const STACK: u16 = 5;
    /// The op starts on this core: address = the op's invocation block.
    pub const RUN_START: u16 = 6;
    /// The op ended on this core.
    pub const RUN_END: u16 = 7;
    /// `realloc`: new address, old address, new bytes (the old block's
    /// written bytes stay written in the new one).
    pub const REALLOC: u16 = 8;
    /// The kernel's stack on the device: top, bytes it asked for
    /// (`-DSTACK_SIZE`, or the default); bytes 0: the kernel returned.
    pub const KERNEL_STACK: u16 = 9;
}

/// What handed a block out (the third word of a [`kind::BLOCK`]).
pub mod what {
    /// `tcm_malloc`: unwritten.
    pub const TCM: u32 = 1;
    /// `malloc` (and C++ `new`): unwritten.
    pub const MALLOC: u32 = 2;
    /// `calloc`: written (zeros).
    pub const CALLOC: u32 = 3;
    /// A tensor's storage the library made (`torch::empty`): unwritten.
    pub const TENSOR: u32 = 4;
    /// A tensor's storage the library made and filled (`torch::zeros`).
    pub const TENSOR_FILLED: u32 = 5;
    /// A buffer of the library's own (a stream's): not checked.
    pub const LIBRARY: u32 = 6;
}

const QUIET: u32 = 6;
const COMMIT: u32 = 7;

#[inline(always)]
fn store(field: u32, v: u32) {
    let at = (qemu::TRACE_PORT_NX + (field << 16) + (v & 0xffff)) as usize as *mut u8;
    // SAFETY: the trace port is RAM of the emulated board that nothing
    // else uses (platform::qemu); only the store's address matters.
    unsafe { at.write_volatile(0) };
}

/// Sends one event of `kind` with words `a`, `b`, `c`.
#[inline(never)]
pub fn event(kind: u16, a: u32, b: u32, c: u32) {
    for (i, w) in [a, b, c].into_iter().enumerate() {
        store(2 * i as u32, w);
        store(2 * i as u32 + 1, w >> 16);
    }
    store(COMMIT, u32::from(kind));
}

/// Starts (`true`) or ends a stretch of the library's own bookkeeping,
/// which the plugin does not check (nested stretches count).
#[inline(never)]
pub fn quiet(on: bool) {
    store(QUIET, u32::from(on));
}

/// The kernel is launched with its stack's top at `top` (0: the caller's
/// stack pointer, as it runs on the current stack) and asks for `bytes`
/// (`-DSTACK_SIZE`); `bytes` 0 when it has returned.
#[inline(never)]
pub fn kernel_stack(top: u32, bytes: u32) {
    let top = if top == 0 && bytes != 0 {
        let sp: u32;
        // SAFETY: reads a1 (the stack pointer) into a register; no memory,
        // no flags.
        unsafe { core::arch::asm!("mov {0}, a1", out(reg) sp, options(nomem, nostack, preserves_flags)) };
        sp
    } else {
        top
    };
    event(kind::KERNEL_STACK, top, bytes, 0);
}
