//! The foundation's C entry points, called as a kernel would, on simulated
//! cores bound to host threads.

use neuron_hal_mock::MockSoc;
use neuroncustomop::ffi::{cpu::*, error::*, heap::*, init::*, translate::*, version::*};
use neuroncustomop::hal::platform::{DYNAMIC_WINDOW_SIZE, Q7};
use neuroncustomop::host::SimCore;
use neuroncustomop::runtime::Error;
use std::ffi::CStr;

fn msg(code: i32) -> String {
    // SAFETY: neuron_error_message returns a static C string.
    unsafe { CStr::from_ptr(neuron_error_message(code)) }.to_str().unwrap().to_owned()
}

#[test]
fn calls_without_a_core_fail_cleanly() {
    assert!(neuron_translate_ctx().is_null());
    assert_eq!(get_cpu_id(), -1);
    assert_eq!(neuron_last_error(), Error::NoCore.code());
    assert!(msg(neuron_last_error()).contains("no core"));
}

#[test]
fn translate_through_the_c_surface_counts_hits_and_misses() {
    let soc = MockSoc::new().unwrap();
    let mut core = SimCore::new(soc.core(2).unwrap());
    let a = Q7.hbm_soc_base + (3 << 30);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(a + 12, &77u32.to_le_bytes()) }.unwrap();
    core.enter(|| {
        neuron_runtime_init();
        assert_eq!(get_cpu_id(), 2);
        let ctx = neuron_translate_ctx();
        assert!(!ctx.is_null());
        let p = neuron_translate(ctx, a + 12);
        // SAFETY: p is a translated pointer into mapped mock HBM.
        assert_eq!(unsafe { p.cast::<u32>().read_volatile() }, 77);
        for i in 0..9 {
            assert!(!neuron_translate(ctx, a + 16 * i).is_null());
        }
        assert!(neuron_translate(ctx, 0x10).is_null());
        assert_eq!(neuron_last_error(), Error::AddressUnmapped.code());
        let mut other = 0u8;
        assert!(neuron_translate((&mut other as *mut u8).cast(), a).is_null(), "foreign ctx refused");
    });
    let s = core.state().translator().stats();
    assert_eq!(s.misses, [1, 0, 0]);
    assert_eq!(s.hits[0], 9);
    assert_eq!(s.refused, 1);
    let _ = DYNAMIC_WINDOW_SIZE;
}

/// `neuron_translate_pinned`: a range wholly in a pinned window gives
/// the translate's pointer; one reaching past the window or SBUF's end,
/// HBM behind the dynamic windows, an empty range or a foreign context
/// give null, and none of them records an error or touches a window.
#[test]
fn translate_pinned_answers_for_whole_ranges_without_errors() {
    use neuroncustomop::hal::platform::PINNED_WINDOW_SIZE;
    let soc = MockSoc::new().unwrap();
    let mut core = SimCore::new(soc.core(1).unwrap());
    core.enter(|| {
        neuron_runtime_init();
        let ctx = neuron_translate_ctx();
        let s = Q7.scratch_soc_base;
        assert_eq!(neuron_translate_pinned(ctx, s + 64, 4096), neuron_translate(ctx, s + 64));
        assert!(!neuron_translate_pinned(ctx, s + 64, 4096).is_null());
        let sbuf_end = Q7.sbuf_soc_base + Q7.sbuf_size;
        assert_eq!(neuron_translate_pinned(ctx, sbuf_end - 256, 256), neuron_translate(ctx, sbuf_end - 256));
        neuron_clear_error();
        let window_end = (s & !(PINNED_WINDOW_SIZE - 1)) + PINNED_WINDOW_SIZE;
        assert!(neuron_translate_pinned(ctx, window_end - 64, 128).is_null(), "past the pinned window");
        assert!(neuron_translate_pinned(ctx, sbuf_end - 64, 128).is_null(), "past SBUF's end");
        assert!(neuron_translate_pinned(ctx, Q7.hbm_soc_base + (3 << 30), 64).is_null(), "a dynamic window's region");
        assert!(neuron_translate_pinned(ctx, s + 64, 0).is_null(), "empty");
        assert!(neuron_translate_pinned(ctx, u64::MAX - 8, 64).is_null(), "wraps");
        let mut other = 0u8;
        assert!(neuron_translate_pinned((&mut other as *mut u8).cast(), s + 64, 64).is_null(), "foreign ctx");
        assert_eq!(neuron_last_error(), 0, "no answer is an error");
    });
    assert_eq!(core.state().translator().stats().misses, [0, 0, 0], "no window programmed");
}

#[test]
fn heaps_through_the_c_surface_report_misuse() {
    let soc = MockSoc::new().unwrap();
    let mut core = SimCore::new(soc.core(0).unwrap());
    core.enter(|| {
        neuron_runtime_init();
        let mut a = 0u64;
        // SAFETY: `a` is a valid out pointer.
        assert_eq!(unsafe { neuron_hbm_allocate(1000, &mut a, 0) }, 0);
        assert_eq!(a % 64, 0);
        // SAFETY: `a` is used no further (the second free is refused).
        unsafe {
            assert_eq!(neuron_hbm_deallocate(a), 0);
            assert_eq!(neuron_hbm_deallocate(a), -1);
        }
        assert_eq!(neuron_last_error(), Error::DoubleFree.code());
        // SAFETY: `a` is a valid out pointer.
        assert_eq!(unsafe { neuron_hbm_allocate(u32::MAX, &mut a, 0) }, -1);
        assert_eq!(neuron_last_error(), Error::OutOfMemory.code());
        let t = tcm_malloc(4096);
        assert!(!t.is_null());
        // SAFETY: 4096 fresh bytes of data RAM.
        unsafe { t.cast::<u8>().write_bytes(1, 4096) };
        // SAFETY: `t` is used no further (the second free is refused).
        unsafe {
            tcm_free(t);
            tcm_free(std::ptr::null_mut());
            tcm_free(t);
        }
        assert_eq!(neuron_last_error(), Error::DoubleFree.code());
        assert!(tcm_malloc(1 << 20).is_null());
        assert_eq!(neuron_last_error(), Error::OutOfMemory.code(), "recorded, as handled");
        let mut p = std::ptr::null_mut();
        // SAFETY: `p` is a valid out pointer.
        assert_eq!(unsafe { neuron_dataram_allocate(64, &mut p, 128) }, 0);
        assert_eq!(p as usize % 128, 0);
        // SAFETY: `p` is used no further.
        assert_eq!(unsafe { neuron_dataram_deallocate(p) }, 0);
        neuron_clear_error();
        assert_eq!(neuron_last_error(), 0);
    });
    assert_eq!(core.state().hbm().stats().in_use, 0);
    assert!(core.state().hbm().stats().high_water >= 1024);
}

#[test]
fn versions_and_messages() {
    // SAFETY: static C strings.
    unsafe {
        assert_eq!(CStr::from_ptr(neuron_customop_version()).to_str().unwrap(), "0.21.2.0");
        assert_eq!(CStr::from_ptr(neuron_ucode_lib_version()).to_str().unwrap(), "1.21.1.0");
    }
    assert_eq!(get_cpu_count(), 8);
    assert_eq!(msg(0), "no error");
    assert_eq!(msg(-12345), "unknown error code");
    for e in Error::ALL {
        assert_eq!(msg(e.code()), e.message());
    }
}
