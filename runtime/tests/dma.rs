//! The DMA driver against the mock engine: both directions, chunking,
//! ring and counter wrap-around, bytes moving at processing time,
//! faults, the MEM_WINDOW0 check, and local buffers outside the window.
// The mock maps memory with mmap/memfd, which Miri cannot run; the
// Miri-friendly tests of the same logic are in pure.rs.
#![cfg(not(miri))]

mod common;

use common::*;
use neuron_hal::dma::{DmaDirection, MAX_DESCRIPTOR_BYTES, RING_LEN};
use neuron_hal::platform::{DATARAM_RUNTIME_RESERVED, Q7};
use neuron_hal::Hal;
use neuron_runtime::Error;

#[test]
fn read_and_write_through_a_heap_buffer() {
    let (soc, mut s) = armed(3);
    let data = pattern(5000, 1);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &data) }.unwrap();
    let buf = s.dataram().allocate(5000, 0).unwrap().as_ptr();
    // SAFETY: buf is a live 5000-byte data-RAM block.
    unsafe { s.dma_read(buf, HBM, 5000).unwrap() };
    // SAFETY: as above.
    let got = unsafe { std::slice::from_raw_parts(buf, 5000) }.to_vec();
    assert_eq!(got, data);
    // SAFETY: as above.
    unsafe { s.dma_write(HBM + 0x10000, buf, 5000).unwrap() };
    assert_eq!(soc_read(&soc, HBM + 0x10000, 5000), data);
    let c = s.hal().counters();
    assert_eq!(c.dma_descriptors(DmaDirection::M2S), 1);
    assert_eq!(c.dma_descriptors(DmaDirection::S2M), 1);
    assert_eq!(c.dma_bytes(DmaDirection::S2M), 5000);
    assert_eq!(s.dma().outstanding(DmaDirection::M2S), 0);
}

#[test]
fn rings_live_in_the_reserve_and_apertures_are_per_core() {
    let (_soc, mut s) = armed(5);
    let p = Q7;
    let heap = s.dataram().allocate(64, 0).unwrap().as_ptr();
    let soc_addr = s.dma().local_soc(heap, 64).unwrap();
    let off = heap as usize - s.hal().nx_ptr(p.dma_window_nx) as usize;
    assert!(off >= DATARAM_RUNTIME_RESERVED as usize);
    assert_eq!(soc_addr, p.aperture_soc(5) + off as u64);
    // The reserve itself (the rings) is not a DMA target.
    assert_eq!(s.dma().local_soc(s.hal().nx_ptr(p.dma_window_nx), 32), None);
}

#[test]
fn chunking_and_ring_wrap_within_one_transfer() {
    let (soc, mut s) = armed(0);
    // 40 KiB in 1000-byte descriptors: 41 descriptors through a 16-slot ring.
    s.set_dma_max_descriptor_bytes(1000);
    let n = 40 << 10;
    let data = pattern(n, 2);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &data) }.unwrap();
    let buf = s.dataram().allocate(n, 0).unwrap().as_ptr();
    // SAFETY: buf is a live n-byte data-RAM block.
    unsafe { s.dma_read(buf, HBM, n as u32).unwrap() };
    // SAFETY: as above.
    assert_eq!(unsafe { std::slice::from_raw_parts(buf, n) }, &data[..]);
    let descs = n.div_ceil(1000) as u64;
    assert!(descs > RING_LEN as u64);
    assert_eq!(s.hal().counters().dma_descriptors(DmaDirection::M2S), descs);
    // SAFETY: as above.
    unsafe { s.dma_write(HBM + (1 << 20), buf, n as u32).unwrap() };
    assert_eq!(soc_read(&soc, HBM + (1 << 20), n), data);
    assert_eq!(s.dma().max_descriptor_bytes(), 1000);
    s.set_dma_max_descriptor_bytes(u32::MAX);
    assert_eq!(s.dma().max_descriptor_bytes(), MAX_DESCRIPTOR_BYTES);
}

#[test]
fn completion_counter_wraps_around_u32() {
    // The engine's counter starts 5 short of the wrap, and 5 is not a
    // multiple of the ring length: slots must still line up.
    let (soc, mut s) = lens_state(u32::MAX - 4, None);
    s.init_dma_queue().unwrap();
    s.set_dma_max_descriptor_bytes(256);
    let buf = s.dataram().allocate(4096, 0).unwrap().as_ptr();
    for round in 0..6u64 {
        let data = pattern(4096, round as u8);
        let at = HBM + round * 8192;
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(at, &data) }.unwrap();
        // SAFETY: buf is a live 4096-byte data-RAM block.
        unsafe { s.dma_read(buf, at, 4096).unwrap() };
        // SAFETY: as above.
        assert_eq!(unsafe { std::slice::from_raw_parts(buf, 4096) }, &data[..], "round {round}");
        // SAFETY: as above.
        unsafe { s.dma_write(at + 4096, buf, 4096).unwrap() };
        assert_eq!(soc_read(&soc, at + 4096, 4096), data);
    }
    assert_eq!(s.hal().inner.counters().dma_descriptors(DmaDirection::M2S), 6 * 16);
}

#[test]
fn bytes_move_when_processed_not_at_the_doorbell() {
    let (soc, mut s) = armed(1);
    let new = pattern(3000, 9);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &new) }.unwrap();
    let buf = s.dataram().allocate(3000, 0).unwrap().as_ptr();
    // SAFETY: buf is a live 3000-byte block.
    unsafe { buf.write_bytes(0xEE, 3000) };
    s.set_dma_max_descriptor_bytes(1024);
    let dst = s.dma().local_soc(buf, 3000).unwrap();
    let fences = s.hal().counters().fences();
    // SAFETY: `dst` is the test's own data-RAM block, referenced by nothing
    // until the drain below.
    unsafe { s.dma_submit(DmaDirection::M2S, dst, HBM, 3000) }.unwrap();
    assert_eq!(s.hal().counters().fences() - fences, 2, "two memw before the doorbell");
    assert_eq!(s.hal().dma_pending(DmaDirection::M2S), 3);
    // SAFETY: as above.
    let before = unsafe { std::slice::from_raw_parts(buf, 3000) }.to_vec();
    assert!(before.iter().all(|&b| b == 0xEE), "rung but not polled: old bytes");
    s.dma_drain().unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { std::slice::from_raw_parts(buf, 3000) }, &new[..]);
    assert_eq!(s.hal().dma_pending(DmaDirection::M2S), 0);
}

#[test]
fn a_faulting_descriptor_is_reported() {
    let (_soc, mut s) = armed(0);
    let buf = s.dataram().allocate(64, 0).unwrap().as_ptr();
    // Neither HBM nor SBUF.
    // SAFETY: buf is a live 64-byte block.
    assert_eq!(unsafe { s.dma_read(buf, 0x10, 64) }, Err(Error::DmaFault));
    assert_eq!(s.hal().counters().dma_faults(), 1);
    // The fault is reported once; the queue keeps working.
    s.dma_drain().unwrap();
    // SAFETY: as above.
    unsafe { s.dma_read(buf, HBM, 64).unwrap() };
}

#[test]
fn window0_check_fails_the_init() {
    let (_soc, mut s) = lens_state(0, Some(0xdead));
    assert_eq!(s.init_dma_queue(), Err(Error::DmaWindowCheck));
    assert!(!s.dma().is_armed());
    let mut b = [0u8; 4];
    // SAFETY: b is a 4-byte local buffer.
    assert_eq!(unsafe { s.dma_read(b.as_mut_ptr(), HBM, 4) }, Err(Error::DmaNotArmed));
}

#[test]
fn unarmed_queue_refuses() {
    let (_soc, mut s) = state(0);
    let mut b = [0u8; 4];
    // SAFETY: b is a 4-byte local buffer.
    assert_eq!(unsafe { s.dma_read(b.as_mut_ptr(), HBM, 4) }, Err(Error::DmaNotArmed));
    // SAFETY: refused before any descriptor is written (the queue is not armed).
    assert_eq!(unsafe { s.dma_submit(DmaDirection::S2M, HBM, HBM, 4) }, Err(Error::DmaNotArmed));
    assert_eq!(s.dma_drain(), Ok(()), "nothing to drain");
}

#[test]
fn local_buffer_outside_the_window_bounces() {
    let (soc, mut s) = armed(2);
    // Bigger than one bounce buffer, in host memory (not DMA-reachable).
    let n = 50_000;
    let data = pattern(n, 4);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &data) }.unwrap();
    let mut local = vec![0u8; n];
    assert_eq!(s.dma().local_soc(local.as_ptr(), n as u64), None);
    // SAFETY: local is a live n-byte Vec.
    unsafe { s.dma_read(local.as_mut_ptr(), HBM, n as u32).unwrap() };
    assert_eq!(local, data);
    // SAFETY: as above.
    unsafe { s.dma_write(HBM + (1 << 20), local.as_ptr(), n as u32).unwrap() };
    assert_eq!(soc_read(&soc, HBM + (1 << 20), n), data);
    assert_eq!(s.dataram().stats().in_use, 0, "bounce buffers are given back");
    // Data RAM outside the staging window is not reachable either.
    let beyond = s.hal().nx_ptr(Q7.dma_window_nx + (64 << 10));
    assert_eq!(s.dma().local_soc(beyond, 16), None);
}

#[test]
fn bounce_works_in_a_nearly_full_heap_and_fails_only_when_full() {
    let (soc, mut s) = armed(0);
    let data = pattern(4096, 5);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &data) }.unwrap();
    // Fill the heap leaving a little room.
    let free = s.dataram().free_bytes();
    let hog = s.dataram().allocate(free - 256, 0).unwrap();
    let mut local = vec![0u8; 4096];
    // SAFETY: local is a live 4096-byte Vec.
    unsafe { s.dma_read(local.as_mut_ptr(), HBM, 4096).unwrap() };
    assert_eq!(local, data);
    // Now take everything: no bounce buffer is possible.
    let mut rest = vec![];
    while let Ok(p) = s.dataram().allocate(64, 0) {
        rest.push(p);
    }
    // SAFETY: as above.
    assert_eq!(unsafe { s.dma_read(local.as_mut_ptr(), HBM, 4096) }, Err(Error::DmaUnreachable));
    // SAFETY: `hog` is used no further.
    unsafe { s.dataram().free(hog.as_ptr()) }.unwrap();
}

#[test]
fn sbuf_is_a_dma_source() {
    let (soc, mut s) = armed(0);
    let data = pattern(700, 6);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(Q7.sbuf_soc_base + 0x4000, &data) }.unwrap();
    let mut local = vec![0u8; 700];
    // SAFETY: local is a live Vec.
    unsafe { s.dma_read(local.as_mut_ptr(), Q7.sbuf_soc_base + 0x4000, 700).unwrap() };
    assert_eq!(local, data);
}
