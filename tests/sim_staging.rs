//! A simulator on its caller's HBM file (issue 28: one copy each way): the
//! caller writes a tensor argument where the simulator places it and reads
//! the output where the run left it; between runs the tensor area is the
//! caller's, and a run still sees zeros past its own tensors.

use neuroncustomop::custom_ops;
use neuroncustomop::host::sim_ffi::*;
use neuroncustomop::host::staging_ffi::*;
use neuroncustomop::host::{Dtype as HostDtype, Simulator};
use neuroncustomop::kernel::*;
use neuroncustomop::runtime::Error;
use std::ffi::CStr;

const FP32: u8 = 12;

/// out = t + 1, each of the 8 cores its slice, through TCM a chunk at a
/// time.
fn plus_one(t: Tensor) -> Result<Tensor> {
    const CHUNK: i64 = 1024;
    let out = dst_tensor()?;
    let (cpu, cores, n) = (neuroncustomop::ffi::cpu::get_cpu_id() as i64, neuroncustomop::ffi::cpu::get_cpu_count() as i64, out.numel() as i64);
    let per = (n + cores - 1) / cores;
    let (lo, hi) = (cpu * per, ((cpu + 1) * per).min(n));
    let mut at = lo;
    while at < hi {
        let len = (hi - at).min(CHUNK);
        tcm_scope(|s| {
            let mut buf = s.buf::<f32>(len as usize).ok_or(Error::OutOfMemory)?;
            t.tcm_accessor().tensor_to_tcm(&mut buf, at as u64)?;
            buf.iter_mut().for_each(|v| *v += 1.0);
            out.tcm_accessor().tcm_to_tensor(&buf, at as u64)
        })?;
        at += len;
    }
    Ok(out)
}

/// out = t + 1 through raw pointers into the output (stores no hook sees).
fn plus_one_raw(t: Tensor) -> Result<Tensor> {
    let out = dst_tensor()?;
    let a = t.const_accessor::<f32, 1>()?;
    let ctx = neuroncustomop::ffi::translate::neuron_translate_ctx();
    for i in 0..out.numel() as i64 {
        let v = a.get([i])? + 1.0;
        let p = neuroncustomop::ffi::translate::neuron_translate(ctx, out.storage_addr() + i as u64 * 4);
        // SAFETY: p is a translated pointer to output element i, in mapped
        // mock HBM.
        unsafe { p.cast::<f32>().write_volatile(v) };
    }
    Ok(out)
}

custom_ops! {
    fn plus_one(t: Tensor);
    fn plus_one_raw(t: Tensor);
}

/// A memfd and the caller's view of its tensor area.
struct File {
    fd: i32,
    view: *mut u8,
    len: usize,
}

impl File {
    fn new(len: usize) -> Self {
        // SAFETY: memfd_create with a literal name; checked.
        let fd = unsafe { libc::memfd_create(c"staging-test".as_ptr(), libc::MFD_CLOEXEC) };
        assert!(fd >= 0);
        let base = neuron_sim_staging_offset();
        // SAFETY: sizing our own memfd, then mapping `len` bytes of it from
        // the tensor area's start.
        let view = unsafe {
            assert_eq!(libc::ftruncate(fd, (base + len as u64) as libc::off_t), 0);
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, base as libc::off_t)
        };
        assert_ne!(view, libc::MAP_FAILED);
        Self { fd, view: view.cast(), len }
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the view is `len` bytes, mapped while self lives.
        unsafe { std::slice::from_raw_parts_mut(self.view, self.len) }
    }
}

impl Drop for File {
    fn drop(&mut self) {
        // SAFETY: our own mapping and descriptor.
        unsafe {
            libc::munmap(self.view.cast(), self.len);
            libc::close(self.fd);
        }
    }
}

fn floats(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (i as f32 * 0.5 - 7.0).to_le_bytes()).collect()
}

fn plus_one_of(n: usize) -> Vec<u8> {
    floats(n).chunks(4).flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) + 1.0).to_le_bytes()).collect()
}

#[test]
fn a_staged_argument_runs_where_it_was_written_and_the_output_is_read_in_place() {
    let mut f = File::new(16 << 20);
    let s = neuron_sim_new_staged(f.fd);
    assert!(!s.is_null());
    let n = 100_000u64;
    let data = floats(n as usize);
    let span = neuron_sim_place_span(data.len() as u64) as usize;
    // SAFETY: s is live.
    assert_eq!(unsafe { neuron_sim_register(s) }, 2);
    assert!(span > data.len() && span.is_multiple_of(4096));
    for round in 0..3 {
        let at = 0;
        f.bytes()[at..at + data.len()].copy_from_slice(&data);
        // SAFETY: s is live; shapes and out pointers are valid.
        unsafe {
            // The first round's pages are hashed by the run, the others'
            // by the caller as it wrote them.
            let pages = hashes(&data);
            let (h, k) = if round == 0 { (std::ptr::null(), 0) } else { (pages.as_ptr(), pages.len()) };
            assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [n].as_ptr(), 1, at as u64, h, k), 0, "round {round}");
            assert_eq!(neuron_sim_set_output(s, FP32, [n].as_ptr(), 1), 0);
            let mut out_at = 0u64;
            assert_eq!(neuron_sim_output_offset(s, &mut out_at), Error::NoRunResult.code());
            let rc = neuron_sim_run(s, c"plus_one".as_ptr(), 8);
            assert_eq!(rc, 0, "{}", CStr::from_ptr(neuron_sim_report(s)).to_string_lossy());
            assert_eq!(neuron_sim_output_offset(s, &mut out_at), 0);
            assert_eq!(out_at as usize, span, "the output is placed right after the argument");
            let out = f.bytes()[span..span + data.len()].to_vec();
            assert_eq!(out, plus_one_of(n as usize));
            let mut copy = vec![0u8; data.len()];
            assert_eq!(neuron_sim_read_output(s, copy.as_mut_ptr().cast(), copy.len()), 0);
            assert_eq!(copy, out);
            assert_eq!(neuron_sim_reset(s), 0);
        }
        // The reset left the caller's bytes.
        assert_eq!(&f.bytes()[span..span + 16], &plus_one_of(4)[..]);
    }
    // SAFETY: s is live and not used again.
    unsafe { neuron_sim_free(s) };
}

fn hashes(data: &[u8]) -> Vec<u64> {
    let mut v = vec![0u64; data.len().div_ceil(4096)];
    // SAFETY: data readable for its length, v writable for its length.
    assert_eq!(unsafe { neuron_sim_hash_pages(data.as_ptr(), data.len(), v.as_mut_ptr(), v.len()) }, 0);
    v
}

#[test]
fn the_callers_page_hashes_are_what_a_run_with_a_raw_pointer_compares_its_input_with() {
    let n = 5000u64;
    let data = floats(n as usize);
    let mut wrong = hashes(&data);
    wrong[2] ^= 1;
    // A kernel that makes a raw pointer (its output's): the input is
    // compared with the given hashes and reads as changed in the page
    // whose hash differs. One of accessors and TCM copies makes none: its
    // stores were all seen, nothing is compared.
    for (op, cores, want) in [(c"plus_one_raw", 1, Error::InputWritten.code()), (c"plus_one", 8, 0)] {
        let mut f = File::new(1 << 20);
        let s = neuron_sim_new_staged(f.fd);
        assert!(!s.is_null());
        f.bytes()[..data.len()].copy_from_slice(&data);
        // SAFETY: s is live; shapes, hashes and report are valid as passed.
        unsafe {
            assert_eq!(neuron_sim_register(s), 2);
            assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [n].as_ptr(), 1, 0, wrong.as_ptr(), wrong.len() - 1), Error::BufferTooSmall.code());
            assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [n].as_ptr(), 1, 0, wrong.as_ptr(), wrong.len()), 0);
            assert_eq!(neuron_sim_set_output(s, FP32, [n].as_ptr(), 1), 0);
            let rc = neuron_sim_run(s, op.as_ptr(), cores);
            let rep = CStr::from_ptr(neuron_sim_report(s)).to_string_lossy().into_owned();
            assert_eq!(rc, want, "{op:?}: {rep}");
            if want != 0 {
                assert!(rep.contains("argument 0 changed during the run, in its bytes [8192, 12288)"), "{rep}");
            }
            neuron_sim_free(s);
        }
    }
    let mut v = [0u64; 1];
    // SAFETY: data and v valid as passed; null where refused.
    unsafe {
        assert_eq!(neuron_sim_hash_pages(data.as_ptr(), 4097, v.as_mut_ptr(), 1), Error::BufferTooSmall.code());
        assert_eq!(neuron_sim_hash_pages(std::ptr::null(), 1, v.as_mut_ptr(), 1), Error::NullArgument.code());
    }
}

#[test]
fn staging_out_of_place_or_on_a_plain_simulator_is_refused() {
    let f = File::new(1 << 20);
    let s = neuron_sim_new_staged(f.fd);
    let plain = neuron_sim_new();
    assert!(!s.is_null() && !plain.is_null());
    let mut at = 0u64;
    // SAFETY: live handles, valid shapes; nulls where the API allows them.
    unsafe {
        assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [4].as_ptr(), 1, 4096, std::ptr::null(), 0), Error::StagedOutOfPlace.code());
        assert_eq!(neuron_sim_arg_tensor_staged(plain, FP32, [4].as_ptr(), 1, 0, std::ptr::null(), 0), Error::NotStaged.code());
        assert_eq!(neuron_sim_arg_tensor_staged(std::ptr::null_mut(), FP32, [4].as_ptr(), 1, 0, std::ptr::null(), 0), Error::NullArgument.code());
        assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, std::ptr::null(), 1, 0, std::ptr::null(), 0), Error::NullArgument.code());
        assert_eq!(neuron_sim_output_offset(s, &mut at), Error::NoOutput.code());
        assert_eq!(neuron_sim_output_offset(s, std::ptr::null_mut()), Error::NullArgument.code());
        // In place after a refusal: nothing was placed.
        assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [4].as_ptr(), 1, 0, std::ptr::null(), 0), 0);
        // The next place is a span on.
        assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [4].as_ptr(), 1, 0, std::ptr::null(), 0), Error::StagedOutOfPlace.code());
        assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [4].as_ptr(), 1, neuron_sim_place_span(16), std::ptr::null(), 0), 0);
        neuron_sim_free(s);
        neuron_sim_free(plain);
    }
    assert!(neuron_sim_new_staged(-1).is_null());
    assert_eq!(neuron_sim_place_span(u64::MAX), 0);
}

#[test]
fn a_run_sees_zeros_past_its_tensors_whatever_earlier_runs_left() {
    let mut f = File::new(32 << 20);
    let mut s = Simulator::new_staged(f.fd).unwrap();
    s.register_linked().unwrap();
    let big = 1_000_000usize;
    f.bytes()[..big * 4].copy_from_slice(&floats(big));
    s.arg_tensor_staged(HostDtype::Fp32, &[big as u64], 0, None).unwrap();
    s.set_output(HostDtype::Fp32, &[big as u64]).unwrap();
    assert!(s.run("plus_one", 8).unwrap().ok());
    s.reset().unwrap();
    // Left by the caller, or a kernel, past where the next run's tensors
    // go: the run zeroes it before its kernels start.
    let junk_at = 1 << 20;
    f.bytes()[junk_at..junk_at + 4096].fill(0x77);
    let small = 1000usize;
    f.bytes()[..small * 4].copy_from_slice(&floats(small));
    let d = s.arg_tensor_staged(HostDtype::Fp32, &[small as u64], 0, None).unwrap();
    let o = s.set_output(HostDtype::Fp32, &[small as u64]).unwrap();
    let rep = s.run("plus_one", 8).unwrap();
    assert!(rep.ok(), "{rep:?}");
    let mut out = vec![0u8; small * 4];
    s.read(o.storage, &mut out).unwrap();
    assert_eq!(out, plus_one_of(small));
    // Everything from the run's last tensor to where the big run's bytes
    // ended reads zeros now.
    let past = o.storage + o.buffer_bytes + 2 * 4096 + 4096;
    let mut tail = vec![1u8; 8 << 20];
    s.read(past, &mut tail).unwrap();
    assert!(tail.iter().all(|&b| b == 0), "stale bytes past the run's tensors");
    assert!(f.bytes()[junk_at..junk_at + 4096].iter().all(|&b| b == 0));
    // The input is where the caller wrote it.
    assert_eq!(d.storage - s.soc().platform().hbm_soc_base, neuron_sim_staging_offset());
}

#[test]
fn a_new_simulator_on_a_used_file_keeps_what_the_caller_staged_and_zeroes_the_rest() {
    // What a worker whose simulator could not be reset (or that died before
    // it took the call) leaves: the caller's staged argument in the tensor
    // area, and a dead run's bytes outside it.
    let mut f = File::new(1 << 20);
    let n = 3000usize;
    f.bytes()[..n * 4].copy_from_slice(&floats(n));
    let scratch = 64u64 << 10;
    // SAFETY: writing a page into our own memfd, below the tensor area.
    assert_eq!(unsafe { libc::pwrite(f.fd, [0x55u8; 4096].as_ptr().cast(), 4096, scratch as libc::off_t) }, 4096);
    let mut s = Simulator::new_staged(f.fd).unwrap();
    s.register_linked().unwrap();
    let base = s.soc().platform().hbm_soc_base;
    let mut b = vec![1u8; 4096];
    s.read(base + scratch, &mut b).unwrap();
    assert!(b.iter().all(|&x| x == 0), "outside the tensor area: zeros");
    s.arg_tensor_staged(HostDtype::Fp32, &[n as u64], 0, None).unwrap();
    let o = s.set_output(HostDtype::Fp32, &[n as u64]).unwrap();
    assert!(s.run("plus_one", 8).unwrap().ok());
    let mut out = vec![0u8; n * 4];
    s.read(o.storage, &mut out).unwrap();
    assert_eq!(out, plus_one_of(n));
}

/// A 4 MiB file with a staging simulator on it, a plain simulator, and
/// the bytes of `n` floats to stage.
fn staged_and_plain(n: u64) -> (File, *mut NeuronSim, *mut NeuronSim, Vec<u8>) {
    let f = File::new(4 << 20);
    let s = neuron_sim_new_staged(f.fd);
    let plain = neuron_sim_new();
    assert!(!s.is_null() && !plain.is_null());
    (f, s, plain, floats(n as usize))
}

/// What `neuron_sim_set_output_ready` told: (offset, bytes) per call.
unsafe extern "C" fn note_ready(ctx: *mut std::ffi::c_void, offset: u64, len: u64) {
    // SAFETY: the test passes a live Vec as ctx.
    unsafe { (*ctx.cast::<Vec<(u64, u64)>>()).push((offset, len)) };
}

#[test]
fn the_caller_is_told_when_the_output_is_final_and_not_when_a_write_went_unseen() {
    let n = 50_000u64;
    let (mut f, s, plain, data) = staged_and_plain(n);
    let told: *mut Vec<(u64, u64)> = Box::into_raw(Box::default());
    let ctx = told.cast();
    // SAFETY: live handles; `told` lives until after the simulator is
    // freed, and no reference to it is held while a run may push.
    unsafe {
        assert_eq!(neuron_sim_register(s), 2);
        assert_eq!(neuron_sim_set_output_ready(plain, Some(note_ready), ctx), Error::NotStaged.code());
        assert_eq!(neuron_sim_set_output_ready(std::ptr::null_mut(), Some(note_ready), ctx), Error::NullArgument.code());
        assert_eq!(neuron_sim_set_output_ready(s, Some(note_ready), ctx), 0);
        for (op, cores, told_now) in [(c"plus_one", 8, true), (c"plus_one_raw", 1, false), (c"plus_one", 8, true)] {
            f.bytes()[..data.len()].copy_from_slice(&data);
            assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [n].as_ptr(), 1, 0, std::ptr::null(), 0), 0);
            assert_eq!(neuron_sim_set_output(s, FP32, [n].as_ptr(), 1), 0);
            let before = (&*told).len();
            let rc = neuron_sim_run(s, op.as_ptr(), cores);
            assert_eq!(rc, 0, "{}", CStr::from_ptr(neuron_sim_report(s)).to_string_lossy());
            let mut at = 0u64;
            assert_eq!(neuron_sim_output_offset(s, &mut at), 0);
            let now = &(&*told)[before..];
            // Hooks saw every write (the TCM copies): told once, where the
            // output lies. Raw stores: the verdict's scan decides; not told.
            assert_eq!(now, if told_now { vec![(at, n * 4)] } else { vec![] }.as_slice(), "{op:?} on {cores}");
            assert_eq!(f.bytes()[at as usize..(at + n * 4) as usize], plus_one_of(n as usize)[..]);
            assert_eq!(neuron_sim_reset(s), 0, "a reset keeps the callback");
        }
        assert_eq!(neuron_sim_set_output_ready(s, None, std::ptr::null_mut()), 0);
        neuron_sim_free(s);
        neuron_sim_free(plain);
        assert_eq!(Box::from_raw(told).len(), 2);
    }
}

#[test]
fn an_output_filled_ahead_is_not_filled_again_and_judged_the_same() {
    let n = 50_000u64;
    let (mut f, s, plain, data) = staged_and_plain(n);
    // One call: `op` on `cores`, its report when it failed.
    let call = |f: &mut File, op: &CStr, cores: u32| -> std::result::Result<u64, String> {
        f.bytes()[..data.len()].copy_from_slice(&data);
        // SAFETY: s is live; shapes and out pointers are valid.
        unsafe {
            assert_eq!(neuron_sim_arg_tensor_staged(s, FP32, [n].as_ptr(), 1, 0, std::ptr::null(), 0), 0);
            assert_eq!(neuron_sim_set_output(s, FP32, [n].as_ptr(), 1), 0);
            match neuron_sim_run(s, op.as_ptr(), cores) {
                0 => {
                    let mut at = 0u64;
                    assert_eq!(neuron_sim_output_offset(s, &mut at), 0);
                    Ok(at)
                }
                _ => Err(CStr::from_ptr(neuron_sim_report(s)).to_string_lossy().into_owned()),
            }
        }
    };
    // SAFETY: live handles; the refusals are of a plain simulator, a null
    // one and an offset past HBM.
    unsafe {
        assert_eq!(neuron_sim_register(s), 2);
        assert_eq!(neuron_sim_prefill_output(plain, 0, 64), Error::NotStaged.code());
        assert_eq!(neuron_sim_prefill_output(std::ptr::null_mut(), 0, 64), Error::NullArgument.code());
        assert_eq!(neuron_sim_prefill_output(s, u64::MAX - 8, 64), Error::AddressUnmapped.code());
    }
    let at = call(&mut f, c"plus_one", 8).unwrap();
    let (lo, hi) = (at as usize, (at + n * 4) as usize);
    // On 1 core plus_one writes the first eighth: the rest is reported
    // never written, filled ahead or not.
    let unwritten = "43750 of 50000 output elements were never written: [6250, 50000)";
    for ahead in [false, true] {
        // SAFETY: s is live.
        unsafe {
            assert_eq!(neuron_sim_reset(s), 0);
            if ahead {
                assert_eq!(neuron_sim_prefill_output(s, at, n * 4), 0);
            }
        }
        let rep = call(&mut f, c"plus_one", 1).unwrap_err();
        assert!(rep.contains(unwritten), "ahead {ahead}: {rep}");
        assert_eq!(f.bytes()[lo..lo + 6250 * 4], plus_one_of(6250)[..]);
    }
    // What shows the fill was not made again: an element the caller wrote
    // (against the contract) after the fill ahead no longer holds the
    // sentinel when the run starts, and so is not judged unwritten; after
    // a reset the run fills it again, and it is.
    for reset_between in [false, true] {
        // SAFETY: s is live.
        unsafe {
            assert_eq!(neuron_sim_reset(s), 0);
            assert_eq!(neuron_sim_prefill_output(s, at, n * 4), 0);
            if reset_between {
                assert_eq!(neuron_sim_reset(s), 0);
            }
        }
        f.bytes()[hi - 4..hi].copy_from_slice(&[0x11; 4]);
        let rep = call(&mut f, c"plus_one", 1).unwrap_err();
        let last = if reset_between { unwritten } else { "[6250, 49999)" };
        assert!(rep.contains(last), "reset between {reset_between}: {rep}");
    }
    // Another shape: placed elsewhere, filled as usual.
    // SAFETY: s is live; then both are freed.
    unsafe {
        assert_eq!(neuron_sim_reset(s), 0);
        assert_eq!(neuron_sim_prefill_output(s, at + 4096, n * 4), 0);
    }
    f.bytes()[hi - 4..hi].copy_from_slice(&[0x11; 4]);
    assert!(call(&mut f, c"plus_one", 1).unwrap_err().contains(unwritten));
    // SAFETY: live handles, not used again.
    unsafe {
        neuron_sim_free(s);
        neuron_sim_free(plain);
    }
}
