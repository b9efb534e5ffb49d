//! `neuron_memcpy` per method: both directions, 16 MiB window boundaries,
//! SBUF, SoC → SoC bounces, the method guard.
// The mock maps memory with mmap/memfd, which Miri cannot run; the
// Miri-friendly tests of the same logic are in pure.rs.
#![cfg(not(miri))]

mod common;

use common::*;
use neuron_hal::platform::{DYNAMIC_WINDOW_SIZE, Q7};
use neuron_runtime::{Error, MemcpyMethod};

const METHODS: [MemcpyMethod; 3] = [MemcpyMethod::CMemcpy, MemcpyMethod::VecMemcpy, MemcpyMethod::Dma];

#[test]
fn default_is_dma_and_method_3_is_refused() {
    let (_soc, mut s) = armed(0);
    assert_eq!(s.memcpy_method(), MemcpyMethod::Dma);
    s.set_memcpy_method(1).unwrap();
    assert_eq!(s.memcpy_method(), MemcpyMethod::VecMemcpy);
    for bad in [3, 4, 17, u32::MAX] {
        assert_eq!(s.set_memcpy_method(bad), Err(Error::BadMemcpyMethod));
        assert_eq!(s.memcpy_method(), MemcpyMethod::VecMemcpy, "unchanged after {bad}");
    }
    s.set_memcpy_method(0).unwrap();
    assert_eq!(s.memcpy_method(), MemcpyMethod::CMemcpy);
    assert_eq!(MemcpyMethod::Dma as u32, 2);
}

#[test]
fn both_directions_per_method_odd_sizes_and_offsets() {
    for (k, m) in METHODS.into_iter().enumerate() {
        let (soc, mut s) = armed(0);
        s.set_memcpy_method(m as u32).unwrap();
        for (j, n) in [1usize, 7, 8, 31, 32, 33, 100, 4096, 70_001].into_iter().enumerate() {
            let src = HBM + 3 + (j as u64) * 0x20000;
            let data = pattern(n, (k * 16 + j) as u8);
            // SAFETY: no core runs while the test writes its own memory.
            unsafe { soc.write(src, &data) }.unwrap();
            let mut local = vec![0u8; n + 1];
            s.read_soc(&mut local[1..], src).unwrap();
            assert_eq!(&local[1..], &data[..], "{m:?} load {n}");
            let dst = HBM + (64 << 20) + 5 + (j as u64) * 0x20000;
            // SAFETY: test memory of the mock SoC, outside every heap.
            unsafe { s.write_soc(dst, &local[1..]) }.unwrap();
            assert_eq!(soc_read(&soc, dst, n), data, "{m:?} store {n}");
        }
    }
}

#[test]
fn window_methods_cross_16mib_boundaries_and_survive_thrashing() {
    for m in [MemcpyMethod::CMemcpy, MemcpyMethod::VecMemcpy] {
        let (soc, mut s) = armed(0);
        s.set_memcpy_method(m as u32).unwrap();
        // 1 MiB starting 1000 bytes before a region boundary, and a copy
        // spanning two whole boundaries (three regions).
        for (start, n) in [(HBM + DYNAMIC_WINDOW_SIZE - 1000, 1 << 20), (HBM + 5 * DYNAMIC_WINDOW_SIZE - 77, (DYNAMIC_WINDOW_SIZE + 300) as usize)] {
            let data = pattern(n, 3);
            // SAFETY: no core runs while the test writes its own memory.
            unsafe { soc.write(start, &data) }.unwrap();
            let mut local = vec![0u8; n];
            s.read_soc(&mut local, start).unwrap();
            assert!(local == data, "{m:?} load across boundary at {start:#x}");
            // Store across four other regions' boundaries: more regions
            // than windows, so windows get reprogrammed mid-copy.
            let dst = HBM + 9 * DYNAMIC_WINDOW_SIZE - 13;
            // SAFETY: test memory of the mock SoC, outside every heap.
            unsafe { s.write_soc(dst, &local) }.unwrap();
            assert!(soc_read(&soc, dst, n) == data, "{m:?} store across boundary");
        }
        assert!(s.hal().counters().total_window_programs() > 3);
    }
}

#[test]
fn sbuf_through_the_pinned_window() {
    for m in METHODS {
        let (soc, mut s) = armed(0);
        s.set_memcpy_method(m as u32).unwrap();
        let data = pattern(5000, 7);
        let at = Q7.sbuf_soc_base + 0x10_0001;
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(at, &data) }.unwrap();
        let mut local = vec![0u8; 5000];
        s.read_soc(&mut local, at).unwrap();
        assert_eq!(local, data, "{m:?}");
        // SAFETY: test memory of the mock SoC, outside every heap.
        unsafe { s.write_soc(at + 0x8000, &local) }.unwrap();
        assert_eq!(soc_read(&soc, at + 0x8000, 5000), data, "{m:?}");
    }
}

#[test]
fn window_methods_refuse_unmapped_ranges() {
    for m in [MemcpyMethod::CMemcpy, MemcpyMethod::VecMemcpy] {
        let (_soc, mut s) = armed(0);
        s.set_memcpy_method(m as u32).unwrap();
        let mut b = [0u8; 16];
        assert_eq!(s.read_soc(&mut b, 0x1000), Err(Error::AddressUnmapped));
        // Past the end of SBUF.
        assert_eq!(s.read_soc(&mut b, Q7.sbuf_soc_base + Q7.sbuf_size - 8), Err(Error::AddressUnmapped));
        // Past the end of HBM.
        // SAFETY: test memory of the mock SoC, outside every heap.
        assert_eq!(unsafe { s.write_soc(Q7.hbm_soc_base + Q7.hbm_size - 8, &b) }, Err(Error::AddressUnmapped));
        assert_eq!(s.read_soc(&mut b, u64::MAX - 4), Err(Error::AddressUnmapped));
    }
}

#[test]
fn soc_to_soc_bounces_through_data_ram_per_method() {
    for m in METHODS {
        let (soc, mut s) = armed(0);
        s.set_memcpy_method(m as u32).unwrap();
        let n = 100_003usize;
        let src = HBM + DYNAMIC_WINDOW_SIZE - 50_000;
        let dst = HBM + 7 * DYNAMIC_WINDOW_SIZE + 1;
        let data = pattern(n, 8);
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(src, &data) }.unwrap();
        // SAFETY: test HBM of the mock SoC, outside every heap.
        unsafe { s.memcpy_soc_to_soc(dst, src, n as u64) }.unwrap();
        assert!(soc_read(&soc, dst, n) == data, "{m:?}");
        assert_eq!(s.dataram().stats().in_use, 0);
        // HBM → SBUF too.
        // SAFETY: SBUF of the mock SoC, outside every heap.
        unsafe { s.memcpy_soc_to_soc(Q7.sbuf_soc_base + 64, src, 4000) }.unwrap();
        assert_eq!(soc_read(&soc, Q7.sbuf_soc_base + 64, 4000), data[..4000]);
    }
}

#[test]
fn explicit_method_calls_leave_the_active_one_alone() {
    let (soc, mut s) = armed(0);
    let data = pattern(300, 10);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &data) }.unwrap();
    let mut local = vec![0u8; 300];
    // SAFETY: local is a live 300-byte Vec, host memory.
    unsafe { s.memcpy_from_soc_with(MemcpyMethod::VecMemcpy, local.as_mut_ptr(), HBM, 300).unwrap() };
    assert_eq!(local, data);
    assert_eq!(s.memcpy_method(), MemcpyMethod::Dma);
    assert_eq!(s.hal().counters().dma_descriptors(neuron_hal::dma::DmaDirection::M2S), 0);
}
