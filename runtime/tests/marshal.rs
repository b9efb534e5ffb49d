//! Marshalling: every header and descriptor gate with its exact error,
//! every reader, the return path and cleanup.
// The mock maps memory with mmap/memfd, which Miri cannot run; the
// Miri-friendly tests of the same logic are in pure.rs.
#![cfg(not(miri))]

mod common;

use common::*;
use neuron_hal::dma::DmaDirection;
use neuron_hal::platform::Q7;
use neuron_hal_mock::{MockCore, MockSoc};
use neuron_runtime::marshal::invocation::{block_bytes, ABI_VERSION, MAGIC};
use neuron_runtime::marshal::{ArgKind, BlockSource, Dtype, InvocationBuilder, Location, RawTensorDesc, ScalarValue, TensorView};
use neuron_runtime::{CoreState, Error};
use std::sync::Arc;

type State = Box<CoreState<MockCore>>;

fn t(dtype: Dtype, storage: u64, shape: &[u64]) -> RawTensorDesc {
    RawTensorDesc::contiguous(Location::Hbm, dtype.code(), storage, shape).unwrap()
}

/// A bound invocation with the given arguments and output.
fn bound(args: &[(ArgKind, RawTensorDesc)], out: RawTensorDesc) -> (Arc<MockSoc>, State) {
    let (soc, mut s) = state(0);
    let mut b = InvocationBuilder::new();
    for (k, d) in args {
        b.arg(*k, *d).unwrap();
    }
    b.output(out);
    s.setup(true, BlockSource::Bytes(b.build())).unwrap();
    (soc, s)
}

fn default_out() -> RawTensorDesc {
    t(Dtype::Fp32, HBM + (512 << 20), &[4])
}

/// The error `next_tensor` gives for one tensor argument `d`.
fn tensor_gate(d: RawTensorDesc) -> Error {
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, d)], default_out());
    let e = s.next_tensor().unwrap_err();
    assert_eq!(s.args().cursor(), 0, "a failed reader does not advance");
    e
}

fn good() -> RawTensorDesc {
    t(Dtype::Fp32, HBM, &[2, 3])
}

// ---- descriptor gates ----

#[test]
fn a_good_tensor_marshals_with_contiguous_strides() {
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, t(Dtype::Int16, HBM + 64, &[2, 3, 4]))], default_out());
    let v: TensorView = s.next_tensor().unwrap();
    assert_eq!(v.shape(), &[2, 3, 4]);
    assert_eq!(&v.strides[..3], &[12, 4, 1]);
    assert_eq!(v.strides[3..], [0; 5]);
    assert_eq!((v.numel, v.nbytes, v.elem_size, v.dtype), (24, 48, 2, 6 - 2));
    assert_eq!(v.storage.addr, HBM + 64);
    assert_eq!(v.storage.ctx, s.translate_ctx());
    assert_eq!(s.next_tensor(), Err(Error::NoMoreArgs));
}

#[test]
fn wide_shapes_marshal() {
    let d = t(Dtype::Uint8, HBM, &[70_000, 2]);
    assert_eq!(d.shape_width, 1);
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, d)], default_out());
    let v = s.next_tensor().unwrap();
    assert_eq!(v.shape(), &[70_000, 2]);
    assert_eq!(v.numel, 140_000);
}

#[test]
fn sbuf_storage_is_an_offset_in_sbuf() {
    let mut d = good();
    d.location = 1;
    d.storage = 0x1000;
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, d)], default_out());
    assert_eq!(s.next_tensor().unwrap().storage.addr, Q7.sbuf_soc_base + 0x1000);
    d.storage = Q7.sbuf_size - 8;
    assert_eq!(tensor_gate(d), Error::AddressUnmapped);
}

#[test]
fn gate_reserved_bytes() {
    let mut d = good();
    d.reserved0[2] = 1;
    assert_eq!(tensor_gate(d), Error::ReservedNotZero);
    let mut d = good();
    d.reserved1 = 1 << 60;
    assert_eq!(tensor_gate(d), Error::ReservedNotZero);
}

#[test]
fn gate_shape_entry_past_num_dim_is_reserved() {
    let mut d = good();
    d.shape[4] = 1; // third u16 entry, num_dim = 2
    assert_eq!(tensor_gate(d), Error::ReservedNotZero);
    let mut d = t(Dtype::Fp32, HBM, &[100_000]);
    d.shape[15] = 1; // last byte of the fourth u32 entry
    assert_eq!(tensor_gate(d), Error::ReservedNotZero);
}

/// Found by the parse_invocation fuzz target: with a zero entry in use
/// and a non-zero entry past `num_dim`, the reserved gate (6a) must win
/// over the shape gate (6b), as docs/abi.md orders them.
#[test]
fn gate_reserved_shape_entry_is_checked_before_the_shape() {
    let mut d = good();
    d.shape[0] = 0; // first entry in use is 0 (BadShape) ...
    d.shape[1] = 0;
    d.shape[6] = 1; // ... and an entry past num_dim is set (ReservedNotZero)
    assert_eq!(tensor_gate(d), Error::ReservedNotZero);
}

#[test]
fn gate_unknown_codes() {
    let mut d = good();
    d.location = 2;
    assert_eq!(tensor_gate(d), Error::BadDescriptorCode);
    let mut d = good();
    d.shape_width = 2;
    assert_eq!(tensor_gate(d), Error::BadDescriptorCode);
    let mut d = good();
    d.shape_type = 7;
    assert_eq!(tensor_gate(d), Error::BadDescriptorCode);
}

#[test]
fn gate_out_of_line_shape() {
    let mut d = good();
    d.shape_type = 1;
    assert_eq!(tensor_gate(d), Error::OutOfLineShape);
}

#[test]
fn gate_dtype_not_marshallable_including_fp32r() {
    for code in [0u8, 1, 5, 9, 11, 13, 14, 15, 16, 255] {
        let mut d = good();
        d.dtype = code;
        d.buffer_bytes = 1 << 20;
        assert_eq!(tensor_gate(d), Error::DtypeNotMarshallable, "code {code}");
    }
    for code in [2u8, 3, 4, 6, 7, 8, 10, 12] {
        let d = RawTensorDesc::contiguous(Location::Hbm, code, HBM, &[3]).unwrap();
        let (_soc, mut s) = bound(&[(ArgKind::Tensor, d)], default_out());
        assert_eq!(s.next_tensor().unwrap().dtype, code);
    }
}

#[test]
fn gate_rank() {
    let mut d = good();
    d.num_dim = 0;
    d.shape = [0; 16];
    assert_eq!(tensor_gate(d), Error::BadRank);
    let mut d = good();
    d.num_dim = 9;
    assert_eq!(tensor_gate(d), Error::BadRank);
    let mut d = t(Dtype::Fp32, HBM, &[100_000]);
    d.num_dim = 5;
    assert_eq!(tensor_gate(d), Error::BadRank);
    // Eight narrow dimensions are fine.
    let d = t(Dtype::Uint8, HBM, &[1, 2, 1, 2, 1, 2, 1, 2]);
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, d)], default_out());
    assert_eq!(s.next_tensor().unwrap().numel, 16);
}

#[test]
fn gate_shape_zero_entry_and_overflow() {
    let mut d = good();
    d.shape[0] = 0;
    d.shape[1] = 0;
    assert_eq!(tensor_gate(d), Error::BadShape);
    let mut d = t(Dtype::Uint8, HBM, &[100_000]);
    d.num_dim = 4;
    d.shape = [0xff; 16];
    d.buffer_bytes = u64::MAX;
    assert_eq!(tensor_gate(d), Error::BadShape);
    // numel fits u64 but bytes exceed i64::MAX.
    let mut d = t(Dtype::Int64, HBM, &[100_000]);
    d.num_dim = 2;
    d.shape[..8].copy_from_slice(&[0xff; 8]);
    d.buffer_bytes = u64::MAX;
    assert_eq!(tensor_gate(d), Error::BadShape);
}

#[test]
fn gate_null_storage() {
    let mut d = good();
    d.storage = 0;
    assert_eq!(tensor_gate(d), Error::NullStorage);
}

#[test]
fn gate_buffer_bytes() {
    let mut d = good();
    d.buffer_bytes = 0;
    assert_eq!(tensor_gate(d), Error::BufferTooSmall);
    let mut d = good();
    d.buffer_bytes = 2 * 3 * 4 - 1;
    assert_eq!(tensor_gate(d), Error::BufferTooSmall);
    let mut d = good();
    d.buffer_bytes = 1 << 20;
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, d)], default_out());
    assert_eq!(s.next_tensor().unwrap().nbytes, 24, "larger buffers are fine");
}

#[test]
fn descriptor_wire_bytes_round_trip_at_the_documented_offsets() {
    let d = t(Dtype::Bfloat16, 0x0102_0304_0506_0708, &[3, 0x1234]);
    let b = d.to_bytes();
    assert_eq!(b[0..5], [0, 0, 10, 2, 0]);
    assert_eq!(b[8..16], 0x0102_0304_0506_0708u64.to_le_bytes());
    assert_eq!(b[16..20], [3, 0, 0x34, 0x12]);
    assert_eq!(b[32..40], (3u64 * 0x1234 * 2).to_le_bytes());
    assert_eq!(RawTensorDesc::from_bytes(&b), d);
}

// ---- header gates ----

fn header_gate(mutate: impl FnOnce(&mut Vec<u8>)) -> Error {
    let (_soc, mut s) = state(0);
    let mut b = InvocationBuilder::new();
    b.arg(ArgKind::Tensor, good()).unwrap();
    b.output(default_out());
    let mut bytes = b.build().to_vec();
    mutate(&mut bytes);
    let e = s.setup(true, BlockSource::Bytes(&bytes)).unwrap_err();
    assert!(!s.args().is_bound());
    assert_eq!(s.next_tensor(), Err(Error::NoInvocation));
    e
}

#[test]
fn header_layout() {
    let mut b = InvocationBuilder::new();
    b.arg(ArgKind::Tensor, good()).unwrap().arg(ArgKind::Double, good()).unwrap();
    let bytes = b.build().to_vec();
    assert_eq!(&bytes[0..4], b"NCOP");
    assert_eq!(u32::from_le_bytes(bytes[0..4].try_into().unwrap()), MAGIC);
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), ABI_VERSION);
    assert_eq!(bytes[6], 2);
    assert_eq!(bytes[8..18], [1, 6, 0, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(bytes.len(), 32 + 3 * 48);
    assert_eq!(u32::from_le_bytes(bytes[20..24].try_into().unwrap()) as usize, block_bytes(2));
    assert_eq!(bytes[32..80], good().to_bytes());
}

#[test]
fn header_gate_magic_and_version() {
    assert_eq!(header_gate(|b| b[0] = b'X'), Error::BadAbiVersion);
    assert_eq!(header_gate(|b| b[4] = 2), Error::BadAbiVersion);
}

#[test]
fn header_gate_too_many_args() {
    assert_eq!(header_gate(|b| b[6] = 11), Error::TooManyArgs);
    let mut b = InvocationBuilder::new();
    for _ in 0..10 {
        b.arg(ArgKind::Tensor, good()).unwrap();
    }
    assert_eq!(b.arg(ArgKind::Tensor, good()).err(), Some(Error::TooManyArgs));
    let (_soc, mut s) = state(0);
    s.setup(true, BlockSource::Bytes(b.build())).unwrap();
    for _ in 0..10 {
        s.next_tensor().unwrap();
    }
    assert_eq!(s.next_tensor(), Err(Error::NoMoreArgs));
}

#[test]
fn header_gate_kinds() {
    assert_eq!(header_gate(|b| b[8] = 7), Error::BadArgKind);
    assert_eq!(header_gate(|b| b[8] = 0), Error::BadArgKind);
    assert_eq!(header_gate(|b| b[9] = 1), Error::ReservedNotZero);
    // Found by the parse_invocation fuzz target: a bad kind below argc and
    // a non-zero slot past it report the reserved slot (docs/abi.md order).
    assert_eq!(
        header_gate(|b| {
            b[8] = 9;
            b[17] = 1;
        }),
        Error::ReservedNotZero
    );
}

#[test]
fn header_gate_reserved() {
    assert_eq!(header_gate(|b| b[7] = 1), Error::ReservedNotZero);
    assert_eq!(header_gate(|b| b[19] = 1), Error::ReservedNotZero);
    assert_eq!(header_gate(|b| b[31] = 1), Error::ReservedNotZero);
}

#[test]
fn header_gate_block_size() {
    assert_eq!(header_gate(|b| b[20] += 48), Error::BadBlockSize);
    assert_eq!(header_gate(|b| b.truncate(b.len() - 1)), Error::BadBlockSize);
    assert_eq!(header_gate(|b| b.truncate(20)), Error::BadBlockSize);
}

// ---- readers ----

fn scalar_at(soc: &MockSoc, addr: u64, dtype: Dtype, bytes: &[u8]) -> RawTensorDesc {
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(addr, bytes) }.unwrap();
    t(dtype, addr, &[1])
}

#[test]
fn every_reader_in_order() {
    let soc = MockSoc::new().unwrap();
    let mut s = state_on(&soc, 0);
    let a = HBM + 0x100;
    let mut b = InvocationBuilder::new();
    b.arg(ArgKind::Tensor, good()).unwrap();
    b.arg(ArgKind::Scalar, scalar_at(&soc, a, Dtype::Bfloat16, &0x4049u16.to_le_bytes())).unwrap(); // 3.140625
    b.arg(ArgKind::Int, scalar_at(&soc, a + 0x40, Dtype::Int32, &(-7i32).to_le_bytes())).unwrap();
    b.arg(ArgKind::Float, scalar_at(&soc, a + 0x80, Dtype::Fp32, &2.5f32.to_le_bytes())).unwrap();
    b.arg(ArgKind::LongLong, scalar_at(&soc, a + 0xc0, Dtype::Int64, &(-(1i64 << 40)).to_le_bytes())).unwrap();
    b.arg(ArgKind::Double, scalar_at(&soc, a + 0x100, Dtype::Fp16, &0x3e00u16.to_le_bytes())).unwrap(); // 1.5
    b.arg(ArgKind::LongLong, scalar_at(&soc, a + 0x140, Dtype::Int8, &[0xfe])).unwrap(); // int64_t -2
    b.arg(ArgKind::Int, scalar_at(&soc, a + 0x180, Dtype::Fp32, &(-3.75f32).to_le_bytes())).unwrap();
    b.arg(ArgKind::Scalar, scalar_at(&soc, a + 0x1c0, Dtype::Uint8, &[200])).unwrap();
    b.output(default_out());
    s.setup(true, BlockSource::Bytes(b.build())).unwrap();
    assert_eq!(s.args().argc(), 9);

    assert_eq!(s.next_int(), Err(Error::WrongArgKind));
    assert_eq!(s.next_tensor().unwrap().numel, 6);
    let sc = s.next_scalar().unwrap();
    assert_eq!((sc.dtype, sc.value), (Dtype::Bfloat16, ScalarValue::Float(3.140625)));
    assert_eq!(s.next_float(), Err(Error::WrongArgKind));
    assert_eq!(s.next_int(), Ok(-7));
    assert_eq!(s.next_float(), Ok(2.5));
    assert_eq!(s.next_long_long(), Ok(-(1i64 << 40)));
    assert_eq!(s.next_double(), Ok(1.5));
    assert_eq!(s.next_int64(), Ok(-2));
    assert_eq!(s.next_int(), Ok(-3), "float to int truncates toward zero");
    assert_eq!(s.next_scalar().unwrap().value, ScalarValue::Int(200));
    assert_eq!(s.args().cursor(), 9);
    for e in [s.next_tensor().err(), s.next_scalar().err(), s.next_int().err(), s.next_float().err(), s.next_long_long().err(), s.next_double().err()] {
        assert_eq!(e, Some(Error::NoMoreArgs));
    }
}

#[test]
fn wrong_kind_for_each_reader() {
    let (_soc, mut s) = bound(&[(ArgKind::Double, t(Dtype::Fp32, HBM, &[1]))], default_out());
    assert_eq!(s.next_tensor(), Err(Error::WrongArgKind));
    assert_eq!(s.next_scalar(), Err(Error::WrongArgKind));
    assert_eq!(s.next_int(), Err(Error::WrongArgKind));
    assert_eq!(s.next_float(), Err(Error::WrongArgKind));
    assert_eq!(s.next_long_long(), Err(Error::WrongArgKind));
    assert_eq!(s.args().cursor(), 0);
    assert!(s.next_double().is_ok());
}

#[test]
fn scalar_with_more_than_one_element() {
    for k in [ArgKind::Scalar, ArgKind::Int, ArgKind::Float, ArgKind::LongLong, ArgKind::Double] {
        let (_soc, mut s) = bound(&[(k, t(Dtype::Int32, HBM, &[1, 2]))], default_out());
        let e = match k {
            ArgKind::Scalar => s.next_scalar().err(),
            ArgKind::Int => s.next_int().err(),
            ArgKind::Float => s.next_float().err(),
            ArgKind::LongLong => s.next_long_long().err(),
            _ => s.next_double().err(),
        };
        assert_eq!(e, Some(Error::ScalarNotOneElement), "{k:?}");
    }
    // [1, 1, 1] is one element.
    let (_soc, mut s) = bound(&[(ArgKind::Scalar, t(Dtype::Int32, HBM, &[1, 1, 1]))], default_out());
    assert!(s.next_scalar().is_ok());
}

#[test]
fn value_arguments_run_the_descriptor_gates() {
    let mut d = t(Dtype::Int32, HBM, &[1]);
    d.storage = 0;
    let (_soc, mut s) = bound(&[(ArgKind::Int, d)], default_out());
    assert_eq!(s.next_int(), Err(Error::NullStorage));
    let mut d = t(Dtype::Int32, HBM, &[1]);
    d.dtype = 11;
    let (_soc, mut s) = bound(&[(ArgKind::Float, d)], default_out());
    assert_eq!(s.next_float(), Err(Error::DtypeNotMarshallable));
}

#[test]
fn readers_need_a_bound_invocation() {
    let (_soc, mut s) = state(0);
    assert_eq!(s.next_tensor(), Err(Error::NoInvocation));
    assert_eq!(s.next_int(), Err(Error::NoInvocation));
    assert_eq!(s.get_dst_tensor(), Err(Error::NoInvocation));
}

#[test]
fn setup_reads_the_block_from_soc_memory() {
    let soc = MockSoc::new().unwrap();
    let mut s = state_on(&soc, 0);
    let v = HBM + 0x2000;
    let mut b = InvocationBuilder::new();
    b.arg(ArgKind::Tensor, good()).unwrap();
    b.arg(ArgKind::Int, scalar_at(&soc, v, Dtype::Int32, &42i32.to_le_bytes())).unwrap();
    b.output(default_out());
    let block = HBM + 0x1_0000;
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(block, b.build()) }.unwrap();
    s.setup(true, BlockSource::Soc(block)).unwrap();
    assert!(s.dma().is_armed());
    assert_eq!(s.next_tensor().unwrap().numel, 6);
    assert_eq!(s.next_int(), Ok(42));
    // Through the loader's mailbox.
    assert_eq!(s.setup(true, BlockSource::Mailbox), Err(Error::NoInvocation), "empty mailbox");
    s.hal().set_invocation_block(block);
    s.setup(true, BlockSource::Mailbox).unwrap();
    assert_eq!(s.next_tensor().unwrap().numel, 6);
    // A bad header in SoC memory is refused the same way.
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(block + 6, &[11]) }.unwrap();
    assert_eq!(s.setup(true, BlockSource::Soc(block)), Err(Error::TooManyArgs));
}

// ---- return path ----

fn floats(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|f| f.to_le_bytes()).collect()
}

const OUT: u64 = HBM + (256 << 20);

#[test]
fn return_copies_the_output_bytes_per_method() {
    for m in 0..3 {
        let n = 3 * 5000;
        let out = t(Dtype::Fp32, OUT, &[3, 5000]);
        let (soc, mut s) = bound(&[(ArgKind::Tensor, t(Dtype::Fp32, HBM, &[3, 5000]))], out);
        s.set_memcpy_method(m).unwrap();
        let data = floats(&(0..n).map(|i| i as f32 * 0.5).collect::<Vec<_>>());
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(HBM, &data) }.unwrap();
        let sentinel = HBM + (256 << 20) + 4 * n as u64;
        // SAFETY: no core runs while the test writes its own memory.
        unsafe { soc.write(sentinel, &[0xAB; 16]) }.unwrap();
        let x = s.next_tensor().unwrap();
        s.return_tensor(&x).unwrap();
        assert!(soc_read(&soc, OUT, 4 * n as usize) == data, "method {m}");
        assert_eq!(soc_read(&soc, sentinel, 16), [0xAB; 16], "nothing past the output's bytes");
        assert!(s.args().returned());
        s.cleanup().unwrap();
        assert_eq!(s.dataram().stats().in_use, 0);
    }
}

#[test]
fn a_claimed_destination_skips_the_copy() {
    let out = t(Dtype::Fp32, OUT, &[4]);
    let (soc, mut s) = bound(&[(ArgKind::Tensor, t(Dtype::Fp32, HBM, &[4]))], out);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &floats(&[1.0, 2.0, 3.0, 4.0])) }.unwrap();
    let dst = s.get_dst_tensor().unwrap();
    assert_eq!(dst.storage.addr, OUT);
    assert!(s.args().dst_claimed());
    // The kernel writes in place.
    // SAFETY: test memory of the mock SoC, outside every heap.
    unsafe { s.write_soc(dst.storage.addr, &floats(&[9.0; 4])) }.unwrap();
    let writes = s.hal().counters().dma_bytes(DmaDirection::S2M);
    let x = s.next_tensor().unwrap();
    s.return_tensor(&x).unwrap();
    assert_eq!(s.hal().counters().dma_bytes(DmaDirection::S2M), writes, "no copy");
    assert_eq!(soc_read(&soc, OUT, 16), floats(&[9.0; 4]));
    // Even a dtype that would not match is not checked once claimed.
    let mut y = x;
    y.dtype = Dtype::Int32.code();
    assert_eq!(s.return_tensor(&y), Ok(()));
    s.cleanup().unwrap();
}

#[test]
fn a_rejected_return_writes_nothing() {
    let out = t(Dtype::Fp32, OUT, &[4]);
    let (soc, mut s) = bound(&[(ArgKind::Tensor, t(Dtype::Int32, HBM, &[4])), (ArgKind::Tensor, t(Dtype::Fp32, HBM + 64, &[2]))], out);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &[0x11; 64]) }.unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(OUT, &[0x77; 16]) }.unwrap();
    let x = s.next_tensor().unwrap();
    assert_eq!(s.return_tensor(&x), Err(Error::DtypeMismatch));
    let small = s.next_tensor().unwrap();
    assert_eq!(s.return_tensor(&small), Err(Error::ReturnShapeMismatch), "[2] returned for [4]");
    // Its shape as the output's, but a view of fewer bytes than it says.
    let mut short = small;
    short.sizes[0] = 4;
    assert_eq!(s.return_tensor(&short), Err(Error::BufferTooSmall));
    // The same element count in another shape is another shape.
    let mut wide = small;
    (wide.num_dim, wide.sizes[0], wide.sizes[1], wide.nbytes) = (2, 2, 2, 16);
    assert_eq!(s.return_tensor(&wide), Err(Error::ReturnShapeMismatch), "[2, 2] returned for [4]");
    let mut null = small;
    null.storage.addr = 0;
    null.nbytes = 16;
    assert_eq!(s.return_tensor(&null), Err(Error::NullStorage));
    assert_eq!(soc_read(&soc, OUT, 16), [0x77; 16]);
    assert_eq!(s.hal().counters().dma_bytes(DmaDirection::S2M), 0);
    assert_eq!(s.cleanup(), Err(Error::OutputNotWritten));
}

#[test]
fn a_bad_output_descriptor_is_refused_at_return_and_claim() {
    let mut out = t(Dtype::Fp32, OUT, &[4]);
    out.dtype = 11;
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, t(Dtype::Fp32, HBM, &[4]))], out);
    let x = s.next_tensor().unwrap();
    assert_eq!(s.return_tensor(&x), Err(Error::DtypeNotMarshallable));
    assert_eq!(s.get_dst_tensor(), Err(Error::DtypeNotMarshallable));
    assert!(!s.args().dst_claimed());
}

#[test]
fn cleanup_detects_an_unwritten_output_drains_and_fences() {
    let (_soc, mut s) = bound(&[], default_out());
    let fences = s.hal().counters().fences();
    assert_eq!(s.cleanup(), Err(Error::OutputNotWritten));
    assert!(s.hal().counters().fences() > fences);
    assert!(!s.args().is_bound(), "cleanup unbinds");
    assert_eq!(s.cleanup(), Ok(()), "nothing bound: nothing to report");
    // Without a return there is nothing to write.
    let mut b = InvocationBuilder::new();
    b.output(default_out());
    s.setup(false, BlockSource::Bytes(b.build())).unwrap();
    assert_eq!(s.cleanup(), Ok(()));
}

#[test]
fn cleanup_drains_outstanding_transfers() {
    let (soc, mut s) = bound(&[], default_out());
    let buf = s.dataram().allocate(256, 0).unwrap().as_ptr();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(HBM, &[5; 256]) }.unwrap();
    let dst = s.dma().local_soc(buf, 256).unwrap();
    // SAFETY: `dst` is the test's own data-RAM block, referenced by nothing
    // until the drain.
    unsafe { s.dma_submit(DmaDirection::M2S, dst, HBM, 256) }.unwrap();
    s.get_dst_tensor().unwrap();
    assert_eq!(s.hal().dma_pending(DmaDirection::M2S), 1);
    s.cleanup().unwrap();
    assert_eq!(s.hal().dma_pending(DmaDirection::M2S), 0);
    // SAFETY: buf is a live 256-byte block.
    assert_eq!(unsafe { std::slice::from_raw_parts(buf, 256) }, [5; 256]);
}

#[test]
fn setup_rebinds_and_clears_the_flags() {
    let (_soc, mut s) = bound(&[(ArgKind::Tensor, good())], default_out());
    s.get_dst_tensor().unwrap();
    s.next_tensor().unwrap();
    let mut b = InvocationBuilder::new();
    b.arg(ArgKind::Tensor, good()).unwrap();
    b.output(default_out());
    s.setup(true, BlockSource::Bytes(b.build())).unwrap();
    assert!(!s.args().dst_claimed());
    assert_eq!(s.args().cursor(), 0);
}
