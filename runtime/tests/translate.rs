//! Translation against the mock SoC: hits, misses, eviction order, pinned
//! windows, thrashing, refused addresses, and 8 cores in 8 threads.
// The mock maps memory with mmap/memfd, which Miri cannot run; the
// Miri-friendly tests of the same logic are in pure.rs.
#![cfg(not(miri))]

use neuron_hal::platform::{DYNAMIC_WINDOW_SIZE, Q7};
use neuron_hal::Hal;
use neuron_hal_mock::{MockCore, MockSoc};
use neuron_runtime::translate::{SBUF_RECORD, SCRATCH_RECORD};
use neuron_runtime::{CoreState, Error};

const REGION: u64 = DYNAMIC_WINDOW_SIZE;
/// A region well past hbm_scratch.
fn region(n: u64) -> u64 {
    Q7.hbm_soc_base + (1 << 30) + n * REGION
}

fn core(cpu: u32) -> CoreState<MockCore> {
    let soc = MockSoc::new().unwrap();
    let mut s = CoreState::new(soc.core(cpu).unwrap());
    s.init_prologue();
    s
}

fn read_u32(p: *mut u8) -> u32 {
    // SAFETY: p came from a translate into mapped mock memory.
    unsafe { p.cast::<u32>().read_volatile() }
}

#[test]
fn pinned_windows_hit_without_programming() {
    let mut s = core(0);
    let sbuf = Q7.sbuf_soc_base + 0x1230;
    let p = s.translate(sbuf).unwrap();
    assert_eq!(p, s.hal().nx_ptr(Q7.sbuf_window_nx + 0x1230));
    let q = s.translate(Q7.scratch_soc_base + 0x40).unwrap();
    assert_eq!(q, s.hal().nx_ptr(Q7.scratch_window_nx + 0x40));
    assert_eq!(s.hal().counters().total_window_programs(), 0);
    assert_eq!(s.translator().record_of(sbuf), Some(SBUF_RECORD));
    assert_eq!(s.translator().record_of(Q7.scratch_soc_base), Some(SCRATCH_RECORD));
}

#[test]
fn miss_programs_round_robin_fenced_and_hit_is_free() {
    let mut s = core(0);
    let fences0 = s.hal().counters().fences();
    for n in 0..3 {
        s.translate(region(n) + 8).unwrap();
        assert_eq!(s.translator().record_of(region(n)), Some(n as usize));
        assert_eq!(s.hal().read_window_register(Q7.dynamic_windows[n as usize].register), region(n));
    }
    assert_eq!(s.hal().counters().fences() - fences0, 6, "memw before and after each write");
    // Hits: no register writes, no fences.
    let programs = s.hal().counters().total_window_programs();
    let fences = s.hal().counters().fences();
    for n in 0..3 {
        s.translate(region(n) + 100).unwrap();
    }
    assert_eq!(s.hal().counters().total_window_programs(), programs);
    assert_eq!(s.hal().counters().fences(), fences);
    // The fourth region evicts record 0, the fifth record 1; pinned untouched.
    s.translate(region(3)).unwrap();
    assert_eq!(s.translator().record_of(region(3)), Some(0));
    assert_eq!(s.translator().record_of(region(0)), None);
    s.translate(region(4)).unwrap();
    assert_eq!(s.translator().record_of(region(4)), Some(1));
    assert_eq!(s.translator().record_of(Q7.sbuf_soc_base), Some(SBUF_RECORD));
    assert_eq!(s.hal().counters().window_programs(0), 2);
    assert_eq!(s.hal().counters().window_programs(1), 2);
    assert_eq!(s.hal().counters().window_programs(2), 1);
}

#[test]
fn translated_pointers_reach_hbm_and_reprogramming_changes_what_they_see() {
    let mut s = core(0);
    let soc = s.hal().soc().clone();
    for n in 0..4 {
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(region(n) + 64, &(0xA000 + n as u32).to_le_bytes()) }.unwrap();
    }
    let p = s.translate(region(0) + 64).unwrap();
    assert_eq!(read_u32(p), 0xA000);
    // Writing through the window lands in HBM.
    // SAFETY: p points into the mapped window.
    unsafe { p.cast::<u32>().write_volatile(0xBEEF) };
    let mut b = [0u8; 4];
    soc.read(region(0) + 64, &mut b).unwrap();
    assert_eq!(u32::from_le_bytes(b), 0xBEEF);
    // Three more regions: the third evicts record 0, and the stale pointer
    // now shows region 3, as on the device.
    for n in 1..4 {
        s.translate(region(n)).unwrap();
    }
    assert_eq!(read_u32(p), 0xA003);
}

#[test]
fn four_regions_round_robin_thrash() {
    let mut s = core(0);
    for n in 0..3 {
        s.translate(region(n)).unwrap();
    }
    let before = s.hal().counters().total_window_programs();
    for round in 0..10 {
        for n in [3, 0, 1, 2] {
            s.translate(region(n) + round * 4).unwrap();
        }
    }
    assert_eq!(s.hal().counters().total_window_programs() - before, 40, "every access misses");
    // Three regions in a loop never miss.
    let before = s.hal().counters().total_window_programs();
    for _ in 0..10 {
        for n in [0, 1, 2] {
            s.translate(region(n)).unwrap();
        }
    }
    assert!(s.hal().counters().total_window_programs() - before <= 3);
}

#[test]
fn unmappable_addresses_are_errors() {
    let mut s = core(0);
    let end = Q7.hbm_soc_base + Q7.hbm_size;
    for bad in [0, 0x1000, Q7.hbm_soc_base - 1, end, end + REGION, 1 << 57, u64::MAX, !(REGION - 1)] {
        assert_eq!(s.translate(bad), Err(Error::AddressUnmapped), "{bad:#x}");
    }
    assert_eq!(s.hal().counters().total_window_programs(), 0);
    assert!(s.translate(end - 1).is_ok());
}

/// Found by the translate fuzz target: the pinned SBUF window is 64 MiB,
/// SBUF only 24 MiB; an address past SBUF's end used to hit the window
/// and yield a pointer to no memory.
#[test]
fn sbuf_window_past_the_end_of_sbuf_is_refused() {
    let mut s = core(0);
    let end = Q7.sbuf_soc_base + Q7.sbuf_size;
    assert!(s.translate(end - 1).is_ok());
    for bad in [end, end + 0x1234, 0x20_01ea_34c4, Q7.sbuf_soc_base + (64 << 20) - 1] {
        assert_eq!(s.translate(bad), Err(Error::AddressUnmapped), "{bad:#x}");
    }
    assert_eq!(s.hal().counters().total_window_programs(), 0);
}

#[test]
fn translate_before_init_is_refused() {
    let soc = MockSoc::new().unwrap();
    let mut s = CoreState::new(soc.core(0).unwrap());
    assert_eq!(s.translate(region(0)), Err(Error::TranslateNotReady));
    s.init_prologue();
    let ctx_before = *s.translator().ctx();
    s.init_prologue();
    assert_eq!(*s.translator().ctx(), ctx_before, "the prologue is idempotent");
}

#[test]
fn eight_cores_in_eight_threads_do_not_cross_talk() {
    let soc = MockSoc::new().unwrap();
    let handles: Vec<_> = (0..8u32)
        .map(|cpu| {
            let core = soc.core(cpu).unwrap();
            std::thread::spawn(move || {
                let mut s = CoreState::new(core);
                s.init_prologue();
                assert_eq!(s.cpu_id(), cpu);
                // Each core maps its own region into window 0 and writes it.
                let mine = region(10 + cpu as u64);
                for i in 0..1000u64 {
                    let p = s.translate(mine + i * 4).unwrap();
                    // SAFETY: p points into this core's mapped window.
                    unsafe { p.cast::<u32>().write_volatile(cpu * 1_000_000 + i as u32) };
                }
                // Private data RAM: the same NX address on every core.
                let d = s.hal().nx_ptr(Q7.dataram_nx + 0x8000);
                // SAFETY: data RAM is mapped for this core.
                unsafe { d.cast::<u32>().write_volatile(0xC0DE_0000 + cpu) };
                std::thread::yield_now();
                // SAFETY: as above.
                assert_eq!(unsafe { d.cast::<u32>().read_volatile() }, 0xC0DE_0000 + cpu);
                for i in 0..1000u64 {
                    let p = s.translate(mine + i * 4).unwrap();
                    assert_eq!(read_u32(p), cpu * 1_000_000 + i as u32);
                }
                // Heaps are per core: HBM blocks come from this core's area.
                let a = s.hbm().allocate(4096, 0).unwrap();
                let area = Q7.scratch_area_soc(cpu);
                assert!(a >= area && a < area + neuron_hal::platform::SCRATCH_AREA_SIZE);
                s.hal().counters().total_window_programs()
            })
        })
        .collect();
    for h in handles {
        assert_eq!(h.join().unwrap(), 1, "one window program per core");
    }
    for cpu in 0..8u32 {
        let mut b = [0u8; 4];
        soc.read(region(10 + cpu as u64) + 4 * 999, &mut b).unwrap();
        assert_eq!(u32::from_le_bytes(b), cpu * 1_000_000 + 999);
    }
}
