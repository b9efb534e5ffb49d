//! The pure logic on a fake core (`neuron_hal_mock::FakeHal`: plain heap
//! memory, no mmap), so that it runs under Miri as well as natively:
//! translation arithmetic and eviction, the init prologue and the three
//! heaps of a `CoreState`, the invocation header and descriptor gates,
//! and binding a block and reading tensors. `cargo xtask miri` runs this
//! file (and the unit tests and heap_model.rs) under Miri; the mock-based
//! tests of the other files are compiled out there.

use neuron_hal::platform::{DYNAMIC_WINDOWS, DYNAMIC_WINDOW_SIZE, Q7};
use neuron_hal::Hal;
use neuron_hal_mock::FakeHal;
use neuron_runtime::marshal::descriptor::{Location, RawTensorDesc, TensorDesc};
use neuron_runtime::marshal::dtype::Dtype;
use neuron_runtime::marshal::invocation::{ArgKind, InvocationBuilder, InvocationHeader, HEADER_BYTES};
use neuron_runtime::marshal::BlockSource;
use neuron_runtime::translate::{SBUF_RECORD, SCRATCH_RECORD};
use neuron_runtime::{CoreState, Error};

const T: u64 = Q7.hbm_soc_base + (1 << 30);

fn core(cpu: u32) -> Box<CoreState<FakeHal>> {
    let mut s = Box::new(CoreState::new(FakeHal::new(cpu)));
    s.init_prologue();
    s
}

#[test]
fn translate_hits_misses_round_robin_and_refusals() {
    let mut s = core(3);
    // Pinned windows hit without programming.
    let p = s.translate(Q7.sbuf_soc_base + 0x40).unwrap();
    assert_eq!(p as usize, s.hal().nx_ptr(Q7.sbuf_window_nx + 0x40) as usize);
    assert_eq!(s.translator().record_of(Q7.scratch_soc_base + 8), Some(SCRATCH_RECORD));
    assert_eq!(s.translator().record_of(Q7.sbuf_soc_base), Some(SBUF_RECORD));
    assert_eq!(s.hal().window_programs(), 0);
    // Four regions: three misses fill the windows, the fourth evicts the first.
    for r in 0..4u64 {
        let a = T + r * DYNAMIC_WINDOW_SIZE + 0x123;
        let p = s.translate(a).unwrap();
        let w = (r as usize) % DYNAMIC_WINDOWS;
        assert_eq!(s.hal().window_register(w), T + r * DYNAMIC_WINDOW_SIZE);
        assert_eq!(p as usize, s.hal().nx_ptr(Q7.dynamic_windows[w].nx_base) as usize + 0x123);
    }
    assert_eq!(s.hal().window_programs(), 4);
    // Hits are pure arithmetic.
    let before = s.hal().fences();
    let p = s.translate(T + 3 * DYNAMIC_WINDOW_SIZE + 0xFFF).unwrap();
    assert_eq!(p as usize, s.hal().nx_ptr(Q7.dynamic_windows[0].nx_base) as usize + 0xFFF);
    assert_eq!((s.hal().window_programs(), s.hal().fences()), (4, before));
    // Refused: outside HBM, above 2^57, past SBUF's end in its window.
    let end = Q7.hbm_soc_base + Q7.hbm_size;
    for bad in [0, Q7.hbm_soc_base - 1, end, 1 << 57, u64::MAX, Q7.sbuf_soc_base + Q7.sbuf_size] {
        assert_eq!(s.translate(bad), Err(Error::AddressUnmapped), "{bad:#x}");
    }
    assert_eq!(s.hal().window_programs(), 4);
}

/// The mapping generation the accessors cache pointers under: it changes
/// at init and with every install, never on a hit or a refusal.
#[test]
fn the_generation_changes_with_every_install_only() {
    let mut s = Box::new(CoreState::new(FakeHal::new(2)));
    let g0 = s.translator().generation();
    assert_ne!(g0, 0, "0 is no generation");
    s.init_prologue();
    let g1 = s.translator().generation();
    assert_ne!(g1, g0, "init maps the pinned windows");
    s.init_prologue();
    assert_eq!(s.translator().generation(), g1, "the prologue maps them once");
    s.translate(Q7.scratch_soc_base + 8).unwrap();
    assert_eq!(s.translator().generation(), g1, "a pinned hit");
    s.translate(T).unwrap();
    let g2 = s.translator().generation();
    assert_ne!(g2, g1, "a miss installs");
    s.translate(T + 64).unwrap();
    assert_eq!(s.translate(u64::MAX), Err(Error::AddressUnmapped));
    assert_eq!(s.translator().generation(), g2, "a hit and a refusal");
    // Every install a new value (on the host drawn from one process-wide
    // counter, so other cores' installs may come in between).
    let mut seen = vec![g0, g1, g2];
    for r in 1..4u64 {
        s.translate(T + r * DYNAMIC_WINDOW_SIZE).unwrap();
        let g = s.translator().generation();
        assert!(!seen.contains(&g), "{g} again");
        seen.push(g);
    }
    // A second translator never shares one with the first.
    let mut t = Box::new(CoreState::new(FakeHal::new(3)));
    t.init_prologue();
    t.translate(T).unwrap();
    assert!(!seen.contains(&t.translator().generation()) && t.translator().generation() != 1);
}

#[test]
fn prologue_and_the_three_heaps() {
    let mut s = core(5);
    let a = s.hbm().allocate(1000, 0).unwrap();
    assert_eq!(a % 64, 0);
    assert_eq!(s.hbm().allocate(1 << 30, 0), Err(Error::OutOfMemory));
    // SAFETY: `a` is used no further (the second free is refused).
    unsafe {
        s.hbm().free(a).unwrap();
        assert_eq!(s.hbm().free(a), Err(Error::DoubleFree));
    }

    let t = s.dataram().allocate(4000, 256).unwrap();
    // SAFETY: a live 4000-byte block in the fake's data RAM.
    unsafe { t.as_ptr().write_bytes(0xAB, 4000) };
    // SAFETY: `t` is used no further (the foreign and second frees are
    // refused).
    unsafe {
        assert_eq!(s.dataram().free(t.as_ptr().wrapping_add(64)), Err(Error::ForeignPointer));
        s.dataram().free(t.as_ptr()).unwrap();
        assert_eq!(s.dataram().free(t.as_ptr()), Err(Error::DoubleFree));
    }
    assert_eq!(s.dataram().allocate(1 << 20, 0), Err(Error::OutOfMemory));

    let m = s.libc().malloc(300).unwrap();
    // SAFETY: a live 300-byte block.
    unsafe { m.as_ptr().write_bytes(7, 300) };
    // SAFETY: `m` is a live block of this heap, its header untouched.
    let r = unsafe { s.libc().realloc(m.as_ptr(), 5000) }.unwrap().unwrap();
    // SAFETY: the realloc kept the first 300 bytes.
    assert_eq!(unsafe { r.as_ptr().add(299).read() }, 7);
    // SAFETY: a double free, header untouched (refused).
    assert_eq!(unsafe { s.libc().free(m.as_ptr()) }, Err(Error::DoubleFree));
    // SAFETY: a live block of this heap.
    unsafe { s.libc().free(r.as_ptr()) }.unwrap();
    assert_eq!(s.libc().stats().in_use, 0);
}

fn t(dtype: Dtype, storage: u64, shape: &[u64]) -> RawTensorDesc {
    RawTensorDesc::contiguous(Location::Hbm, dtype.code(), storage, shape).unwrap()
}

#[test]
fn descriptor_gates() {
    let p = Q7;
    let good = t(Dtype::Fp32, T, &[2, 3]);
    let d = TensorDesc::validate(&good, &p).unwrap();
    assert_eq!((d.numel, d.nbytes, d.addr), (6, 24, T));
    let gate = |f: &dyn Fn(&mut RawTensorDesc)| {
        let mut d = good;
        f(&mut d);
        TensorDesc::validate(&d, &p).unwrap_err()
    };
    assert_eq!(gate(&|d| d.reserved1 = 1), Error::ReservedNotZero);
    assert_eq!(gate(&|d| d.location = 2), Error::BadDescriptorCode);
    assert_eq!(gate(&|d| d.shape_type = 1), Error::OutOfLineShape);
    assert_eq!(gate(&|d| d.dtype = 11), Error::DtypeNotMarshallable);
    assert_eq!(gate(&|d| d.num_dim = 0), Error::BadRank);
    assert_eq!(gate(&|d| d.shape[6] = 1), Error::ReservedNotZero);
    assert_eq!(gate(&|d| d.shape[0] = 0), Error::BadShape);
    assert_eq!(
        gate(&|d| {
            d.shape[0] = 0;
            d.shape[1] = 0;
            d.shape[6] = 1;
        }),
        Error::ReservedNotZero
    );
    assert_eq!(gate(&|d| d.storage = 0), Error::NullStorage);
    assert_eq!(gate(&|d| d.buffer_bytes = 23), Error::BufferTooSmall);
    assert_eq!(
        gate(&|d| {
            d.location = 1;
            d.storage = Q7.sbuf_size - 8;
        }),
        Error::AddressUnmapped
    );
}

#[test]
fn header_gates_and_readers() {
    let mut b = InvocationBuilder::new();
    b.arg(ArgKind::Tensor, t(Dtype::Int32, T, &[4, 5])).unwrap();
    b.arg(ArgKind::Int, t(Dtype::Int32, T + 0x100, &[1])).unwrap();
    b.output(t(Dtype::Int32, T + 0x1000, &[4, 5]));
    let block = b.build().to_vec();
    let h: &[u8; HEADER_BYTES] = block[..HEADER_BYTES].try_into().unwrap();
    assert_eq!(InvocationHeader::parse(h).unwrap().argc, 2);
    let mut bad = *h;
    bad[9 + 1] = 1;
    assert_eq!(InvocationHeader::parse(&bad), Err(Error::ReservedNotZero));
    bad = *h;
    bad[6] = 11;
    assert_eq!(InvocationHeader::parse(&bad), Err(Error::TooManyArgs));

    let mut s = core(0);
    assert_eq!(s.setup(true, BlockSource::Bytes(&block[..block.len() - 1])), Err(Error::BadBlockSize));
    assert!(!s.args().is_bound());
    s.setup(true, BlockSource::Bytes(&block)).unwrap();
    assert_eq!(s.next_float(), Err(Error::WrongArgKind));
    assert_eq!(s.args().cursor(), 0);
    let v = s.next_tensor().unwrap();
    assert_eq!((v.numel, v.strides[0], v.strides[1]), (20, 5, 1));
    assert_eq!(s.next_tensor(), Err(Error::WrongArgKind));
    s.args().cursor();
    assert_eq!(s.cleanup(), Err(Error::OutputNotWritten));
    assert!(!s.args().is_bound());
    assert_eq!(s.next_tensor(), Err(Error::NoInvocation));
}

/// `CoreState::init_in_place` on zeroed memory (how the device builds its
/// `.bss` state) gives the state `new` gives, and it stands up the same.
#[test]
fn init_in_place_on_zeroed_memory_is_new() {
    use std::alloc::{alloc_zeroed, dealloc, Layout};
    let layout = Layout::new::<CoreState<FakeHal>>();
    // SAFETY: a `CoreState` is not zero-sized.
    let p = unsafe { alloc_zeroed(layout) }.cast::<CoreState<FakeHal>>();
    assert!(!p.is_null());
    // SAFETY: freshly allocated, aligned, zeroed, not referenced.
    unsafe { CoreState::init_in_place(p, FakeHal::new(5)) };
    // SAFETY: fully initialised by `init_in_place`.
    let s = unsafe { &mut *p };
    let fresh = CoreState::new(FakeHal::new(5));
    assert_eq!(format!("{s:?}"), format!("{fresh:?}"));
    assert_eq!(format!("{:?}", s.args()), format!("{:?}", fresh.args()));
    assert_eq!(s.translator().is_ready(), fresh.translator().is_ready());
    s.init_prologue();
    assert_eq!(s.cpu_id(), 5);
    let a = s.hbm().allocate(1000, 0).unwrap();
    // SAFETY: `a` is used no further.
    unsafe { s.hbm().free(a) }.unwrap();
    let m = s.libc().malloc(300).unwrap();
    // SAFETY: a live block of this heap.
    unsafe { s.libc().free(m.as_ptr()) }.unwrap();
    let t = s.dataram().allocate(4000, 256).unwrap();
    // SAFETY: `t` is used no further.
    unsafe { s.dataram().free(t.as_ptr()) }.unwrap();
    assert!(s.translator().is_ready());
    // SAFETY: `p` came from `alloc_zeroed(layout)`; `s` is not used again
    // (FakeHal's memory is dropped with the state).
    unsafe {
        core::ptr::drop_in_place(p);
        dealloc(p.cast(), layout);
    }
}

/// A state is a plain value, so safe code may move it after its init
/// prologue. Its heaps must hold no pointer into it: the libc heap's
/// bootstrap arena (the prologue's default malloc) is scratch memory of
/// the core, not a field of the state. Under Miri a heap that walked a
/// free list inside the old place would be a use after free.
#[test]
fn a_state_moved_after_init_keeps_working_heaps() {
    let mut s = core(1);
    let p = Q7;
    let boot = s.hal().nx_ptr(p.scratch_nx(p.bootstrap_arena_soc(1))) as usize;
    assert_eq!(s.libc().bootstrap_base(), boot, "the bootstrap arena is the core's scratch memory");
    s.libc().set_use_default(true);
    let early = s.libc().malloc(100).unwrap();
    // SAFETY: a live 100-byte block.
    unsafe { early.as_ptr().write_bytes(0x5A, 100) };
    let state_at = &*s as *const CoreState<FakeHal> as usize;
    // Move the state out of its box into a new one; the old box is freed.
    let mut s = moved(s);
    assert_ne!(&*s as *const CoreState<FakeHal> as usize, state_at);
    assert_eq!(s.libc().bootstrap_base(), boot);
    // The bootstrap arena still serves and takes back its blocks.
    let m = s.libc().malloc(200).unwrap();
    // SAFETY: a live 100-byte block, written above.
    assert_eq!(unsafe { early.as_ptr().add(99).read() }, 0x5A);
    // SAFETY: live blocks of this heap.
    unsafe {
        s.libc().free(early.as_ptr()).unwrap();
        s.libc().free(m.as_ptr()).unwrap();
    }
    s.libc().set_use_default(false);
    s.init_prologue();
    let m = s.libc().malloc(300).unwrap();
    // SAFETY: a live block of this heap.
    unsafe { s.libc().free(m.as_ptr()) }.unwrap();
    assert_eq!(s.libc().stats().in_use, 0);
}

/// `b`'s value in a new box; `b`'s is freed on return.
// The box is the point: its memory must be freed.
#[allow(clippy::boxed_local)]
fn moved<T>(b: Box<T>) -> Box<T> {
    Box::new(*b)
}
