//! A raw invocation block from C (`neuron_sim_block`, `neuron_sim_run_block`):
//! every byte of a valid block (its header and both descriptors) set to
//! several values in turn. Each run must end in an error or the correct
//! result: never a crash, never an abort, never a pass with a wrong
//! output; and when the runtime's gates refuse the invocation (the core's
//! status is set), the output still holds its sentinel.

use neuroncustomop::custom_ops;
use neuroncustomop::host::sim_ffi::*;
use neuroncustomop::kernel::*;
use neuroncustomop::runtime::Error;
use std::ffi::CStr;

const FP32: u8 = 12;
const N: u64 = 24;
const SENTINEL: u8 = 0x5C;

/// out[i] = i / 2, whatever `t` holds (it is read, so its descriptor
/// goes through every gate; its values do not matter, so a flipped
/// storage address cannot make a "correct" result wrong).
fn halves(t: Tensor) -> Result<Tensor> {
    let _ = t.numel();
    let out = dst_tensor()?;
    let w = out.accessor::<f32, 1>()?;
    for i in 0..out.numel() as i64 {
        w.set([i], i as f32 * 0.5)?;
    }
    Ok(out)
}

custom_ops! {
    fn halves(t: Tensor);
}

fn report(s: *mut NeuronSim) -> String {
    // SAFETY: s is live; the report is a C string owned by it.
    unsafe { CStr::from_ptr(neuron_sim_report(s)) }.to_string_lossy().into_owned()
}

fn want() -> Vec<u8> {
    (0..N).flat_map(|i| (i as f32 * 0.5).to_le_bytes()).collect()
}

#[test]
fn every_byte_of_a_valid_block_flipped_is_an_error_or_the_right_result() {
    let s = neuron_sim_new();
    assert!(!s.is_null());
    let data = vec![0u8; N as usize * 4];
    let mut block = vec![0u8; 512];
    let mut len = 0usize;
    // SAFETY: s is live; every buffer is valid for what is passed.
    unsafe {
        assert_eq!(neuron_sim_register(s), 1);
        assert_eq!(neuron_sim_arg_tensor(s, FP32, [N].as_ptr(), 1, data.as_ptr().cast(), data.len()), 0);
        assert_eq!(neuron_sim_set_output(s, FP32, [N].as_ptr(), 1), 0);
        assert_eq!(neuron_sim_block(s, block.as_mut_ptr(), block.len(), &mut len), 0);
        // Too small a buffer says how large a one is needed.
        let mut small = [0u8; 8];
        let mut need = 0usize;
        assert_eq!(neuron_sim_block(s, small.as_mut_ptr(), 8, &mut need), Error::BadBlockSize.code());
        assert_eq!(need, len);
    }
    block.truncate(len);
    assert_eq!(len, 32 + 2 * 48, "header, the argument's descriptor, the output's");
    // The block as built runs and gives the right result.
    // SAFETY: as above.
    unsafe {
        assert_eq!(neuron_sim_run_block(s, c"halves".as_ptr(), 1, block.as_ptr(), len), 0, "{}", report(s));
        let mut out = vec![0u8; N as usize * 4];
        assert_eq!(neuron_sim_read_output(s, out.as_mut_ptr().cast(), out.len()), 0);
        assert_eq!(out, want());
        // A block of 0 bytes, or none.
        assert_eq!(neuron_sim_run_block(s, c"halves".as_ptr(), 1, block.as_ptr(), 0), Error::BadBlockSize.code());
    }
    let (mut passed, mut gated, mut failed) = (0, 0, 0);
    for at in 0..len {
        let orig = block[at];
        for v in [0x00, 0xFF, orig ^ 0x01, orig ^ 0x80] {
            if v == orig {
                continue;
            }
            let mut b = block.clone();
            b[at] = v;
            let mut out = vec![0u8; N as usize * 4];
            // SAFETY: as above.
            let rc = unsafe {
                assert_eq!(neuron_sim_fill_output(s, SENTINEL), 0);
                neuron_sim_run_block(s, c"halves".as_ptr(), 1, b.as_ptr(), b.len())
            };
            let text = report(s);
            if rc == 0 {
                // A pass is the right result.
                // SAFETY: as above.
                assert_eq!(unsafe { neuron_sim_read_output(s, out.as_mut_ptr().cast(), out.len()) }, 0);
                assert_eq!(out, want(), "byte {at} = {v:#x} passed with a wrong output\n{text}");
                passed += 1;
                continue;
            }
            assert!(Error::from_code(rc).is_some(), "byte {at} = {v:#x}: unknown code {rc}\n{text}");
            // SAFETY: as above.
            unsafe {
                assert_eq!(neuron_sim_read_output(s, out.as_mut_ptr().cast(), out.len()), Error::NoRunResult.code());
                assert_eq!(neuron_sim_inspect_output(s, out.as_mut_ptr().cast(), out.len()), 0);
            }
            if !text.contains(", status 0,") {
                // Refused by a gate before the kernel ran: nothing written.
                assert!(out.iter().all(|&x| x == SENTINEL), "byte {at} = {v:#x}: refused (rc {rc}) but the output was written\n{text}");
                gated += 1;
            } else {
                failed += 1;
            }
        }
    }
    // The sweep reached all three outcomes (a sweep that only ever saw
    // one would test nothing).
    eprintln!("sweep: passed {passed}, refused by a gate {gated}, failed after running {failed}");
    assert!(passed > 0 && gated > 0 && failed > 0, "passed {passed}, gated {gated}, failed after running {failed}");
    // SAFETY: s is live and not used again.
    unsafe { neuron_sim_free(s) };
}
