//! The SDMA engine of one core, implementing the descriptor format and the
//! register table of `neuron_hal::dma` / `platform::dma_regs` exactly.
//!
//! Bytes move when a descriptor is processed, not when the doorbell rings:
//! each read of the completion counter lets the engine finish one pending
//! descriptor, so a kernel that looks at a destination before completion
//! sees the old bytes, as on the device.

use crate::counters::CoreCounters;
use crate::nx_space::NxSpace;
use crate::soc::MockSoc;
use neuron_hal::dma::{status, DescriptorFlags, DmaDescriptor, DmaDirection};
use neuron_hal::platform::DMA_WINDOW_SIZE;

#[derive(Debug, Default, Clone, Copy)]
struct Queue {
    ring_nx: u32,
    len: u32,
    submitted: u32,
    completed: u32,
}

/// The two queues (M2S, S2M) of one core's engine.
#[derive(Debug, Default)]
pub(crate) struct DmaEngine {
    queues: [Queue; 2],
}

impl DmaEngine {
    pub(crate) fn arm(&mut self, dir: DmaDirection, ring_nx: u32, len: u32) {
        self.queues[dir.index()] = Queue { ring_nx, len, submitted: 0, completed: 0 };
    }

    pub(crate) fn doorbell(&mut self, dir: DmaDirection, count: u32) {
        let q = &mut self.queues[dir.index()];
        q.submitted = q.submitted.wrapping_add(count);
    }

    /// Descriptors submitted but not yet processed.
    pub(crate) fn pending(&self, dir: DmaDirection) -> u32 {
        let q = &self.queues[dir.index()];
        q.submitted.wrapping_sub(q.completed)
    }

    /// One unit of engine time on `dir`: process at most one descriptor,
    /// then report the completion counter.
    pub(crate) fn poll(&mut self, dir: DmaDirection, cpu: u32, nx: &NxSpace, soc: &MockSoc, counters: &CoreCounters) -> u32 {
        let q = &mut self.queues[dir.index()];
        if q.submitted != q.completed && q.len != 0 {
            let slot = q.completed % q.len;
            let at = nx.ptr(q.ring_nx + slot * core::mem::size_of::<DmaDescriptor>() as u32).cast::<DmaDescriptor>();
            // SAFETY: the ring lies in this core's mapped data RAM (the
            // runtime armed it there) and descriptors are 8-byte aligned;
            // volatile because the core writes it as MMIO-visible memory.
            let desc = unsafe { at.read_volatile() };
            let st = execute(&desc, cpu, nx, soc);
            if st == status::DONE {
                CoreCounters::bump(&counters.dma_descriptors[dir.index()], 1);
                CoreCounters::bump(&counters.dma_bytes[dir.index()], desc.len as u64);
            } else {
                CoreCounters::bump(&counters.dma_faults, 1);
            }
            // SAFETY: as above; the engine writes only the status word.
            unsafe { core::ptr::addr_of_mut!((*at).status).write_volatile(st) };
            q.completed = q.completed.wrapping_add(1);
        }
        q.completed
    }
}

/// Moves the bytes of one descriptor; returns its completion status.
fn execute(d: &DmaDescriptor, cpu: u32, nx: &NxSpace, soc: &MockSoc) -> u32 {
    if !DescriptorFlags::from_bits_retain(d.flags).contains(DescriptorFlags::VALID) || d.reserved != 0 {
        return status::FAULT;
    }
    let len = d.len as u64;
    let (Some(src), Some(dst)) = (resolve(d.src, len, cpu, nx, soc), resolve(d.dst, len, cpu, nx, soc)) else {
        return status::FAULT;
    };
    // Zeros onto SoC memory never written (a hole of the sparse memfd,
    // which reads as zeros) change nothing: not copied, so a large zero
    // fill (`torch::zeros`, chunk by chunk) does not fault every page in.
    // SAFETY: src was resolved to mapped host memory of `len` bytes.
    if unsafe { core::slice::from_raw_parts(src, len as usize) }.iter().all(|&b| b == 0) && soc.is_hole(d.dst, len) {
        return status::DONE;
    }
    // SAFETY: both ranges were resolved to mapped host memory of `len`
    // bytes; `copy` tolerates overlap.
    unsafe { core::ptr::copy(src, dst, d.len as usize) };
    status::DONE
}

/// What the engine reaches: HBM, SBUF and this core's data-RAM aperture.
fn resolve(addr: u64, len: u64, cpu: u32, nx: &NxSpace, soc: &MockSoc) -> Option<*mut u8> {
    let p = soc.platform();
    let ap = p.aperture_soc(cpu);
    if let Some(off) = addr.checked_sub(ap) {
        if off.checked_add(len).is_some_and(|e| e <= DMA_WINDOW_SIZE as u64) {
            return Some(nx.ptr(p.dma_window_nx + off as u32));
        }
    }
    soc.soc_ptr(addr, len)
}
