//! The bulk stream read (`ReadStream::read_into`, the runtime's
//! `stream_read_into`): contents, partial chunks, the tensor's end, mixing
//! with element reads, the unbuffered path, and bad input as errors.

use neuron_hal_mock::MockSoc;
use neuroncustomop::ffi::translate::neuron_translate_ctx;
use neuroncustomop::hal::platform::Q7;
use neuroncustomop::host::SimCore;
use neuroncustomop::kernel::{Dtype, Error, Tensor};
use neuroncustomop::runtime::access::StreamMode;
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc, TensorDesc};
use neuroncustomop::runtime::marshal::tensor::TensorView;

/// SoC address of the test tensor (a dynamic window).
const DATA: u64 = Q7.hbm_soc_base + (1 << 30);
/// Elements: two whole 4 KiB buffers of f32 and a partial third.
const N: usize = 2 * 1024 + 37;

fn value(i: usize) -> f32 {
    i as f32 * 0.5 - 7.0
}

/// A simulated core and an f32 tensor of `N` known elements at `DATA`.
fn setup() -> (SimCore, TensorView) {
    let soc = MockSoc::new().expect("mock SoC");
    let mut core = SimCore::new(soc.core(0).expect("core 0"));
    core.state().init_prologue();
    core.state().init_dma_queue().expect("DMA arms");
    let bytes: Vec<u8> = (0..N).flat_map(|i| value(i).to_le_bytes()).collect();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { core.state().hal().soc().write(DATA, &bytes) }.expect("HBM write");
    let ctx = core.enter(|| neuron_translate_ctx()).cast();
    let desc = RawTensorDesc::contiguous(Location::Hbm, Dtype::Fp32.code(), DATA, &[N as u64]).expect("shape");
    let desc = TensorDesc::parse(&desc.to_bytes(), &Q7).expect("valid");
    (core, TensorView::from_desc(&desc, ctx))
}

fn expected(r: std::ops::Range<usize>) -> Vec<f32> {
    r.map(value).collect()
}

#[test]
fn the_whole_tensor_in_one_call() {
    let (mut core, view) = setup();
    core.enter(|| {
        // SAFETY: the test tensor in the mock SoC's HBM, outside every heap.
        let t = unsafe { Tensor::from_view(view) };
        let mut st = t.read_stream_accessor::<f32>().unwrap();
        assert!(st.is_buffered());
        // Room for more than is left: the count says how many, the rest
        // of the slice is untouched.
        let mut out = vec![f32::NAN; N + 5];
        assert_eq!(st.read_into(&mut out).unwrap(), N);
        assert_eq!(&out[..N], &expected(0..N)[..]);
        assert!(out[N..].iter().all(|v| v.is_nan()));
        assert_eq!(st.read_into(&mut out[..1]), Err(Error::StreamEnd));
        assert_eq!(st.read(), Err(Error::StreamEnd));
        // An empty slice reads nothing, even at the end.
        assert_eq!(st.read_into(&mut []).unwrap(), 0);
        st.close().unwrap();
    });
}

#[test]
fn chunks_mixed_with_element_reads_end_with_a_partial_chunk() {
    let (mut core, view) = setup();
    core.enter(|| {
        // SAFETY: the test tensor in the mock SoC's HBM, outside every heap.
        let t = unsafe { Tensor::from_view(view) };
        let mut st = t.read_stream_accessor::<f32>().unwrap();
        let mut got = Vec::new();
        // Three element reads fill the buffer; the bulk read starts inside it.
        for _ in 0..3 {
            got.push(st.read().unwrap());
        }
        let mut chunk = vec![0f32; 1000];
        let mut counts = Vec::new();
        loop {
            match st.read_into(&mut chunk) {
                Ok(k) => {
                    counts.push(k);
                    got.extend_from_slice(&chunk[..k]);
                    // An element read between chunks refills at the new position.
                    match st.read() {
                        Ok(v) => got.push(v),
                        Err(e) => {
                            assert_eq!(e, Error::StreamEnd);
                            break;
                        }
                    }
                }
                Err(e) => {
                    assert_eq!(e, Error::StreamEnd);
                    break;
                }
            }
        }
        // 3 + (1000 + 1) + (1000 + 1) = 2005 read, 80 left: a partial chunk.
        assert_eq!(counts, vec![1000, 1000, N - 2005]);
        assert_eq!(got, expected(0..N));
        st.close().unwrap();
    });
}

/// Bulk reads with nothing buffered copy from the tensor's window without
/// entering the core while one record maps the whole tensor; when the
/// window moves (other regions translated in between, the record
/// reprogrammed) the next read sees it and goes through the core, which
/// maps the tensor again. Every read is right and counted as one
/// translate, as the core's own copy counts it: a hit while mapped, a
/// miss (the install) after the window moved.
#[test]
fn bulk_reads_stay_right_when_the_window_moves() {
    let (mut core, view) = setup();
    let counts = |core: &mut SimCore| {
        let s = core.state().translator().stats();
        (s.hits.iter().sum::<u64>(), s.misses.iter().sum::<u64>())
    };
    let c0 = counts(&mut core);
    let mut out = vec![0f32; N];
    core.enter(|| {
        // SAFETY: the test tensor in the mock SoC's HBM, outside every heap.
        let t = unsafe { Tensor::from_view(view) };
        let mut st = t.read_stream_accessor::<f32>().unwrap();
        let mut pos = 0;
        let mut read = |st: &mut neuroncustomop::kernel::ReadStream<f32>, k: usize| {
            assert_eq!(st.read_into(&mut out[pos..pos + k]).unwrap(), k);
            pos += k;
        };
        // The first maps the window (a miss), the next two copy from it.
        read(&mut st, 100);
        read(&mut st, 200);
        read(&mut st, 300);
        // Every dynamic window reprogrammed for other regions (8 misses).
        for k in 1..=8u64 {
            let p = neuroncustomop::runtime::Q7PtrType { addr: DATA + k * (16 << 20), ctx: view.storage.ctx };
            neuroncustomop::kernel::translate(p).unwrap();
        }
        // Noticed: through the core, which maps the tensor again (a
        // miss); then from the window again.
        read(&mut st, 400);
        read(&mut st, N - 1000);
        assert_eq!(st.read_into(&mut [0f32; 1]), Err(Error::StreamEnd));
        st.close().unwrap();
    });
    assert_eq!(out, expected(0..N));
    let c1 = counts(&mut core);
    assert_eq!((c1.0 - c0.0, c1.1 - c0.1), (3, 1 + 8 + 1), "one translate per bulk read, as the core's copy counts");
}

#[test]
fn unbuffered_stream_reads_in_bulk_too() {
    let (mut core, view) = setup();
    core.enter(|| {
        // SAFETY: the test tensor in the mock SoC's HBM, outside every heap.
        let t = unsafe { Tensor::from_view(view) };
        // Take every pool buffer first.
        let mut held = Vec::new();
        loop {
            let st = t.read_stream_accessor::<f32>().unwrap();
            if !st.is_buffered() {
                held.push(st);
                break;
            }
            held.push(st);
        }
        let st = held.last_mut().unwrap();
        assert!(!st.is_buffered());
        let mut out = vec![0f32; N];
        assert_eq!(st.read_into(&mut out[..10]).unwrap(), 10);
        assert_eq!(st.read().unwrap(), value(10));
        assert_eq!(st.read_into(&mut out[11..]).unwrap(), N - 11);
        assert_eq!(&out[..10], &expected(0..10)[..]);
        assert_eq!(&out[11..], &expected(11..N)[..]);
        for mut s in held {
            s.close().unwrap();
        }
    });
}

/// The state is a C struct the caller owns: a position before the
/// buffer's first element (a corrupted `buf_start`) is not taken for a
/// buffered one (the index into the buffer would wrap); the read refills
/// at the position and returns the right element, element by element and
/// in bulk.
#[test]
fn a_position_before_the_buffer_refills() {
    let (mut core, view) = setup();
    let s = core.state();
    let mut st = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Read).unwrap();
    let mut one = [0u8; 4];
    s.stream_read(&mut st, &mut one).unwrap();
    assert_eq!((st.buf_start, st.buf_len), (0, 1024));
    st.buf_start = 10;
    st.pos = 3;
    s.stream_read(&mut st, &mut one).unwrap();
    assert_eq!(one, value(3).to_le_bytes());
    assert_eq!((st.buf_start, st.pos), (3, 4));
    st.buf_start = 500;
    let mut two = [0u8; 8];
    assert_eq!(s.stream_read_into(&mut st, &mut two), Ok(2));
    assert_eq!(two[..], [value(4).to_le_bytes(), value(5).to_le_bytes()].concat()[..]);
    // SAFETY: the stream was opened on one of the test's own tensors.
    unsafe { s.stream_close(&mut st) }.unwrap();
}

#[test]
fn bad_input_is_an_error() {
    let (mut core, view) = setup();
    // Wrong element type: refused at open.
    core.enter(|| {
        // SAFETY: the test tensor in the mock SoC's HBM, outside every heap.
        let t = unsafe { Tensor::from_view(view) };
        assert_eq!(t.read_stream_accessor::<i32>().err(), Some(Error::ElementTypeMismatch));
        // A closed stream refuses, and leaves the slice alone.
        let mut st = t.read_stream_accessor::<f32>().unwrap();
        st.close().unwrap();
        let mut out = [1f32; 4];
        assert_eq!(st.read_into(&mut out), Err(Error::StreamClosed));
        assert_eq!(out, [1f32; 4]);
    });
    // Through the runtime: a length that is not whole elements, a write
    // stream, a closed stream.
    let s = core.state();
    let mut st = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Read).unwrap();
    let mut out = [0u8; 10];
    assert_eq!(s.stream_read_into(&mut st, &mut out), Err(Error::ElementTypeMismatch));
    assert_eq!(st.pos, 0);
    assert_eq!(s.stream_read_into(&mut st, &mut out[..8]), Ok(2));
    assert_eq!(out[..8], [value(0).to_le_bytes(), value(1).to_le_bytes()].concat()[..]);
    // SAFETY: the stream was opened on one of the test's own tensors.
    unsafe { s.stream_close(&mut st) }.unwrap();
    assert_eq!(s.stream_read_into(&mut st, &mut out[..8]), Err(Error::StreamClosed));
    let mut w = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Write).unwrap();
    assert_eq!(s.stream_read_into(&mut w, &mut out[..8]), Err(Error::StreamClosed));
    // SAFETY: the stream was opened on one of the test's own tensors.
    unsafe { s.stream_close(&mut w) }.unwrap();
    // The state is the caller's (a C struct): an element size it broke
    // after the open is refused, whatever the slice's length; so is one
    // that is no dtype's at the open.
    let mut st = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Read).unwrap();
    let mut out = [0u8; 48];
    for bad in [0u8, 3, 6, 12, 255] {
        st.elem_size = bad;
        assert_eq!(s.stream_read_into(&mut st, &mut out), Err(Error::ElementTypeMismatch), "elem_size {bad}");
        assert_eq!(st.pos, 0);
    }
    st.elem_size = 4;
    // SAFETY: the stream was opened on one of the test's own tensors.
    unsafe { s.stream_close(&mut st) }.unwrap();
    let mut odd = view;
    odd.elem_size = 3;
    assert_eq!(s.stream_open(&odd, Dtype::Fp32.code(), 3, StreamMode::Read), Err(Error::ElementTypeMismatch));
}

#[test]
fn a_closed_stream_drops_without_entering_the_core() {
    let (mut core, view) = setup();
    let st = core.enter(|| {
        // SAFETY: the test tensor in the mock SoC's HBM, outside every heap.
        let mut st = unsafe { Tensor::from_view(view) }.read_stream_accessor::<f32>().unwrap();
        st.close().unwrap();
        st
    });
    // No core is bound here: a drop that entered one would record NoCore
    // as this thread's error. The explicit close did all there was to do.
    assert_eq!(neuroncustomop::ffi::error::neuron_last_error(), 0);
    drop(st);
    assert_eq!(neuroncustomop::ffi::error::neuron_last_error(), 0);
}

/// The C export: closing a closed stream returns 0 without a core (the
/// C++ destructor after an explicit `close()`); an open one and null still
/// need the core, and null is refused.
#[test]
fn the_c_close_of_a_closed_stream_needs_no_core() {
    use neuroncustomop::ffi::stream::{neuron_stream_close, neuron_stream_open};
    let (mut core, view) = setup();
    let mut st = neuroncustomop::ffi::stream::NeuronStream::default();
    // SAFETY: `st` and `view` are live locals.
    let opened = core.enter(|| unsafe { neuron_stream_open(&mut st, &view, 0, Dtype::Fp32.code(), 4) });
    assert_eq!(opened, 0);
    // Open, no core bound: refused (NoCore), the stream stays open.
    // SAFETY: `st` is a live state from `neuron_stream_open`.
    assert_eq!(unsafe { neuron_stream_close(&mut st) }, -1);
    assert_eq!(st.open, 1);
    // SAFETY: as above.
    assert_eq!(core.enter(|| unsafe { neuron_stream_close(&mut st) }), 0);
    assert_eq!(st.open, 0);
    // SAFETY: as above.
    assert_eq!(unsafe { neuron_stream_close(&mut st) }, 0, "closed: no core needed");
    // SAFETY: null is refused by the export, never dereferenced.
    assert_eq!(core.enter(|| unsafe { neuron_stream_close(core::ptr::null_mut()) }), -1);
}

/// The state is the caller's memory (a C struct): a slot, capacity, count
/// or element size broken after the open is refused with
/// `StreamCorrupted` by every call that would touch the buffer, before
/// any access (none reads or writes past the buffer); the close still
/// gives the slot back and deregisters; the same state, repaired, reads
/// on.
#[test]
fn a_corrupted_stream_state_is_refused_before_any_buffer_access() {
    let (mut core, view) = setup();
    let s = core.state();
    let mut st = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Read).unwrap();
    assert!(st.is_buffered());
    let mut one = [0u8; 4];
    s.stream_read(&mut st, &mut one).unwrap();
    assert_eq!(one, value(0).to_le_bytes());
    let good = st;
    type Edit = fn(&mut neuroncustomop::runtime::access::StreamState);
    let edits: [(&str, Edit); 8] = [
        ("a slot past the pool", |s| s.slot = 9),
        ("a slot of the pool nobody took", |s| s.slot = 3),
        ("a negative slot other than UNBUFFERED", |s| s.slot = -5),
        ("a capacity past the buffer", |s| s.cap = 1 << 20),
        ("a capacity below the buffer's", |s| s.cap = 16),
        ("more buffered than the buffer holds", |s| s.buf_len = s.cap + 1),
        ("a count far past the buffer", |s| s.buf_len = u32::MAX),
        ("an element size that is no power of two", |s| s.elem_size = 3),
    ];
    for (what, edit) in edits {
        let mut bad = good;
        edit(&mut bad);
        let mut out = [0xAAu8; 4];
        let mut seen = bad;
        // The element read checks the length against the state's element
        // size first; give it the one it claims when that is a size.
        let es = (bad.elem_size as usize).clamp(1, 4);
        assert_eq!(s.stream_read(&mut seen, &mut out[..es]), Err(Error::StreamCorrupted), "stream_read: {what}");
        assert_eq!(seen, bad, "stream_read moved the state: {what}");
        let mut many = [0xAAu8; 64];
        let want = if bad.elem_size == 3 { Error::ElementTypeMismatch } else { Error::StreamCorrupted };
        assert_eq!(s.stream_read_into(&mut seen, &mut many), Err(want), "stream_read_into: {what}");
        assert_eq!(seen, bad, "stream_read_into moved the state: {what}");
        assert!(out.iter().chain(&many).all(|b| *b == 0xAA), "written to the caller's memory: {what}");
    }
    // Repaired, the same stream reads on from where it was.
    st = good;
    s.stream_read(&mut st, &mut one).unwrap();
    assert_eq!(one, value(1).to_le_bytes());
    // A close with a broken capacity still gives the slot back and
    // deregisters (a write stream may open on the tensor afterwards).
    st.cap = 1 << 20;
    // SAFETY: the stream was opened on one of the test's own tensors.
    assert_eq!(unsafe { s.stream_close(&mut st) }, Ok(()), "a read stream's close flushes nothing, so needs no buffer");
    assert_eq!(st.open, 0);

    // Write streams: a full buffer is flushed at once, so a pending count
    // at the capacity is broken too; the flush at close refuses it and
    // still releases.
    let after = DATA + (N * 4) as u64;
    let guard_before = {
        let mut g = vec![0u8; 8192];
        s.hal().soc().read(after, &mut g).unwrap();
        g
    };
    let mut w = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Write).unwrap();
    let slot = w.slot;
    w.buf_len = w.cap;
    // SAFETY: the state is broken on purpose, as a C kernel could: what is
    // checked is that the runtime's own checks keep every write inside the
    // test's tensor in its simulated SoC (the guard bytes after it).
    assert_eq!(unsafe { s.stream_write(&mut w, &1f32.to_le_bytes()) }, Err(Error::StreamCorrupted));
    w.buf_len = 2 * w.cap;
    // SAFETY: as above: broken on purpose, guarded.
    assert_eq!(unsafe { s.stream_close(&mut w) }, Err(Error::StreamCorrupted));
    assert_eq!((w.open, w.slot), (0, -1));
    let mut g = vec![0u8; 8192];
    s.hal().soc().read(after, &mut g).unwrap();
    assert_eq!(g, guard_before, "nothing was flushed past the tensor");
    // The slot came back and the tensor is free of accessors: a new
    // write stream takes the same buffer.
    let mut w = s.stream_open(&view, Dtype::Fp32.code(), 4, StreamMode::Write).unwrap();
    assert_eq!(w.slot, slot);
    // SAFETY: the stream was opened on one of the test's own tensors.
    unsafe { s.stream_close(&mut w) }.unwrap();
}

/// Through the C export: a broken slot is error 95 with its message, and
/// the output is left alone.
#[test]
fn the_c_export_refuses_a_corrupted_state() {
    use neuroncustomop::ffi::error::neuron_last_error;
    use neuroncustomop::ffi::stream::{neuron_stream_close, neuron_stream_open, neuron_stream_read};
    let (mut core, view) = setup();
    let mut st = neuroncustomop::ffi::stream::NeuronStream::default();
    core.enter(|| {
        // SAFETY: `st` and `view` are live locals.
        assert_eq!(unsafe { neuron_stream_open(&mut st, &view, 0, Dtype::Fp32.code(), 4) }, 0);
        let slot = st.slot;
        st.slot = 12;
        let mut v = -1f32;
        // SAFETY: `st` is a live state (broken on purpose), `v` 4 bytes.
        assert_eq!(unsafe { neuron_stream_read(&mut st, (&raw mut v).cast(), 4) }, -1);
        assert_eq!(neuron_last_error(), Error::StreamCorrupted.code());
        assert_eq!(Error::StreamCorrupted.code(), 95);
        assert_eq!(v, -1f32);
        st.slot = slot;
        // SAFETY: as above, repaired.
        assert_eq!(unsafe { neuron_stream_read(&mut st, (&raw mut v).cast(), 4) }, 0);
        assert_eq!(v, value(0));
        // SAFETY: as above.
        assert_eq!(unsafe { neuron_stream_close(&mut st) }, 0);
    });
}

/// Whatever a caller's state holds, a stream call returns (no panic, no
/// overflow in a debug build) and writes nothing past the tensor: the
/// 8 KiB after it keep their bytes. Each case opens a stream on a fresh
/// core, moves it a little, breaks any of its fields (the tensor's own
/// address and size aside: those a C caller may point anywhere, as it may
/// any pointer), then reads, bulk-reads or writes, and closes it.
#[test]
fn any_caller_state_is_an_error_or_a_call_within_the_tensor() {
    use neuroncustomop::runtime::access::StreamState;
    use proptest::prelude::*;
    use proptest::test_runner::{Config, TestRunner};
    // Each field broken in a third of the cases, to values at and around
    // its limits (the buffer's 1024 f32, the tensor's N), so that states
    // broken in one field only are common.
    let n = N as u64;
    let index = || prop_oneof![Just(0u64), Just(u64::MAX), n - 1100..n + 3000, any::<u64>()];
    fn broken<T: std::fmt::Debug>(p: BoxedStrategy<T>) -> impl Strategy<Value = Option<T>> {
        proptest::option::weighted(1.0 / 3.0, p)
    }
    let edits = (
        broken(prop_oneof![Just(-1i32), Just(-5), 0..20i32, any::<i32>()].boxed()),
        broken(prop_oneof![Just(0u32), Just(1023), Just(1025), any::<u32>()].boxed()),
        broken(prop_oneof![Just(0u32), 1..1024u32, Just(1024), Just(1025), any::<u32>()].boxed()),
        broken(index().boxed()),
        broken(index().boxed()),
        broken(prop_oneof![Just(0u64), 0..n].boxed()),
        broken(any::<u8>().boxed()),
    );
    let mut runner = TestRunner::new(Config { cases: 1024, failure_persistence: None, ..Config::default() });
    let r = runner.run(&(any::<bool>(), 0..3usize, edits), |(write, moves, (slot, cap, buf_len, buf_start, pos, numel, elem_size))| {
        let (mut core, view) = setup();
        let s = core.state();
        let after = DATA + (N * 4) as u64;
        let mut guard = vec![0u8; 8192];
        s.hal().soc().read(after, &mut guard).unwrap();
        let mode = if write { StreamMode::Write } else { StreamMode::Read };
        let mut st: StreamState = s.stream_open(&view, Dtype::Fp32.code(), 4, mode).unwrap();
        for _ in 0..moves {
            if write {
                // SAFETY: the stream was opened on one of the test's own tensors.
                unsafe { s.stream_write(&mut st, &1f32.to_le_bytes()) }.unwrap();
            } else {
                s.stream_read(&mut st, &mut [0u8; 4]).unwrap();
            }
        }
        st.slot = slot.unwrap_or(st.slot);
        st.cap = cap.unwrap_or(st.cap);
        st.buf_len = buf_len.unwrap_or(st.buf_len);
        st.buf_start = buf_start.unwrap_or(st.buf_start);
        st.pos = pos.unwrap_or(st.pos);
        st.numel = numel.unwrap_or(st.numel);
        st.elem_size = elem_size.unwrap_or(st.elem_size);
        let es = (st.elem_size as usize).clamp(1, 8);
        let mut one = [0u8; 8];
        if write {
            // SAFETY: the state is broken on purpose, as a C kernel could:
            // the property is that the runtime's checks keep every write
            // inside the test's tensor in its simulated SoC (the guard).
            let _ = unsafe { s.stream_write(&mut st, &one[..es]) };
        } else {
            let _ = s.stream_read(&mut st, &mut one[..es]);
            let _ = s.stream_read_into(&mut st, &mut [0u8; 256]);
        }
        // SAFETY: as the write above: broken on purpose, guarded.
        let _ = unsafe { s.stream_close(&mut st) };
        prop_assert_eq!(st.open, 0);
        let mut now = vec![0u8; 8192];
        s.hal().soc().read(after, &mut now).unwrap();
        prop_assert!(now == guard, "written past the tensor");
        Ok(())
    });
    r.unwrap();
}
