//! QEMU only: the registers and the SDMA engine the emulated core lacks,
//! implemented in software over this core's RAM register block.
//!
//! The engine implements exactly `crate::dma` (descriptor format) and
//! `platform::dma_regs` (register table), as the host mock does: the
//! doorbell adds to a private "submitted" count, and each poll of the
//! completion counter processes at most one pending descriptor, so bytes
//! move when descriptors are processed, not when the doorbell rings. What
//! it reaches: this core's DMA aperture (its staging window) and HBM
//! inside hbm_scratch (the only HBM backed by RAM on QEMU); anything else
//! completes with `status::FAULT`.

pub mod trace;

use super::MmioHal;
use crate::dma::{status, DescriptorFlags, DmaDescriptor, DmaDirection};
use crate::platform::{dma_regs, qemu, DMA_WINDOW_SIZE, PINNED_WINDOW_SIZE};
use crate::Hal;

/// Reset values: `MEM_WINDOW0_LO` = the APB base, everything else 0.
pub(super) fn reset(h: &MmioHal) {
    let p = *h.platform();
    h.write_reg(p.mem_window0_nx, p.apb_base);
    h.write_reg(p.mem_window0_nx + 4, 0);
    for w in p.dynamic_windows {
        h.write_reg(w.register, 0);
        h.write_reg(w.register + 4, 0);
    }
    for dir in DmaDirection::ALL {
        let bank = p.dma_regs_nx + dir.index() as u32 * dma_regs::BANK_STRIDE;
        for off in [dma_regs::RING_BASE, dma_regs::RING_LEN, dma_regs::INCREMENT, dma_regs::COMPLETED, qemu::DMA_SUBMITTED] {
            h.write_reg(bank + off, 0);
        }
    }
    h.write_reg(p.apb_base + qemu::ISL_OFFSET, 0);
    h.post_invocation(0);
}

/// Writing RING_LEN re-arms: both counters restart at 0.
pub(super) fn arm(h: &MmioHal, bank: u32) {
    h.write_reg(bank + dma_regs::COMPLETED, 0);
    h.write_reg(bank + qemu::DMA_SUBMITTED, 0);
}

pub(super) fn doorbell(h: &MmioHal, bank: u32, count: u32) {
    let s = h.read_reg(bank + qemu::DMA_SUBMITTED);
    h.write_reg(bank + qemu::DMA_SUBMITTED, s.wrapping_add(count));
}

/// One unit of engine time: process at most one pending descriptor.
/// Never inlined: `cargo xtask perf` leaves this module's functions (the
/// engine, hardware on the Q7) out of the instruction counts by address.
#[inline(never)]
pub(super) fn step(h: &MmioHal, cpu: u32, bank: u32) {
    let submitted = h.read_reg(bank + qemu::DMA_SUBMITTED);
    let completed = h.read_reg(bank + dma_regs::COMPLETED);
    let ring = h.read_reg(bank + dma_regs::RING_BASE);
    let len = h.read_reg(bank + dma_regs::RING_LEN);
    if submitted == completed || len == 0 {
        return;
    }
    let slot = completed % len;
    let at = h.nx_ptr(ring + slot * core::mem::size_of::<DmaDescriptor>() as u32).cast::<DmaDescriptor>();
    // SAFETY: the runtime armed the ring in this core's data RAM (the
    // staging window's reserve), 8-byte aligned; the core wrote the
    // descriptor and fenced before ringing. Volatile, no reference.
    let d = unsafe { at.read_volatile() };
    let st = execute(h, cpu, &d);
    // SAFETY: as above; the engine writes only the status word.
    unsafe { core::ptr::addr_of_mut!((*at).status).write_volatile(st) };
    h.memw();
    h.write_reg(bank + dma_regs::COMPLETED, completed.wrapping_add(1));
}

fn execute(h: &MmioHal, cpu: u32, d: &DmaDescriptor) -> u32 {
    if !DescriptorFlags::from_bits_retain(d.flags).contains(DescriptorFlags::VALID) || d.reserved != 0 {
        return status::FAULT;
    }
    let len = d.len as u64;
    let (Some(src), Some(dst)) = (resolve(h, cpu, d.src, len), resolve(h, cpu, d.dst, len)) else {
        return status::FAULT;
    };
    // SAFETY: both ranges were resolved to RAM of `len` bytes that this
    // core may touch (its staging window, or hbm_scratch).
    unsafe { engine_copy(src as *const u8, dst, d.len as usize) };
    status::DONE
}

/// The engine's copy, in this module (not `memmove`, which the runtime
/// also uses) so that its instructions can be told apart; overlap allowed.
///
/// # Safety
/// `src` readable and `dst` writable for `n` bytes.
#[inline(never)]
unsafe fn engine_copy(src: *const u8, dst: *mut u8, n: usize) {
    let forward = (dst as usize) <= (src as usize) || (dst as usize) >= (src as usize) + n;
    let words = (src as usize | dst as usize | n).is_multiple_of(4);
    let (step, count) = if words { (4, n / 4) } else { (1, n) };
    for k in 0..count {
        let i = if forward { k } else { count - 1 - k } * step;
        // SAFETY: i + step <= n; volatile so no libcall replaces the loop.
        unsafe {
            if words {
                dst.add(i).cast::<u32>().write_volatile(src.add(i).cast::<u32>().read_volatile());
            } else {
                dst.add(i).write_volatile(src.add(i).read_volatile());
            }
        }
    }
}

/// The pointer at which the engine reaches SoC `addr..addr+len`, if the
/// whole range is backed on QEMU.
fn resolve(h: &MmioHal, cpu: u32, addr: u64, len: u64) -> Option<*mut u8> {
    let p = h.platform();
    let inside = |base: u64, size: u64| addr.checked_sub(base).filter(|off| off.checked_add(len).is_some_and(|e| e <= size));
    if let Some(off) = inside(p.aperture_soc(cpu), DMA_WINDOW_SIZE as u64) {
        return Some(h.nx_ptr(p.dma_window_nx + off as u32));
    }
    if let Some(off) = inside(p.scratch_soc_base, PINNED_WINDOW_SIZE) {
        return Some(h.nx_ptr(p.scratch_window_nx + off as u32));
    }
    None
}
