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
    // The output a piece at a time: the 100 ones, from any offset; a range
    // past the end, or no buffer, refused.
    let mut piece = [0u8; 12];
    // SAFETY: s is live; piece is writable for its length.
    unsafe {
        assert_eq!(neuron_sim_read_output_at(s, 388, piece.as_mut_ptr().cast(), 12), 0);
        assert_eq!(piece, [0, 0, 0x80, 0x3f].repeat(3)[..]);
        assert_eq!(neuron_sim_read_output_at(s, 392, piece.as_mut_ptr().cast(), 12), Error::BufferTooSmall.code());
        assert_eq!(neuron_sim_read_output_at(s, u64::MAX, piece.as_mut_ptr().cast(), 12), Error::BufferTooSmall.code());
        assert_eq!(neuron_sim_read_output_at(s, 0, std::ptr::null_mut(), 4), Error::NullArgument.code());
    }
    // The timings: the run outside the kernel, then core 0's kernel.
    let (mut ns, mut n) = ([0u64; 9], 0usize);
    // SAFETY: s is live; ns writable for 9 values, n writable.
    unsafe {
        assert_eq!(neuron_sim_timings(s, ns.as_mut_ptr(), 9, &mut n), 0);
        assert_eq!(neuron_sim_timings(s, std::ptr::null_mut(), 0, &mut n), 0, "asking only how many");
        assert_eq!(neuron_sim_timings(s, ns.as_mut_ptr(), 9, std::ptr::null_mut()), Error::NullArgument.code());
    }
    assert_eq!(n, 2, "verdict and one core");
    assert!(ns[0] > 0 && ns[1] > 0, "{ns:?}");
    // SAFETY: as above.
    let code = unsafe { neuron_sim_run(s, c"overrun".as_ptr(), 1) };
    assert_eq!(code, Error::GuardOverwritten.code());
    let text = report(s);
    assert!(text.contains("FAILED") && text.contains("guard:"), "{text}");
    // SAFETY: s is live; piece writable.
    assert_eq!(unsafe { neuron_sim_read_output_at(s, 0, piece.as_mut_ptr().cast(), 4) }, Error::NoRunResult.code(), "not after a failed run");
    // SAFETY: as above.
    unsafe {
        assert_eq!(neuron_sim_run(s, c"no-such-op".as_ptr(), 1), Error::UnknownOp.code());
        assert!(report(s).starts_with("run refused"));
        assert_eq!(neuron_sim_timings(s, ns.as_mut_ptr(), 9, &mut n), 0);
        assert_eq!(n, 0, "no timings for a refused run");
        neuron_sim_free(s);
    }
}

#[test]
fn an_output_sink_holds_a_passing_runs_output_and_says_how_its_write_ended() {
    use std::os::fd::AsRawFd;
    let path = std::env::temp_dir().join(format!("sim-c-api-sink-{}", std::process::id()));
    let file = std::fs::File::create(&path).unwrap();
    let shape = [100u64];
    let data = vec![0u8; 400];
    let s = neuron_sim_new();
    assert!(!s.is_null());
    // SAFETY: s is live; shape and data readable; the descriptor is open.
    unsafe {
        assert_eq!(neuron_sim_output_sink_errno(s), -1, "no sink, no write");
        assert_eq!(neuron_sim_output_sink_errno(std::ptr::null_mut()), -1);
        assert_eq!(neuron_sim_register(s), 2);
        assert_eq!(neuron_sim_arg_tensor(s, Dtype::Fp32.code(), shape.as_ptr(), 1, data.as_ptr().cast(), 400), 0);
        assert_eq!(neuron_sim_set_output(s, Dtype::Fp32.code(), shape.as_ptr(), 1), 0);
        assert_eq!(neuron_sim_set_output_sink(s, -1, 0), Error::NullArgument.code());
        assert_eq!(neuron_sim_set_output_sink(s, file.as_raw_fd(), 8), 0);
        drop(file);
        assert_eq!(neuron_sim_run(s, c"good".as_ptr(), 1), 0, "{}", report(s));
        assert_eq!(neuron_sim_output_sink_errno(s), 0);
        neuron_sim_free(s);
    }
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(bytes[..8], [0; 8], "the bytes before the offset are the caller's");
    assert_eq!(bytes[8..], [0, 0, 0x80, 0x3f].repeat(100)[..]);
    let _ = std::fs::remove_file(&path);
}
