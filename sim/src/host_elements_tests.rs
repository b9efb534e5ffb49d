//! The C++ accessor's lent entry (`host_elements`) on a mock core: opened
//! where a record maps the tensor, with the word that keeps it valid (the
//! open generation) and the sanitizer's states of the tensor; a bind or
//! unbind on the thread closes it, another install invalidates it; an entry
//! handed to a later accessor changes its id.

use crate::ffi::translate::neuron_translate_ctx;
use crate::host_elements::{neuron_host_elements_make, neuron_host_elements_open, NeuronHostElements};
use crate::SimCore;
use neuron_hal::platform::{DYNAMIC_WINDOW_SIZE, Q7};
use neuron_hal_mock::sanitizer::RegionKind;
use neuron_hal_mock::MockSoc;
use std::sync::Arc;

const BYTES: u64 = 256;

fn region(k: u64) -> u64 {
    Q7.hbm_soc_base + (1 << 30) + k * DYNAMIC_WINDOW_SIZE
}

fn core(soc: &Arc<MockSoc>, cpu: u32) -> SimCore {
    let mut c = SimCore::new(soc.core(cpu).expect("core"));
    c.state().init_prologue();
    c
}

/// Whether `h`'s window is valid now, as the C++ fast path checks it.
///
/// # Safety
/// `h` is a live entry whose window was opened (its pointers set).
unsafe fn valid(h: *const NeuronHostElements) -> bool {
    // SAFETY: the caller's contract.
    unsafe { (*h).len != 0 && *(*h).open_generation == (*h).generation }
}

#[test]
fn an_entry_opens_where_a_record_maps_it_and_is_invalidated_as_a_token() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let mut b = core(&soc, 1);
    a.enter(|| {
        let ctx = neuron_translate_ctx();
        let h = neuron_host_elements_make(ctx, region(0), BYTES, 4, false);
        assert!(!h.is_null());
        // SAFETY: `h` is this thread's entry, read between library calls.
        unsafe {
            assert_eq!(((*h).len, (*h).off), (0, 0), "nothing maps it yet: the first access's hook will");
            assert!((*h).states.is_null(), "no run watched");
            let p = crate::element_hooks::neuron_translate_load(ctx, region(0) + 8, 4);
            assert!(!p.is_null());
            neuron_host_elements_open(h, ctx, region(0) + 8);
            assert_eq!(((*h).lo, (*h).len), (region(0), BYTES));
            assert_eq!((*h).nx.add(8).cast::<core::ffi::c_void>(), p);
            assert!(valid(h));
            // The fast path's pointer is the SoC's own view of the memory
            // the window shows: a store through the window reads back
            // through the view, and the other way round.
            let v = (*h).view.add(8).cast::<u32>();
            p.cast::<u32>().write_volatile(0x00C0_FFEE);
            assert_eq!(v.read_volatile(), 0x00C0_FFEE);
            v.write_volatile(0x0BAD_CAFE);
            assert_eq!(p.cast::<u32>().read_volatile(), 0x0BAD_CAFE);
            // Another core bound on the thread closes the entry, and so
            // does its unbinding (the slot it pointed into may be gone).
            // The stack floor is the slot's lowest address noted, taken
            // at every open (the slot's word is reset between runs, with
            // the core unbound: a floor kept from before would let a
            // deeper access go unnoted).
            assert_eq!((*h).sp_floor, (*h).sp_low.read());
            b.enter(|| assert!(!valid(h)));
            assert_eq!((*h).len, 0);
            (*h).sp_floor = 0;
            neuron_host_elements_open(h, ctx, region(0));
            assert!(valid(h));
            assert_eq!((*h).sp_floor, (*h).sp_low.read(), "re-opened: the floor taken again");
            // Another install: a new generation.
            assert!(!crate::element_hooks::neuron_translate_load(ctx, region(3), 4).is_null());
            assert!(!valid(h));
            // Sixteen accessors later the entry is another's.
            let id = (*h).id;
            for _ in 0..16 {
                neuron_host_elements_make(ctx, region(0), BYTES, 4, false);
            }
            assert_ne!((*h).id, id);
        }
    });
}

/// A tensor the SoC's memory does not hold whole (here past the end of
/// HBM) has no view for the fast path to index: no entry, every access
/// takes the hooks (which refuse what no window maps).
#[test]
fn no_entry_for_memory_the_soc_has_no_view_of() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 0);
    let end = soc.platform().hbm_soc_base + soc.hbm().size();
    a.enter(|| {
        let ctx = neuron_translate_ctx();
        assert!(!neuron_host_elements_make(ctx, end - BYTES, BYTES, 4, false).is_null(), "the last bytes of HBM");
        assert!(neuron_host_elements_make(ctx, end - BYTES / 2, BYTES, 4, false).is_null(), "past the end of HBM");
    });
}

#[test]
fn an_entry_lends_the_sanitizers_states_of_its_tensor() {
    let soc = MockSoc::new().expect("mock SoC");
    let mut a = core(&soc, 2);
    let s = soc.sanitizer();
    s.begin();
    s.set_one_writer(true);
    s.watch(region(1), BYTES, 4, 0xA5, RegionKind::Output, "the output".into());
    s.watch(region(2), BYTES, 4, 0xA5, RegionKind::Input, "argument 0".into());
    a.enter(|| {
        let ctx = neuron_translate_ctx();
        let out = neuron_host_elements_make(ctx, region(1) + 16, BYTES - 16, 4, true);
        let inp = neuron_host_elements_make(ctx, region(2), BYTES, 4, false);
        // SAFETY: this thread's entries, read between library calls.
        unsafe {
            assert_eq!(((*out).me, (*out).input), (1 << 2, 0));
            assert!(!(*out).states.is_null());
            assert_eq!(((*inp).input, (*inp).states.is_null()), (1, true));
            // A store the hook sees: the state the entry lends, from its first element.
            assert!(!crate::element_hooks::neuron_translate_store(ctx, region(1) + 20, 4).is_null());
            assert_eq!(*(*out).states.add(1), 1 << 2);
            assert_eq!(*(*out).states, 0);
        }
        assert!(neuron_host_elements_make(ctx, region(1) + 2, 8, 4, false).is_null(), "not on an element: the hooks");
    });
    assert!(s.end().is_empty());
}
