//! Bad input: one test per validation gate of SPEC §6 and per exhaustion
//! case. Each asserts the exact error code, that `neuron_error_message`
//! gives the readable reason for it, that nothing crashes, and that the
//! output tensor is untouched (it is filled with a sentinel before the run
//! and compared after).
//!
//! The gates are driven through a Rust kernel written like a generated
//! wrapper (`probe`), run by the host `Simulator` with raw descriptors, and
//! a few through the C++ path (`tests/cpp/driver_bad_input.cpp`). The
//! documentation test at the end keeps `docs/errors.md` in step with
//! `Error::ALL`.

mod cpp;

use neuroncustomop::ffi::customop::*;
use neuroncustomop::ffi::error::{neuron_clear_error, neuron_error_message, neuron_last_error};
use neuroncustomop::ffi::launch::{neuron_entry, switch_stack_or_call_wrapper, EntryBlock, OpFn, OpTable, ENTRY_ABI_VERSION};
use neuroncustomop::ffi::memcpy::{neuron_get_memcpy_method, neuron_memcpy_from_soc, neuron_memcpy_to_soc, neuron_set_memcpy_method};
use neuroncustomop::host::{RunReport, Simulator};
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc};
use neuroncustomop::runtime::marshal::dtype::Dtype;
use neuroncustomop::runtime::marshal::invocation::ArgKind;
use neuroncustomop::runtime::marshal::tensor::TensorView;
use neuroncustomop::runtime::Error;
use std::ffi::{c_char, c_void, CStr};
use std::sync::{Mutex, MutexGuard};

// ---- the probe kernel ----

/// A reader the probe calls, in order.
#[derive(Clone, Copy, Debug)]
enum Read {
    Tensor,
    Scalar,
    Int,
    Float,
    LongLong,
    Double,
}

/// What the probe does once its reads succeeded.
#[derive(Clone, Copy, Debug)]
enum Finish {
    /// Claim the output with `get_dst_tensor` and overwrite all of it.
    WriteDst,
    /// Hand the first tensor argument to `customop_return_tensor`.
    ReturnFirst,
}

#[derive(Clone, Copy, Debug)]
struct Plan {
    reads: &'static [Read],
    finish: Finish,
}

/// The plan of the running scenario (scenarios are serialised by `SERIAL`).
static PLAN: Mutex<Plan> = Mutex::new(Plan { reads: &[], finish: Finish::WriteDst });
static SERIAL: Mutex<()> = Mutex::new(());

/// What the kernel writes when it does run: never the sentinel.
const WRITTEN: u8 = 0x11;
/// The output's sentinel.
const SENTINEL: u8 = 0xA5;

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn write_all(out: &TensorView) {
    let chunk = [WRITTEN; 256];
    let mut off = 0u64;
    while off < out.nbytes as u64 {
        let k = (out.nbytes as u64 - off).min(chunk.len() as u64);
        // SAFETY: chunk holds at least k bytes.
        unsafe { neuron_memcpy_to_soc(out.storage.addr + off, chunk.as_ptr().cast(), k as u32) };
        off += k;
    }
}

/// The generated-style wrapper: setup, the plan's readers in order, the
/// kernel only if every reader succeeded, cleanup.
unsafe extern "C" fn probe_wrapper() {
    let plan = *PLAN.lock().unwrap_or_else(|e| e.into_inner());
    customop_setup(true);
    let mut first: Option<TensorView> = None;
    for r in plan.reads {
        match r {
            Read::Tensor => {
                let t = customop_next_tensor();
                first.get_or_insert(t);
            }
            Read::Scalar => drop(customop_next_scalar()),
            Read::Int => drop(customop_next_int()),
            Read::Float => drop(customop_next_float()),
            Read::LongLong => drop(customop_next_long_long()),
            Read::Double => drop(customop_next_double()),
        }
    }
    if customop_status() == 0 {
        match plan.finish {
            Finish::WriteDst => {
                let out = get_dst_tensor();
                if customop_status() == 0 {
                    write_all(&out);
                }
            }
            Finish::ReturnFirst => {
                let t = first.expect("the plan reads a tensor");
                // SAFETY: t is a live local.
                unsafe { customop_return_tensor(&t) };
            }
        }
    }
    customop_cleanup();
}

unsafe extern "C" fn probe_stack_switch() -> i32 {
    // SAFETY: probe_wrapper is a generated-style wrapper.
    unsafe { switch_stack_or_call_wrapper(Some(probe_wrapper), 4196) }
}

#[unsafe(no_mangle)]
extern "C" fn get_func_cnt() -> i32 {
    1
}
#[unsafe(no_mangle)]
extern "C" fn get_func_name(_: i32) -> *const c_char {
    c"probe".as_ptr()
}
#[unsafe(no_mangle)]
extern "C" fn get_func_ptr(_: i32) -> Option<OpFn> {
    Some(probe_stack_switch)
}

// ---- scenario helpers ----

/// A simulator with the probe registered.
fn sim() -> Simulator {
    let mut s = Simulator::new().unwrap();
    assert_eq!(s.register_linked().unwrap(), 1);
    s
}

fn f32_bytes(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (i as f32 - 3.5).to_le_bytes()).collect()
}

/// Places an FP32 tensor of `n` elements (not yet an argument).
fn fp32(s: &mut Simulator, n: usize) -> RawTensorDesc {
    s.place(Dtype::Fp32, &[n as u64], &f32_bytes(n)).unwrap()
}

/// The output: a valid tensor in HBM filled with the sentinel. Returns its
/// descriptor (the one to check afterwards, whatever the test then does to
/// the descriptor the kernel sees).
fn output(s: &mut Simulator, dtype: Dtype, shape: &[u64]) -> RawTensorDesc {
    let d = s.set_output(dtype, shape).unwrap();
    s.fill_output(SENTINEL).unwrap();
    d
}

/// The message C gets for `code`.
fn message(code: i32) -> String {
    // SAFETY: neuron_error_message never returns null; its strings are static.
    unsafe { CStr::from_ptr(neuron_error_message(code)) }.to_str().expect("UTF-8 message").to_owned()
}

/// The code is `e`'s, and its message is readable and is `e`'s reason.
fn assert_code(code: i32, e: Error) {
    assert_eq!(code, e.code(), "expected {e} but got {code} ({})", message(code));
    let m = message(code);
    assert!(!m.is_empty() && m.is_ascii(), "message of {code}: {m:?}");
    assert_eq!(m, e.message());
}

/// Every core used reported `e` as its invocation status, and the output
/// still holds the sentinel.
fn assert_rejected(s: &Simulator, rep: &RunReport, e: Error, out: &RawTensorDesc) {
    assert!(!rep.cores.is_empty());
    for c in &rep.cores {
        assert_eq!(c.returned, 0, "core {} launcher", c.cpu);
        assert_code(c.status, e);
    }
    assert_untouched(s, out);
}

fn assert_untouched(s: &Simulator, out: &RawTensorDesc) {
    let mut v = vec![0u8; out.buffer_bytes as usize];
    s.read(out.storage, &mut v).unwrap();
    if let Some(i) = v.iter().position(|&b| b != SENTINEL) {
        panic!("output byte {i} was written ({:#x})", v[i]);
    }
}

/// Runs the probe with `plan` on `cores` cores and checks the rejection.
fn expect(s: &mut Simulator, plan: Plan, cores: u32, e: Error, out: &RawTensorDesc) {
    *PLAN.lock().unwrap() = plan;
    let rep = s.run("probe", cores).unwrap();
    assert_rejected(s, &rep, e, out);
}

const ONE_TENSOR: Plan = Plan { reads: &[Read::Tensor], finish: Finish::WriteDst };

/// One tensor argument given by the raw descriptor `d` (after `edit`),
/// read by `next_tensor`, must be refused with `e`.
fn tensor_gate(edit: impl FnOnce(&mut RawTensorDesc), e: Error) {
    let _g = serial();
    let mut s = sim();
    let mut d = fp32(&mut s, 24);
    edit(&mut d);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, d) };
    let out = output(&mut s, Dtype::Fp32, &[24]);
    expect(&mut s, ONE_TENSOR, 1, e, &out);
}

/// The same fault in the *output* descriptor: `get_dst_tensor` refuses it.
fn output_gate(edit: impl FnOnce(&mut RawTensorDesc), e: Error) {
    let _g = serial();
    let mut s = sim();
    let a = fp32(&mut s, 24);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, a) };
    let out = output(&mut s, Dtype::Fp32, &[24]);
    let mut bad = out;
    edit(&mut bad);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.set_output_raw(bad) };
    expect(&mut s, ONE_TENSOR, 1, e, &out);
}

// ---- sanity: the probe does write when nothing is wrong ----

#[test]
fn a_good_invocation_writes_the_output() {
    let _g = serial();
    let mut s = sim();
    let a = fp32(&mut s, 24);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, a) };
    let out = output(&mut s, Dtype::Fp32, &[24]);
    *PLAN.lock().unwrap() = ONE_TENSOR;
    // The probe writes the whole output on whichever core runs it: on 8
    // cores that is every core writing the same bytes, which is reported.
    let rep = s.run("probe", 8).unwrap();
    assert_eq!(rep.code(), Error::CoreWritesOverlap.code(), "{rep}");
    assert!(rep.overlaps.iter().any(|o| o == "cores 0 and 1 both wrote output bytes [0, 96)"), "{rep}");
    let rep = s.run("probe", 1).unwrap();
    assert!(rep.ok(), "{rep:?}");
    assert!(s.read_output().unwrap().iter().all(|&b| b == WRITTEN));
    // And returning a tensor copies it.
    s.fill_output(SENTINEL).unwrap();
    *PLAN.lock().unwrap() = Plan { reads: &[Read::Tensor], finish: Finish::ReturnFirst };
    let rep = s.run("probe", 1).unwrap();
    assert!(rep.ok(), "{rep:?}");
    assert_eq!(s.read_output().unwrap(), f32_bytes(24));
    let _ = out;
}

// ---- invocation header ----

#[test]
fn more_than_10_args() {
    let _g = serial();
    let mut s = sim();
    for _ in 0..10 {
        let d = fp32(&mut s, 4);
        // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
        unsafe { s.push_arg(ArgKind::Tensor, d) };
    }
    let out = output(&mut s, Dtype::Fp32, &[4]);
    // The simulator's builder refuses an 11th argument itself...
    let d = fp32(&mut s, 4);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, d) };
    assert_eq!(s.block().err(), Some(Error::TooManyArgs));
    s.clear_args();
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.set_output_raw(out) };
    for _ in 0..10 {
        // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
        unsafe { s.push_arg(ArgKind::Tensor, d) };
    }
    // ...so the block is patched by hand to claim 11: the runtime refuses
    // it at setup, before any argument is read.
    let mut block = s.block().unwrap();
    block[6] = 11;
    *PLAN.lock().unwrap() = Plan { reads: &[Read::Tensor; 10], finish: Finish::WriteDst };
    // SAFETY: the block of placed tensors, its header patched (what the gate under test refuses).
    let rep = unsafe { s.run_block("probe", 1, &block) }.unwrap();
    assert_rejected(&s, &rep, Error::TooManyArgs, &out);
    // 255 too, on every core.
    block[6] = 255;
    // SAFETY: the block of placed tensors, its header patched (what the gate under test refuses).
    let rep = unsafe { s.run_block("probe", 8, &block) }.unwrap();
    assert_rejected(&s, &rep, Error::TooManyArgs, &out);
}

#[test]
fn bad_abi_version_block_size_and_kind_code() {
    let _g = serial();
    let mut s = sim();
    let a = fp32(&mut s, 4);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, a) };
    let out = output(&mut s, Dtype::Fp32, &[4]);
    let good = s.block().unwrap();
    *PLAN.lock().unwrap() = ONE_TENSOR;
    for (at, v, e) in [
        (0usize, b'X', Error::BadAbiVersion),
        (4, 2, Error::BadAbiVersion),
        (20, 0, Error::BadBlockSize),
        (8, 7, Error::BadArgKind),
        (9, 1, Error::ReservedNotZero),
        (7, 1, Error::ReservedNotZero),
    ] {
        let mut b = good.clone();
        b[at] = v;
        // SAFETY: the block of placed tensors, its header patched (what the gate under test refuses).
        let rep = unsafe { s.run_block("probe", 1, &b) }.unwrap();
        assert_rejected(&s, &rep, e, &out);
    }
}

// ---- readers ----

#[test]
fn reading_past_the_last_arg() {
    let _g = serial();
    let mut s = sim();
    let a = fp32(&mut s, 8);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, a) };
    let out = output(&mut s, Dtype::Fp32, &[8]);
    expect(&mut s, Plan { reads: &[Read::Tensor, Read::Tensor], finish: Finish::WriteDst }, 1, Error::NoMoreArgs, &out);
    // With no arguments at all, every reader is past the end.
    s.clear_args();
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.set_output_raw(out) };
    for r in [Read::Tensor, Read::Scalar, Read::Int, Read::Float, Read::LongLong, Read::Double] {
        let reads: &'static [Read] = Box::leak(Box::new([r]));
        expect(&mut s, Plan { reads, finish: Finish::WriteDst }, 8, Error::NoMoreArgs, &out);
    }
}

#[test]
fn wrong_kind_for_the_reader() {
    let _g = serial();
    let mut s = sim();
    let out = output(&mut s, Dtype::Fp32, &[4]);
    // A tensor argument read as each value kind.
    let t = fp32(&mut s, 4);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, t) };
    for r in [Read::Scalar, Read::Int, Read::Float, Read::LongLong, Read::Double] {
        let reads: &'static [Read] = Box::leak(Box::new([r]));
        expect(&mut s, Plan { reads, finish: Finish::WriteDst }, 1, Error::WrongArgKind, &out);
    }
    // An int argument read as a tensor, and as a float.
    s.clear_args();
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.set_output_raw(out) };
    s.arg_value(ArgKind::Int, Dtype::Int32, &7i32.to_le_bytes()).unwrap();
    expect(&mut s, ONE_TENSOR, 1, Error::WrongArgKind, &out);
    expect(&mut s, Plan { reads: &[Read::Float], finish: Finish::WriteDst }, 1, Error::WrongArgKind, &out);
}

#[test]
fn scalar_with_more_than_one_element() {
    let _g = serial();
    for (kind, read) in [
        (ArgKind::Scalar, Read::Scalar),
        (ArgKind::Int, Read::Int),
        (ArgKind::Float, Read::Float),
        (ArgKind::LongLong, Read::LongLong),
        (ArgKind::Double, Read::Double),
    ] {
        let mut s = sim();
        let two = s.place(Dtype::Fp32, &[2], &f32_bytes(2)).unwrap();
        // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
        unsafe { s.push_arg(kind, two) };
        let out = output(&mut s, Dtype::Fp32, &[4]);
        let reads: &'static [Read] = Box::leak(Box::new([read]));
        expect(&mut s, Plan { reads, finish: Finish::WriteDst }, 1, Error::ScalarNotOneElement, &out);
    }
}

// ---- descriptor gates, on an argument ----

#[test]
fn null_storage() {
    tensor_gate(|d| d.storage = 0, Error::NullStorage);
    // An SBUF tensor at offset 0 is refused too (the raw field is checked).
    tensor_gate(
        |d| {
            d.location = Location::Sbuf as u8;
            d.storage = 0;
        },
        Error::NullStorage,
    );
}

#[test]
fn rejected_dtype_fp32r() {
    tensor_gate(|d| d.dtype = 11, Error::DtypeNotMarshallable);
}

#[test]
fn rejected_dtypes_every_code_outside_the_eight() {
    for code in [0u8, 1, 5, 9, 11, 13, 14, 15, 16, 0x7f, 0xff] {
        tensor_gate(|d| d.dtype = code, Error::DtypeNotMarshallable);
    }
}

#[test]
fn rank_0() {
    tensor_gate(
        |d| {
            d.num_dim = 0;
            d.shape = [0; 16];
        },
        Error::BadRank,
    );
}

#[test]
fn rank_over_the_narrow_limit_8() {
    tensor_gate(|d| d.num_dim = 9, Error::BadRank);
}

#[test]
fn rank_over_the_wide_limit_4() {
    tensor_gate(
        |d| {
            // A wide shape [24, 1, 1, 1] declared with 5 dimensions.
            d.shape_width = 1;
            d.shape = [0; 16];
            for (i, v) in [24u32, 1, 1, 1].iter().enumerate() {
                d.shape[4 * i..4 * i + 4].copy_from_slice(&v.to_le_bytes());
            }
            d.num_dim = 5;
        },
        Error::BadRank,
    );
}

#[test]
fn non_zero_reserved_bytes() {
    for i in 0..3 {
        tensor_gate(|d| d.reserved0[i] = 1, Error::ReservedNotZero);
    }
    tensor_gate(|d| d.reserved1 = 1 << 63, Error::ReservedNotZero);
    // A shape entry past num_dim is reserved too.
    tensor_gate(|d| d.shape[2] = 1, Error::ReservedNotZero);
}

#[test]
fn out_of_line_shape() {
    tensor_gate(|d| d.shape_type = 1, Error::OutOfLineShape);
}

#[test]
fn unknown_location_or_shape_width_code() {
    tensor_gate(|d| d.location = 2, Error::BadDescriptorCode);
    tensor_gate(|d| d.shape_width = 2, Error::BadDescriptorCode);
    tensor_gate(|d| d.shape_type = 2, Error::BadDescriptorCode);
}

#[test]
fn zero_shape_entry() {
    tensor_gate(|d| d.shape = [0; 16], Error::BadShape);
}

#[test]
fn too_small_buffer_bytes() {
    tensor_gate(|d| d.buffer_bytes -= 1, Error::BufferTooSmall);
    tensor_gate(|d| d.buffer_bytes = 0, Error::BufferTooSmall);
}

#[test]
fn sbuf_tensor_past_the_end_of_sbuf() {
    tensor_gate(
        |d| {
            d.location = Location::Sbuf as u8;
            d.storage = 24 << 20;
        },
        Error::AddressUnmapped,
    );
}

// ---- the same gates on the output descriptor ----

#[test]
fn output_descriptor_gates() {
    output_gate(|d| d.storage = 0, Error::NullStorage);
    output_gate(|d| d.dtype = 11, Error::DtypeNotMarshallable);
    output_gate(|d| d.num_dim = 0, Error::BadRank);
    output_gate(|d| d.reserved0[0] = 1, Error::ReservedNotZero);
    output_gate(|d| d.shape_type = 1, Error::OutOfLineShape);
    output_gate(|d| d.buffer_bytes = 1, Error::BufferTooSmall);
}

// ---- the return path ----

#[test]
fn dtype_mismatch_on_return() {
    let _g = serial();
    let mut s = sim();
    let a = fp32(&mut s, 16);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, a) };
    // Same byte size, other dtype: only the dtype gate can refuse it.
    let out = output(&mut s, Dtype::Int32, &[16]);
    expect(&mut s, Plan { reads: &[Read::Tensor], finish: Finish::ReturnFirst }, 1, Error::DtypeMismatch, &out);
}

#[test]
fn returned_tensor_smaller_than_the_output() {
    let _g = serial();
    let mut s = sim();
    let a = fp32(&mut s, 8);
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, a) };
    let out = output(&mut s, Dtype::Fp32, &[16]);
    expect(&mut s, Plan { reads: &[Read::Tensor], finish: Finish::ReturnFirst }, 1, Error::ReturnShapeMismatch, &out);
}

#[test]
fn output_neither_claimed_nor_returned() {
    let _g = serial();
    let mut s = sim();
    let out = output(&mut s, Dtype::Fp32, &[4]);
    // A kernel that reads its argument and then forgets its output.
    let d = s.place(Dtype::Fp32, &[4], &f32_bytes(4)).unwrap();
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, d) };
    // SAFETY: the test's own table: sound functions, and every op it lists a generated launcher.
    unsafe { s.register(OpTable { count: one, name: lazy_name, ptr: lazy_ptr }) }.unwrap();
    let rep = s.run("lazy", 1).unwrap();
    assert_rejected(&s, &rep, Error::OutputNotWritten, &out);
}

unsafe extern "C" fn lazy_wrapper() {
    customop_setup(true);
    let _ = customop_next_tensor();
    customop_cleanup();
}
unsafe extern "C" fn lazy_stack_switch() -> i32 {
    // SAFETY: lazy_wrapper is a generated-style wrapper.
    unsafe { switch_stack_or_call_wrapper(Some(lazy_wrapper), 0) }
}
unsafe extern "C" fn one() -> i32 {
    1
}
unsafe extern "C" fn lazy_name(_: i32) -> *const c_char {
    c"lazy".as_ptr()
}
unsafe extern "C" fn lazy_ptr(_: i32) -> Option<OpFn> {
    Some(lazy_stack_switch)
}

#[test]
fn no_invocation_bound() {
    let _g = serial();
    let mut s = sim();
    // The simulator's own core: the SoC has one live core per cpu.
    let core = s.core(2);
    core.enter(|| {
        // The mailbox is empty: setup binds nothing, every reader refuses.
        customop_setup(true);
        assert_code(customop_status(), Error::NoInvocation);
        let t = customop_next_tensor();
        assert_eq!((t.numel, t.storage.addr), (0, 0));
        assert_code(neuron_last_error(), Error::NoInvocation);
        // Cleanup of an invocation that never bound has nothing to do;
        // the status keeps the first failure.
        customop_cleanup();
        assert_code(customop_status(), Error::NoInvocation);
    });
}

// ---- registration ----

fn entry_block(size: u32) -> EntryBlock {
    EntryBlock { size, abi_version: ENTRY_ABI_VERSION, handle: 0, register_cb: count_cb as *const () as usize as u64, flags: 0, reserved: [0; 2] }
}

static REGISTERED: Mutex<u32> = Mutex::new(0);

unsafe extern "C" fn count_cb(_: *mut c_void, _: *const c_char, _: OpFn) -> i32 {
    *REGISTERED.lock().unwrap() += 1;
    0
}

#[test]
fn hand_off_block_shorter_than_36_bytes() {
    let _g = serial();
    let mut s = sim();
    let core = s.core(0);
    core.enter(|| {
        *REGISTERED.lock().unwrap() = 0;
        for size in [0, 1, 16, 35] {
            neuron_clear_error();
            let b = entry_block(size);
            // SAFETY: b is a complete 40-byte block; only its size field lies.
            assert_eq!(unsafe { neuron_entry(&b) }, -1, "size {size}");
            assert_code(neuron_last_error(), Error::AbiMismatch);
        }
        assert_eq!(*REGISTERED.lock().unwrap(), 0, "nothing registered");
        let b = entry_block(36);
        // SAFETY: as above.
        assert_eq!(unsafe { neuron_entry(&b) }, 1);
        assert_eq!(*REGISTERED.lock().unwrap(), 1);
    });
}

unsafe extern "C" fn count_0x8000() -> i32 {
    0x8000
}
unsafe extern "C" fn count_max() -> i32 {
    i32::MAX
}
unsafe extern "C" fn count_negative() -> i32 {
    -1
}

#[test]
fn op_count_0x8000_or_more() {
    let _g = serial();
    let mut s = sim();
    let out = output(&mut s, Dtype::Fp32, &[4]);
    *REGISTERED.lock().unwrap() = 0;
    for count in [count_0x8000 as unsafe extern "C" fn() -> i32, count_max, count_negative] {
        let t = OpTable { count, name: lazy_name, ptr: lazy_ptr };
        s.core(1).enter(|| {
            // SAFETY: the table's functions and count_cb are valid.
            let r = unsafe { t.register(std::ptr::null_mut(), count_cb) };
            assert_eq!(r, Err(Error::TooManyOps));
            assert_code(r.unwrap_err().code(), Error::TooManyOps);
        });
        // The simulator (the loader) refuses it the same way and keeps the
        // ops it had.
        // SAFETY: the test's own table: sound functions, and every op it lists a generated launcher.
        assert_eq!(unsafe { s.register(t) }.err(), Some(Error::TooManyOps));
    }
    assert_eq!(*REGISTERED.lock().unwrap(), 0, "no op registered from a refused table");
    assert_untouched(&s, &out);
}

// ---- transfers ----

#[test]
fn set_memcpy_method_3_is_rejected_and_the_method_stays() {
    let _g = serial();
    let mut s = sim();
    let src = s.soc().platform().hbm_soc_base + (2 << 30);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { s.soc().write(src, &[7u8; 64]) }.unwrap();
    let core = s.core(4);
    core.enter(|| {
        neuroncustomop::ffi::init::neuron_runtime_init();
        assert_eq!(neuroncustomop::ffi::memcpy::init_dma_queue(), 0);
        assert_eq!(neuron_get_memcpy_method(), 2, "DMA is the default");
        for start in [0u32, 1, 2] {
            assert_eq!(neuron_set_memcpy_method(start), 0);
            for bad in [3u32, 4, 0x100, u32::MAX] {
                neuron_clear_error();
                assert_eq!(neuron_set_memcpy_method(bad), -1, "method {bad}");
                assert_code(neuron_last_error(), Error::BadMemcpyMethod);
                assert_eq!(neuron_get_memcpy_method(), start, "method unchanged after {bad}");
            }
            // The unchanged method still works.
            let mut buf = [0u8; 64];
            // SAFETY: buf holds 64 bytes.
            assert_eq!(unsafe { neuron_memcpy_from_soc(buf.as_mut_ptr().cast(), src, 64) }, 0);
            assert_eq!(buf, [7u8; 64]);
        }
    });
}

// ---- exhaustion: no HBM stack ----

#[test]
fn no_hbm_stack_aborts_with_the_report() {
    // The abort ends the process, so the scenario runs in a child.
    if std::env::var_os("NEURON_BAD_INPUT_ABORT_CHILD").is_some() {
        let mut s = sim();
        let a = fp32(&mut s, 8);
        // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
        unsafe { s.push_arg(ArgKind::Tensor, a) };
        let _out = output(&mut s, Dtype::Fp32, &[8]);
        *PLAN.lock().unwrap() = ONE_TENSOR;
        {
            let core = s.core(6);
            core.enter(|| {
                neuroncustomop::ffi::init::neuron_runtime_init();
                // Take the whole HBM heap, so no stack can be had.
                let mut a = 0u64;
                // SAFETY: valid out pointer.
                while unsafe { neuroncustomop::ffi::heap::neuron_hbm_allocate(64 << 10, &mut a, 0) } == 0 {}
            });
            // No room at all below SP: the launcher must switch.
            // SAFETY: the mock core's limit is a number its launcher reads;
            // on the host no stack is held to it.
            unsafe { neuroncustomop::hal::Hal::set_stack_limit(core.hal(), usize::MAX) };
        }
        // Core 6 is only reached with 7+ cores; run all 8.
        let _ = s.run("probe", 8);
        unreachable!("the stack switch must abort");
    }
    let _g = serial();
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "no_hbm_stack_aborts_with_the_report", "--nocapture", "--test-threads=1"])
        .env("NEURON_BAD_INPUT_ABORT_CHILD", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "the child must not succeed: {err}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(6), "SIGABRT, not a crash: {:?}\n{err}", out.status);
    }
    let want =
        format!("neuroncustomop: abort on core 6: error {} ({}): switch_stack_or_call_wrapper at ", Error::NoHbmStack.code(), Error::NoHbmStack.message());
    assert!(err.contains(&want), "stderr lacks `{want}`:\n{err}");
    assert!(!err.contains("unreachable"), "{err}");
    assert_eq!(message(Error::NoHbmStack.code()), "no HBM stack available for the stack switch");
}

// ---- multicore: every core refuses, none writes ----

#[test]
fn a_rejected_invocation_on_8_cores() {
    let _g = serial();
    let mut s = sim();
    let mut d = fp32(&mut s, 8 * 5 + 3);
    d.dtype = 11;
    // SAFETY: a tensor this simulator placed (an edited one is what the gate under test refuses before any element is read).
    unsafe { s.push_arg(ArgKind::Tensor, d) };
    let out = output(&mut s, Dtype::Fp32, &[8 * 5 + 3]);
    expect(&mut s, ONE_TENSOR, 8, Error::DtypeNotMarshallable, &out);
    assert_eq!(s.run("probe", 8).unwrap().cores.len(), 8);
}

// ---- the C++ path ----

#[test]
fn gates_through_the_cpp_path() {
    let exe = cpp::build("bad_input", &["relu_affine.cpp", "driver_bad_input.cpp"]);
    let out = cpp::run_ok(&exe, &[]);
    for e in [Error::DtypeNotMarshallable, Error::DtypeMismatch, Error::WrongArgKind, Error::NoMoreArgs, Error::TooManyArgs, Error::BadRank] {
        assert!(out.contains(&format!("refused: {} ({})", e.code(), e.message())), "{e}:\n{out}");
    }
}

// ---- docs/errors.md ----

const ERRORS_DOC: &str = "docs/errors.md";
const TABLE_HEAD: &str = "| code | name | message | what to do | when | shown by |\n|---:|---|---|---|---|---|\n";

/// The hand-written cells (when, shown by) of the committed table, by code.
fn doc_notes(doc: &str) -> std::collections::HashMap<i32, (String, String)> {
    let mut m = std::collections::HashMap::new();
    for line in doc.lines().filter(|l| l.starts_with("| ")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        // The hand-written cells are the last two (the "what to do" one
        // before them is generated).
        if let (6, Ok(code)) = (cells.len(), cells[0].parse::<i32>()) {
            m.insert(code, (cells[cells.len() - 2].to_owned(), cells[cells.len() - 1].to_owned()));
        }
    }
    m
}

/// The doc as it should be: the committed text up to the table, then one
/// row per `Error::ALL` entry with its code, name and message generated
/// and the hand-written cells kept (empty for a new code), then the
/// committed text after the table.
fn generated_doc(committed: &str) -> String {
    let notes = doc_notes(committed);
    let (before, after) = match committed.find(TABLE_HEAD) {
        Some(at) => {
            let rest = &committed[at + TABLE_HEAD.len()..];
            let end = rest.find("\n\n").map_or(rest.len(), |e| e + 1);
            (&committed[..at], &rest[end..])
        }
        None => ("# Error codes\n\n", "\n"),
    };
    let mut t = String::from(before);
    t.push_str(TABLE_HEAD);
    for e in Error::ALL {
        let (when, test) = notes.get(&e.code()).cloned().unwrap_or_default();
        let fix = neuroncustomop::host::remedy::what_to_do(*e);
        t.push_str(&format!("| {} | `{:?}` | {} | {} | {} | {} |\n", e.code(), e, e.message().replace('|', "\\|"), fix, when, test));
    }
    t.push_str(after);
    t
}

#[test]
fn errors_doc_is_current() {
    let path = cpp::repo().join(ERRORS_DOC);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    let want = generated_doc(&committed);
    if std::env::var_os("UPDATE_ERRORS_DOC").is_some() {
        std::fs::write(&path, &want).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == want,
        "{ERRORS_DOC} is stale: regenerate the code/name/message columns with \
         `UPDATE_ERRORS_DOC=1 cargo test -p neuroncustomop --test bad_input errors_doc`, \
         fill in `when` and `shown by` for new codes, and commit it"
    );
    let notes = doc_notes(&committed);
    let undocumented: Vec<String> = Error::ALL.iter().filter(|e| notes.get(&e.code()).is_none_or(|n| n.0.is_empty())).map(|e| format!("{e:?}")).collect();
    assert!(undocumented.is_empty(), "{ERRORS_DOC}: say when these happen: {undocumented:?}");
}
