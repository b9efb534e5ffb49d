//! The simulator's C API as a C driver uses it: a run's code, the report
//! text with the kernel's printf output, and a guard-region overwrite
//! reported as its own code.

use neuroncustomop::ffi::customop::*;
use neuroncustomop::ffi::launch::{switch_stack_or_call_wrapper, OpFn};
use neuroncustomop::ffi::printf::neuron_print;
use neuroncustomop::ffi::translate::{neuron_translate, neuron_translate_ctx};
use neuroncustomop::host::sim_ffi::*;
use neuroncustomop::runtime::marshal::dtype::Dtype;
use neuroncustomop::runtime::Error;
use std::ffi::{c_char, CStr};

/// Prints, then writes every output element (and `out[numel]`, one
/// element past the end, when asked).
fn body(overrun: bool) {
    customop_setup(true);
    let _x = customop_next_tensor();
    if customop_status() == 0 {
        let msg = b"hello from the kernel\n";
        // SAFETY: msg is a readable buffer of its length.
        unsafe { neuron_print(msg.as_ptr().cast(), msg.len()) };
        let out = get_dst_tensor();
        let end = if overrun { out.numel + 1 } else { out.numel };
        for i in 0..end {
            let p = neuron_translate(neuron_translate_ctx(), out.storage.addr + i as u64 * 4);
            // SAFETY: p is a translated pointer into mapped mock HBM (the
            // element past the end lies in the simulator's guard region).
            unsafe { p.cast::<f32>().write_volatile(1.0) };
        }
    }
    customop_cleanup();
}

unsafe extern "C" fn good_wrapper() {
    body(false)
}
unsafe extern "C" fn bad_wrapper() {
    body(true)
}
unsafe extern "C" fn good() -> i32 {
    // SAFETY: a generated-style wrapper.
    unsafe { switch_stack_or_call_wrapper(Some(good_wrapper), 0) }
}
unsafe extern "C" fn bad() -> i32 {
    // SAFETY: as above.
    unsafe { switch_stack_or_call_wrapper(Some(bad_wrapper), 0) }
}

#[unsafe(no_mangle)]
extern "C" fn get_func_cnt() -> i32 {
    2
}
#[unsafe(no_mangle)]
extern "C" fn get_func_name(i: i32) -> *const c_char {
    [c"good".as_ptr(), c"overrun".as_ptr()][i as usize]
}
#[unsafe(no_mangle)]
extern "C" fn get_func_ptr(i: i32) -> Option<OpFn> {
    Some([good as OpFn, bad as OpFn][i as usize])
}

fn report(s: *mut NeuronSim) -> String {
    // SAFETY: s is live; the report is a C string owned by it.
    unsafe { CStr::from_ptr(neuron_sim_report(s)) }.to_string_lossy().into_owned()
}

#[test]
fn run_code_report_text_and_guard_overwrite() {
    let s = neuron_sim_new();
    assert!(!s.is_null());
    let shape = [100u64];
    let data = vec![0u8; 400];
    // SAFETY: s is live; shape and data are readable for what is passed.
    unsafe {
        assert_eq!(neuron_sim_register(s), 2);
        assert_eq!(report(s), "", "no report before the first run");
        assert_eq!(neuron_sim_arg_tensor(s, Dtype::Fp32.code(), shape.as_ptr(), 1, data.as_ptr().cast(), 400), 0);
        assert_eq!(neuron_sim_set_output(s, Dtype::Fp32.code(), shape.as_ptr(), 1), 0);
        assert_eq!(neuron_sim_run(s, c"good".as_ptr(), 1), 0);
    }
    let text = report(s);
    assert!(text.starts_with("run: 1 core(s), ok"), "{text}");
    assert!(text.contains("hello from the kernel"), "{text}");
    assert!(text.contains("translate: hits"), "{text}");
    // SAFETY: as above.
    let code = unsafe { neuron_sim_run(s, c"overrun".as_ptr(), 1) };
    assert_eq!(code, Error::GuardOverwritten.code());
    let text = report(s);
    assert!(text.contains("FAILED") && text.contains("guard:"), "{text}");
    // SAFETY: as above.
    unsafe {
        assert_eq!(neuron_sim_run(s, c"no-such-op".as_ptr(), 1), Error::UnknownOp.code());
        assert!(report(s).starts_with("run refused"));
        neuron_sim_free(s);
    }
}
