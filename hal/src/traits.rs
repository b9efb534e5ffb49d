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
///
/// # Safety
///
/// The runtime's safe methods build heaps on, and write through, what
/// this trait answers, so an implementation promises (the contract its
/// `unsafe impl` states it keeps):
///
/// - [`platform`](Hal::platform) is this core's table and does not change
///   over the HAL's life.
/// - [`nx_ptr`](Hal::nx_ptr) maps the table's data-RAM heap range
///   ([`Platform::dataram_heap`]) and this core's part of the pinned
///   scratch window (its libc heap's two arenas) to memory valid for reads and writes
///   for as long as the HAL lives, used by nothing but the runtime that
///   owns this HAL (no Rust reference into it), contiguously (`nx_ptr(a +
///   k) == nx_ptr(a) + k` within a range) and the same on every call. A
///   window range maps to the SoC memory its window shows; an address
///   outside every range may return any pointer (it is never
///   dereferenced unless an `unsafe` caller vouched for it).
/// - [`write_window_register`](Hal::write_window_register) changes only
///   what window `w` shows; nothing else in the NX map moves.
/// - The DMA engine ([`dma_arm`](Hal::dma_arm),
///   [`dma_doorbell`](Hal::dma_doorbell)) moves bytes only between the
///   places the ring's descriptors name, and
///   [`dma_completed`](Hal::dma_completed) never counts a descriptor as
///   done before its bytes have moved (the runtime reuses a bounce block
///   once it is).
/// - [`stack_pointer`](Hal::stack_pointer) and
///   [`stack_limit`](Hal::stack_limit) tell the truth, and
///   [`set_stack_limit`](Hal::set_stack_limit) only sets the limit.
/// - At most one HAL stands for a core at a time (two would program its
///   windows behind each other's translator).
///
/// A safe `impl` does not compile:
///
/// ```compile_fail,E0200
/// use neuron_hal::{DmaDirection, Hal, Platform, WindowId};
/// struct Wild;
/// impl Hal for Wild {
///     fn platform(&self) -> &Platform { &neuron_hal::Q7 }
///     fn prid(&self) -> u32 { 0 }
///     fn nx_ptr(&self, _: u32) -> *mut u8 { 0x1000 as *mut u8 }
///     unsafe fn write_window_register(&self, _: WindowId, _: u64) {}
///     fn memw(&self) {}
///     unsafe fn dma_doorbell(&self, _: DmaDirection, _: u32) {}
///     fn dma_completed(&self, _: DmaDirection) -> u32 { 0 }
///     unsafe fn dma_arm(&self, _: DmaDirection) {}
///     fn read_window_register(&self, _: u32) -> u64 { 0 }
///     fn invocation_block(&self) -> u64 { 0 }
///     fn stack_pointer(&self) -> usize { 0 }
///     fn stack_limit(&self) -> usize { 0 }
///     unsafe fn set_stack_limit(&self, _: usize) {}
/// }
/// ```
///
/// A shared `&H` lends the queries only: what moves a window, rings or
/// re-arms the DMA engine, or moves the stack limit is `unsafe` to call,
/// so safe code holding a lent HAL cannot program the core behind its
/// runtime's back:
///
/// ```compile_fail,E0133
/// fn retarget<H: neuron_hal::Hal>(lent: &H) {
///     lent.write_window_register(neuron_hal::WindowId::new(0).unwrap(), 0);
/// }
/// ```
///
/// ```compile_fail,E0133
/// fn ring<H: neuron_hal::Hal>(lent: &H) {
///     lent.dma_arm(neuron_hal::DmaDirection::M2S);
///     lent.dma_doorbell(neuron_hal::DmaDirection::M2S, 1);
/// }
/// ```
///
/// ```compile_fail,E0133
/// fn unlimit<H: neuron_hal::Hal>(lent: &H) {
///     lent.set_stack_limit(0);
/// }
/// ```
pub unsafe trait Hal {
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
    ///
    /// # Safety
    /// The caller is the translator of the runtime that owns this core
    /// (the one owner the trait's contract names), and its record for `w`
    /// names `region_base` from now on: every pointer it hands out into
    /// the window shows the region it believes. Anyone else moving the
    /// window would make those pointers reach other memory.
    unsafe fn write_window_register(&self, w: WindowId, region_base: u64);

    /// Memory-write fence (`memw`): every earlier store is visible to the
    /// SoC before any later one.
    fn memw(&self);

    /// Rings a DMA queue's doorbell: `count` new descriptors were appended
    /// to the ring of `dir` (the M2S or S2M increment register).
    ///
    /// # Safety
    /// The caller is the DMA queue of the runtime that owns this core: the
    /// ring was armed by it, and the `count` descriptors after the last
    /// ones rung are whole and name only places the engine may write
    /// (nothing a Rust reference covers while the transfer is pending).
    unsafe fn dma_doorbell(&self, dir: DmaDirection, count: u32);

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
    ///
    /// # Safety
    /// The caller is the DMA queue of the runtime that owns this core, and
    /// no transfer of `dir` is outstanding (re-arming forgets them while
    /// the engine may still move their bytes).
    unsafe fn dma_arm(&self, dir: DmaDirection);

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
    ///
    /// # Safety
    /// The code running on this core has its stack at and above `isl` up
    /// to the stack pointer, and nothing else lives there: a limit below
    /// the stack's real end lets it grow over other memory unchecked.
    unsafe fn set_stack_limit(&self, isl: usize);

    /// The runtime copied SoC `[addr, addr + len)` out (a `neuron_memcpy`,
    /// a stream refill, `tensor_to_tcm`). Heard by the host simulator's
    /// sanitizer; the hardware has nothing to hear it (the default).
    #[inline(always)]
    fn note_soc_read(&self, _addr: u64, _len: u64) {}

    /// The runtime copied into SoC `[addr, addr + len)`. As
    /// [`note_soc_read`](Self::note_soc_read).
    #[inline(always)]
    fn note_soc_write(&self, _addr: u64, _len: u64) {}

    /// Whether SoC `[addr, addr + len)` reads as zeros now and a fill of
    /// zeros there may be left out (noted with
    /// [`note_soc_write`](Self::note_soc_write), not made). The host
    /// simulator's core for shape functions says so of memory nothing
    /// wrote yet: its fills have no observer but the contents (a vendor
    /// shape function's `torch::zeros` of a 256 MiB output would write
    /// 256 MiB for a shape). The hardware, and every kernel's core, never
    /// (the default), so a kernel's DMA traffic stays the device's.
    #[inline(always)]
    fn reads_zero(&self, _addr: u64, _len: u64) -> bool {
        false
    }

    /// The runtime copied SoC `[src, src + len)` to `[dst, dst + len)` (a
    /// returned tensor onto the output). As
    /// [`note_soc_read`](Self::note_soc_read).
    #[inline(always)]
    fn note_soc_copy(&self, _dst: u64, _src: u64, _len: u64) {}

    /// The runtime is about to hand kernel code a pointer into SoC memory
    /// whose loads and stores nothing will note (`neuron_translate`, a
    /// Rust accessor's cached window, an HBM stack). The host simulator's
    /// sanitizer then takes the page hashes of the run's inputs, once per
    /// run, before the pointer exists: a store through it into an input is
    /// found after the run by those hashes. The hardware has nothing to
    /// do (the default).
    #[inline(always)]
    fn note_raw_pointer(&self) {}
}
