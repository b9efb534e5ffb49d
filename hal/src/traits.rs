//! The one trait the runtime needs from hardware.

use crate::dma::DmaDirection;
use crate::platform::Platform;
use crate::window::WindowId;

/// What the runtime needs from one Q7 core, and nothing more.
///
/// An implementation stands for exactly one core. Methods take `&self`
/// because the hardware they reach is not Rust memory; implementations
/// that keep state (the mock) use interior mutability, and are not `Sync`,
/// since a core is driven by one thread of control.
pub trait Hal {
    /// The address map and register table of this core.
    fn platform(&self) -> &Platform;

    /// The raw processor id (`rsr.prid`, special register 235).
    fn prid(&self) -> u32;

    /// Turns a core-local (NX) address into a pointer this core can
    /// dereference. The identity on the device; on the host, an address in
    /// the mock's reservation for this core's NX space.
    fn nx_ptr(&self, nx: u32) -> *mut u8;

    /// Writes `region_base` to the register of dynamic window `w` (its
    /// address is the platform table's), so that the window shows the SoC
    /// region starting there. The caller brackets it with [`Hal::memw`] as
    /// the hardware requires. Typed: no other register can be written.
    fn write_window_register(&self, w: WindowId, region_base: u64);

    /// Memory-write fence (`memw`): every earlier store is visible to the
    /// SoC before any later one.
    fn memw(&self);

    /// Rings a DMA queue's doorbell: `count` new descriptors were appended
    /// to the ring of `dir` (the M2S or S2M increment register).
    fn dma_doorbell(&self, dir: DmaDirection, count: u32);

    /// Reads how many descriptors the engine of `dir` has completed since
    /// the ring was armed (a free-running counter that wraps).
    ///
    /// Busy-polling this is how the runtime waits; a model of the engine
    /// may use the read as the moment time passes.
    fn dma_completed(&self, dir: DmaDirection) -> u32;

    /// Arms the ring of `dir` where the platform puts it (the DMA staging
    /// window's start plus [`crate::dma::ring_offset`], [`crate::dma::RING_LEN`]
    /// entries); the completion counter restarts at 0. The ring's place is
    /// not an argument, so safe code cannot point the engine elsewhere.
    fn dma_arm(&self, dir: DmaDirection);

    /// Reads a window register back (`MEM_WINDOW0_LO` is checked against
    /// the APB base when the DMA queue is armed).
    fn read_window_register(&self, reg: u32) -> u64;

    /// SoC address of the invocation block of the call being served (the
    /// loader's mailbox register on the device; set by the host simulator
    /// in the mock). 0 when no invocation is pending.
    fn invocation_block(&self) -> u64;

    /// The current stack pointer (`a1`). A `usize` because on the host the
    /// stack is host memory; on the device it is an NX address.
    fn stack_pointer(&self) -> usize;

    /// The stack-limit special register (ISL): the lowest address the
    /// stack may grow to.
    fn stack_limit(&self) -> usize;

    /// Sets the stack-limit register.
    fn set_stack_limit(&self, isl: usize);

    /// The runtime copied SoC `[addr, addr + len)` out (a `neuron_memcpy`,
    /// a stream refill, `tensor_to_tcm`). Heard by the host simulator's
    /// sanitizer; the hardware has nothing to hear it (the default).
    #[inline(always)]
    fn note_soc_read(&self, _addr: u64, _len: u64) {}

    /// The runtime copied into SoC `[addr, addr + len)`. As
    /// [`note_soc_read`](Self::note_soc_read).
    #[inline(always)]
    fn note_soc_write(&self, _addr: u64, _len: u64) {}

    /// The runtime copied SoC `[src, src + len)` to `[dst, dst + len)` (a
    /// returned tensor onto the output). As
    /// [`note_soc_read`](Self::note_soc_read).
    #[inline(always)]
    fn note_soc_copy(&self, _dst: u64, _src: u64, _len: u64) {}
}
