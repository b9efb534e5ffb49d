//! Registration, the entry hand-off block and the stack switch on the host.

use neuron_hal_mock::MockSoc;
use neuroncustomop::ffi::error::neuron_last_error;
use neuroncustomop::ffi::launch::*;
use neuroncustomop::hal::platform::{PINNED_WINDOW_SIZE, Q7};
use neuroncustomop::hal::Hal;
use neuroncustomop::host::SimCore;
use neuroncustomop::runtime::stack::DEFAULT_STACK_SIZE;
use neuroncustomop::runtime::Error;
use std::cell::Cell;
use std::ffi::{c_char, c_void, CStr};

// ---- a generated op table, as the kernel side provides it ----

unsafe extern "C" fn op_a() -> i32 {
    1
}
unsafe extern "C" fn op_b() -> i32 {
    2
}

#[unsafe(no_mangle)]
extern "C" fn get_func_cnt() -> i32 {
    2
}
#[unsafe(no_mangle)]
extern "C" fn get_func_name(i: i32) -> *const c_char {
    [c"op_a".as_ptr(), c"op_b".as_ptr()][i as usize]
}
#[unsafe(no_mangle)]
extern "C" fn get_func_ptr(i: i32) -> Option<OpFn> {
    Some([op_a as OpFn, op_b as OpFn][i as usize])
}

std::thread_local! {
    static SEEN: std::cell::RefCell<Vec<(String, i32)>> = const { std::cell::RefCell::new(Vec::new()) };
}

unsafe extern "C" fn collect(handle: *mut c_void, name: *const c_char, f: OpFn) -> i32 {
    assert_eq!(handle as usize, 0x1234);
    // SAFETY: names come from the static table above; f is a launcher.
    let (n, r) = unsafe { (CStr::from_ptr(name).to_str().unwrap().to_owned(), f()) };
    SEEN.with(|s| s.borrow_mut().push((n, r)));
    0
}

fn block(size: u32) -> EntryBlock {
    EntryBlock { size, abi_version: ENTRY_ABI_VERSION, handle: 0x1234, register_cb: collect as *const () as usize as u64, flags: 0, reserved: [0; 2] }
}

#[test]
fn register_funcs_walks_the_generated_table() {
    let soc = MockSoc::new().unwrap();
    let mut core = SimCore::new(soc.core(0).unwrap());
    core.enter(|| {
        SEEN.with(|s| s.borrow_mut().clear());
        // SAFETY: collect is a valid callback; the table is linked above.
        assert_eq!(unsafe { register_funcs(0x1234 as *mut c_void, collect) }, 2);
        assert_eq!(SEEN.with(|s| s.borrow().clone()), vec![("op_a".into(), 1), ("op_b".into(), 2)]);
        // The entry: a full block registers, a short one is refused.
        let b = block(40);
        // SAFETY: b is a complete block.
        assert_eq!(unsafe { neuron_entry(&b) }, 2);
        let short = block(35);
        // SAFETY: as above (the size field lies about a shorter block).
        assert_eq!(unsafe { neuron_entry(&short) }, -1);
        assert_eq!(neuron_last_error(), Error::AbiMismatch.code());
        // SAFETY: null is refused.
        assert_eq!(unsafe { neuron_entry(std::ptr::null()) }, -1);
        let exact = block(MIN_ENTRY_BLOCK);
        // SAFETY: as above.
        assert_eq!(unsafe { neuron_entry(&exact) }, 2);
    });
}

unsafe extern "C" fn too_many() -> i32 {
    MAX_OPS
}
unsafe extern "C" fn just_below() -> i32 {
    MAX_OPS - 1
}
unsafe extern "C" fn no_name(_: i32) -> *const c_char {
    c"x".as_ptr()
}
unsafe extern "C" fn some_ptr(_: i32) -> Option<OpFn> {
    Some(op_a)
}
unsafe extern "C" fn count_only(_: *mut c_void, _: *const c_char, _: OpFn) -> i32 {
    0
}

#[test]
fn op_count_must_be_below_0x8000() {
    let t = OpTable { count: too_many, name: no_name, ptr: some_ptr };
    // SAFETY: the table functions and callback are valid.
    assert_eq!(unsafe { t.register(std::ptr::null_mut(), count_only) }, Err(Error::TooManyOps));
    let t = OpTable { count: just_below, ..t };
    // SAFETY: as above.
    assert_eq!(unsafe { t.register(std::ptr::null_mut(), count_only) }, Ok(MAX_OPS - 1));
}

// ---- the stack switch ----

std::thread_local! {
    static WRAPPER_SP: Cell<usize> = const { Cell::new(0) };
}

/// Deep enough to need far more than the default stack.
#[inline(never)]
fn deep(n: u32, pad: &mut [u8; 512]) -> u64 {
    pad[n as usize % 512] = n as u8;
    if n == 0 {
        return pad.iter().map(|b| *b as u64).sum();
    }
    let mut mine = [0u8; 512];
    deep(n - 1, &mut mine) + pad[0] as u64 + std::hint::black_box(mine[1]) as u64
}

unsafe extern "C" fn wrapper() {
    let here = 0u8;
    WRAPPER_SP.with(|c| c.set(&here as *const u8 as usize));
    let mut pad = [0u8; 512];
    std::hint::black_box(deep(200, &mut pad));
}

fn scratch_mapping(core: &SimCore) -> std::ops::Range<usize> {
    let lo = core.hal().nx_ptr(Q7.scratch_window_nx) as usize;
    lo..lo + PINNED_WINDOW_SIZE as usize
}

#[test]
fn enough_room_runs_on_the_current_stack() {
    let soc = MockSoc::new().unwrap();
    let mut core = SimCore::new(soc.core(1).unwrap());
    let window = scratch_mapping(&core);
    core.enter(|| {
        // SAFETY: wrapper is a valid function.
        assert_eq!(unsafe { switch_stack_or_call_wrapper(Some(wrapper), 0) }, 0);
    });
    let sp = WRAPPER_SP.with(Cell::get);
    assert!(!window.contains(&sp), "ran on the host stack");
    assert_eq!(core.state().hbm().stats().allocs, 0);
}

#[test]
fn too_little_room_switches_to_an_hbm_stack_and_frees_it() {
    let soc = MockSoc::new().unwrap();
    let mut core = SimCore::new(soc.core(3).unwrap());
    let window = scratch_mapping(&core);
    let (isl_after, sp) = core.enter(|| {
        // Leave less than the default below SP: the switch must happen.
        let hal_sp = {
            let probe = 0u8;
            &probe as *const u8 as usize
        };
        let isl = hal_sp - (DEFAULT_STACK_SIZE as usize - 100);
        neuroncustomop::ffi::init::neuron_runtime_init();
        set_isl(isl);
        // SAFETY: wrapper is a valid function.
        let r = unsafe { switch_stack_or_call_wrapper(Some(wrapper), 0) };
        assert_eq!(r, 0);
        (get_isl(), WRAPPER_SP.with(Cell::get))
    });
    assert!(window.contains(&sp), "wrapper ran on the HBM stack ({sp:#x})");
    let st = core.state().hbm().stats();
    assert_eq!((st.allocs, st.frees, st.in_use), (1, 1, 0), "HBM stack freed");
    assert!(st.high_water >= 256 << 10);
    assert_ne!(isl_after, 0, "caller's ISL restored");
}

fn set_isl(isl: usize) {
    // SAFETY: the mock core's limit is a number the launcher reads; on the
    // host no stack is held to it.
    with_hal(|h| unsafe { h.set_stack_limit(isl) });
}

fn get_isl() -> usize {
    let mut v = 0;
    with_hal(|h| v = h.stack_limit());
    v
}

/// Test-side access to the bound core's HAL through the public host API.
fn with_hal(f: impl FnOnce(&neuron_hal_mock::MockCore)) {
    neuroncustomop::host::with_bound_hal(f);
}

#[test]
fn no_hbm_stack_is_the_documented_abort() {
    // The abort ends the process, so the scenario runs in a child.
    if std::env::var_os("NEURON_ABORT_CHILD").is_some() {
        let soc = MockSoc::new().unwrap();
        let mut core = SimCore::new(soc.core(5).unwrap());
        core.enter(|| {
            neuroncustomop::ffi::init::neuron_runtime_init();
            // Take the whole HBM heap so no stack can be had.
            let mut a = 0u64;
            // SAFETY: valid out pointer.
            while unsafe { neuroncustomop::ffi::heap::neuron_hbm_allocate(64 << 10, &mut a, 0) } == 0 {}
            let probe = 0u8;
            set_isl(&probe as *const u8 as usize - 16);
            // SAFETY: wrapper is valid; this call aborts.
            unsafe { switch_stack_or_call_wrapper(Some(wrapper), 0) };
        });
        unreachable!("the switch must abort");
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new(exe)
        .args(["--exact", "no_hbm_stack_is_the_documented_abort", "--nocapture", "--test-threads=1"])
        .env("NEURON_ABORT_CHILD", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains(&format!("abort on core 5: error {} (no HBM stack available", Error::NoHbmStack.code())), "stderr: {err}");
}
