//! The accessor's cached path on the host (`Leaf`, `binding::HostToken`):
//! whatever invalidates the token taken at the fill — another binding on
//! the thread, no binding, a remap, a held state, the core gone — sends the
//! access to the full translate (the right data or the error), and the
//! per-record hit counts are those of one translate per access.

use crate::ffi::translate::{neuron_translate, neuron_translate_ctx};
use crate::kernel::{Dtype, Tensor};
use crate::SimCore;
use neuron_hal::platform::{DYNAMIC_WINDOW_SIZE, Q7};
use neuron_hal_mock::MockSoc;
use neuron_runtime::marshal::descriptor::{Location, RawTensorDesc, TensorDesc};
use neuron_runtime::marshal::tensor::TensorView;
use neuron_runtime::translate::TranslateStats;
use neuron_runtime::Error;
use std::sync::Arc;
use std::vec::Vec;

/// Elements per tensor.
const N: usize = 64;

/// SoC address of region `k` (one dynamic window each), past hbm_scratch.
fn region(k: u64) -> u64 {
    Q7.hbm_soc_base + (1 << 30) + k * DYNAMIC_WINDOW_SIZE
}

/// The value of element `i` of the tensor in region `k`.
fn value(k: u64, i: usize) -> i32 {
    (k as i32 + 1) * 1000 + i as i32
}

fn core(soc: &Arc<MockSoc>, cpu: u32) -> SimCore {
    let mut c = SimCore::new(soc.core(cpu).expect("core"));
    c.state().init_prologue();
    c
}

/// Writes region `k`'s values and returns its 1-D u32 tensor on `c`.
fn tensor(soc: &Arc<MockSoc>, c: &mut SimCore, k: u64) -> Tensor<'static> {
    let v: Vec<u8> = (0..N).flat_map(|i| value(k, i).to_le_bytes()).collect();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(region(k), &v) }.expect("HBM write");
    let ctx = c.enter(|| neuron_translate_ctx()).cast();
    let desc = RawTensorDesc::contiguous(Location::Hbm, Dtype::Int32.code(), region(k), &[N as u64]).expect("shape");
    let desc = TensorDesc::parse(&desc.to_bytes(), &Q7).expect("valid");
    // SAFETY: region `k` of the mock SoC's HBM, outside every heap.
    unsafe { Tensor::from_view(TensorView::from_desc(&desc, ctx)) }
}

fn stats(c: &mut SimCore) -> TranslateStats {
    *c.state().translator().stats()
}

fn hits(c: &mut SimCore) -> u64 {
    stats(c).hits.iter().sum()
}

fn misses(c: &mut SimCore) -> u64 {
    stats(c).misses.iter().sum()
}

/// A walk is one miss (the first access installs the region) then a hit
/// per element on the record that maps it, as one translate per access
/// counts; a second accessor on the mapped tensor: a hit per element.
#[test]
fn a_walk_counts_a_hit_per_element_on_its_record() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let t = tensor(&soc, &mut a, 0);
    a.enter(|| {
        let acc = t.const_accessor::<i32, 1>().expect("accessor");
        for i in 0..N {
            assert_eq!(acc.get([i as i64]), Ok(value(0, i)));
        }
    });
    let s = stats(&mut a);
    assert_eq!(s.misses.iter().sum::<u64>(), 1);
    let rec = s.hits.iter().position(|&h| h != 0).expect("a record hit");
    assert_eq!(s.hits[rec], N as u64 - 1, "{s:?}");
    assert_eq!(hits(&mut a), N as u64 - 1);
    a.enter(|| {
        let acc = t.accessor::<i32, 1>().expect("accessor");
        for i in 0..N {
            assert_eq!(acc.elem([i as i64]).and_then(|e| e.get()), Ok(value(0, i)));
            acc.set([i as i64], value(0, i) + 1).expect("set");
        }
    });
    let s = stats(&mut a);
    assert_eq!((s.misses.iter().sum::<u64>(), s.hits[rec], hits(&mut a)), (1, 3 * N as u64 - 1, 3 * N as u64 - 1), "{s:?}");
}

/// Filled on core A, the accessor used with core B bound on the thread
/// (nested in A's binding, then on its own), with no core bound, then on A
/// again: B refuses A's context, no core is `NoCore`, A reads the right
/// data again; neither core counts a hit it did not translate.
#[test]
fn another_binding_sends_the_access_to_the_full_path() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let mut b = core(&soc, 1);
    let t = tensor(&soc, &mut a, 0);
    let acc = a.enter(|| {
        let acc = t.const_accessor::<i32, 1>().expect("accessor");
        assert_eq!(acc.get([0]), Ok(value(0, 0)));
        assert_eq!(acc.get([1]), Ok(value(0, 1)));
        let (h, m) = (hits_bound(), misses_bound());
        assert!(b.enter(|| acc.get([2])).is_err(), "B must not read through A's cached pointer");
        // Back on A (the nested binding restored): the full path, then the cache.
        assert_eq!(acc.get([2]), Ok(value(0, 2)));
        assert_eq!(acc.get([3]), Ok(value(0, 3)));
        assert_eq!((hits_bound(), misses_bound()), (h + 2, m));
        acc
    });
    let (ha, hb) = (hits(&mut a), hits(&mut b));
    assert_eq!(acc.get([4]), Err(Error::NoCore));
    assert!(b.enter(|| acc.get([4])).is_err());
    assert_eq!((hits(&mut a), hits(&mut b)), (ha, hb));
    a.enter(|| {
        assert_eq!(acc.get([4]), Ok(value(0, 4)));
        assert_eq!(acc.get([5]), Ok(value(0, 5)));
        drop(acc);
    });
    assert_eq!(hits(&mut a), ha + 2);
    assert_eq!(misses(&mut a), 1);
}

/// The bound core's translate hit count, read through the C surface's
/// state (inside a binding, where `SimCore::state` is not reachable).
fn hits_bound() -> u64 {
    crate::binding::with_core_exact(|b| Ok(b.state.translator().stats().hits.iter().sum())).expect("bound")
}

fn misses_bound() -> u64 {
    crate::binding::with_core_exact(|b| Ok(b.state.translator().stats().misses.iter().sum())).expect("bound")
}

/// Three other regions installed round-robin over the three dynamic
/// windows reprogram the accessor's window: its cached pointer now shows
/// another region, so the next access must reinstall (a second miss) and
/// read the tensor's own data.
#[test]
fn a_remap_sends_the_access_to_the_full_path() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let t = tensor(&soc, &mut a, 0);
    for k in 1..=3 {
        let _ = tensor(&soc, &mut a, k);
    }
    a.enter(|| {
        let acc = t.const_accessor::<i32, 1>().expect("accessor");
        assert_eq!(acc.get([0]), Ok(value(0, 0)));
        assert_eq!(acc.get([1]), Ok(value(0, 1)));
        let ctx = neuron_translate_ctx();
        for k in 1..=3 {
            assert!(!neuron_translate(ctx, region(k)).is_null());
        }
        let m = misses_bound();
        assert_eq!(m, 4, "each region installed once");
        for i in 2..N {
            assert_eq!(acc.get([i as i64]), Ok(value(0, i)), "element {i} after the remap");
        }
        assert_eq!(misses_bound(), 5, "the tensor's region reinstalled once");
    });
}

/// With an entry point holding the state, the cached path is not taken
/// (it would read and count through the held state): the access is the
/// full translate, refused as a re-entry, and counts nothing.
#[test]
fn a_held_state_sends_the_access_to_the_full_path() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let t = tensor(&soc, &mut a, 0);
    a.enter(|| {
        let acc = t.accessor::<i32, 1>().expect("accessor");
        assert_eq!(acc.get([0]), Ok(value(0, 0)));
        assert_eq!(acc.get([1]), Ok(value(0, 1)));
        let h = hits_bound();
        let r = crate::binding::with_core(|b| {
            let before = b.state.translator().stats();
            let got = (acc.get([2]), acc.set([2], 7));
            assert_eq!(b.state.translator().stats(), before, "nothing counted through the held state");
            Ok(got)
        });
        assert_eq!(r, Ok((Err(Error::Reentered), Err(Error::Reentered))));
        assert_eq!(hits_bound(), h);
        assert_eq!(acc.get([2]), Ok(value(0, 2)), "the refused write wrote nothing");
        assert_eq!(hits_bound(), h + 1);
    });
}

/// The accessor kept past its core: with a new core bound (perhaps at the
/// dropped one's address) the access is the full translate — refused, or,
/// when the new core's context sits where the old one's did, the new
/// core's own translate of the same SoC memory; never the old pointer.
#[test]
fn a_closed_core_sends_the_access_to_the_full_path() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let t = tensor(&soc, &mut a, 0);
    let acc = a.enter(|| {
        let acc = t.const_accessor::<i32, 1>().expect("accessor");
        assert_eq!(acc.get([0]), Ok(value(0, 0)));
        assert_eq!(acc.get([1]), Ok(value(0, 1)));
        acc
    });
    drop(a);
    let mut c = core(&soc, 2);
    let got = c.enter(|| {
        let r = acc.get([2]);
        drop(acc);
        r
    });
    assert!(got.is_err() || got == Ok(value(0, 2)), "{got:?}");
}
