//! The mock hardware itself: sparse HBM, private data RAM, window remaps.

use neuron_hal::platform::{DATARAM_SIZE, DYNAMIC_WINDOW_SIZE, Q7};
use neuron_hal::Hal;
use neuron_hal_mock::MockSoc;

#[test]
fn hbm_is_sparse_64_gib() {
    let soc = MockSoc::new().unwrap();
    assert!(soc.hbm().size() >= 64 << 30);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(Q7.hbm_soc_base, b"first") }.unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(Q7.hbm_soc_base + (60 << 30), b"far away") }.unwrap();
    let mut b = [0u8; 8];
    soc.read(Q7.hbm_soc_base + (60 << 30), &mut b).unwrap();
    assert_eq!(&b, b"far away");
    assert!(soc.hbm().resident_bytes() < 1 << 20, "{} bytes resident", soc.hbm().resident_bytes());
    // SAFETY: no core runs while the test writes its own memory.
    assert!(unsafe { soc.write(Q7.hbm_soc_base + Q7.hbm_size - 2, b"xyz") }.is_err());
}

#[test]
fn fill_sets_exactly_the_range_and_refuses_an_unmapped_one() {
    let soc = MockSoc::new().unwrap();
    let a = Q7.hbm_soc_base + (3 << 30);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(a, &[7; 8]) }.unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.fill(a + 1, 6, 0xFF) }.unwrap();
    let mut b = [0u8; 8];
    soc.read(a, &mut b).unwrap();
    assert_eq!(b, [7, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 7]);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.fill(a, 0, 1) }.unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    assert!(unsafe { soc.fill(Q7.hbm_soc_base + Q7.hbm_size - 2, 3, 0) }.is_err());
}

#[test]
fn window_register_decides_what_the_window_shows() {
    let soc = MockSoc::new().unwrap();
    let core = soc.core(3).unwrap();
    assert_eq!(core.prid(), 3);
    let w = Q7.dynamic_windows[1];
    let a = Q7.hbm_soc_base + (2 << 30);
    let b = a + DYNAMIC_WINDOW_SIZE;
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(a + 16, &[1]) }.unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(b + 16, &[2]) }.unwrap();
    let p = core.nx_ptr(w.nx_base + 16);
    let id = neuron_hal::WindowId::new(1).unwrap();
    // SAFETY: the test is this core's only user; no pointer into the window is held.
    unsafe { core.write_window_register(id, a) };
    // The register the id names reads back what was written.
    assert_eq!(core.read_window_register(w.register), a);
    // SAFETY: the window is mapped to HBM now.
    assert_eq!(unsafe { p.read_volatile() }, 1);
    // SAFETY: the test is this core's only user; no pointer into the window is held.
    unsafe { core.write_window_register(id, b) };
    // SAFETY: as above.
    assert_eq!(unsafe { p.read_volatile() }, 2);
    assert_eq!(core.read_window_register(w.register), b);
    assert_eq!(core.counters().window_programs(1), 2);
    assert_eq!(core.read_window_register(Q7.mem_window0_nx), Q7.apb_base as u64);
}

#[test]
fn data_ram_is_private_per_core() {
    let soc = MockSoc::new().unwrap();
    let c0 = soc.core(0).unwrap();
    let c1 = soc.core(1).unwrap();
    let last = Q7.dataram_nx + DATARAM_SIZE - 1;
    // SAFETY: data RAM is mapped on both cores.
    unsafe {
        c0.nx_ptr(last).write_volatile(0xAA);
        assert_eq!(c1.nx_ptr(last).read_volatile(), 0);
    }
}

#[test]
fn pinned_scratch_window_is_shared_hbm() {
    let soc = MockSoc::new().unwrap();
    let c0 = soc.core(0).unwrap();
    let c5 = soc.core(5).unwrap();
    // SAFETY: the pinned window is mapped from reset on every core.
    unsafe { c0.nx_ptr(Q7.scratch_window_nx + 128).write_volatile(9) };
    // SAFETY: as above.
    assert_eq!(unsafe { c5.nx_ptr(Q7.scratch_window_nx + 128).read_volatile() }, 9);
    let mut b = [0u8; 1];
    soc.read(Q7.scratch_soc_base + 128, &mut b).unwrap();
    assert_eq!(b[0], 9);
}

#[test]
fn a_reset_core_is_a_fresh_one_on_the_same_nx_space() {
    let soc = MockSoc::new().unwrap();
    let mut core = soc.core(2).unwrap();
    let ram = core.nx_ptr(Q7.dataram_nx + 4096);
    let w = Q7.dynamic_windows[0];
    let id = neuron_hal::WindowId::new(0).unwrap();
    let a = Q7.hbm_soc_base + (2 << 30);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(a, &[5]) }.unwrap();
    // SAFETY: the test is this core's only user; no pointer into the window is held.
    unsafe { core.write_window_register(id, a) };
    // SAFETY: data RAM is mapped, and the window shows HBM at `a`.
    unsafe {
        ram.write_volatile(0x77);
        assert_eq!(core.nx_ptr(w.nx_base).read_volatile(), 5);
    }
    // SAFETY: the mock's limit is a number; no stack is held to it.
    unsafe { core.set_stack_limit(64) };
    core.reset().unwrap();
    assert_eq!(core.nx_ptr(Q7.dataram_nx + 4096), ram, "the same NX space");
    // SAFETY: data RAM stays mapped.
    assert_eq!(unsafe { ram.read_volatile() }, 0, "data RAM reads zeros again");
    assert_eq!(core.read_window_register(w.register), 0);
    assert_eq!(core.counters().total_window_programs(), 0);
    assert_eq!(core.stack_limit(), soc.core(3).unwrap().stack_limit(), "the stack limit as a new core's");
    // The window shows nothing again: reading it faults (checked in a child).
    // SAFETY: the child only reads and exits.
    let pid = unsafe { libc::fork() };
    if pid == 0 {
        // SAFETY: a read of the unmapped window; SIGSEGV is the expected end.
        unsafe {
            core.nx_ptr(w.nx_base).read_volatile();
            libc::_exit(0);
        }
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFSIGNALED(status) && libc::WTERMSIG(status) == libc::SIGSEGV, "status {status}");
}

/// Resident bytes of the mapping holding `p` (its `Rss:` in smaps).
fn mapping_rss(p: *const u8) -> u64 {
    let a = p.addr();
    let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
    let mut inside = false;
    for l in smaps.lines() {
        // A mapping's header: `lo-hi perms ...` in hex.
        let range = l.split_once(' ').and_then(|(r, _)| r.split_once('-'));
        match range.map(|(lo, hi)| (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))) {
            Some((Ok(lo), Ok(hi))) => inside = (lo..hi).contains(&a),
            _ => {
                if let Some(kb) = l.strip_prefix("Rss:").filter(|_| inside) {
                    return kb.trim().trim_end_matches("kB").trim().parse::<u64>().unwrap() * 1024;
                }
            }
        }
    }
    panic!("no mapping holds {p:?}");
}

/// A page shown by a window is held by one mapping at a time (issue 28:
/// RSS counts a page once per mapping that has it): programming the window
/// drops the memory's view's entries of that range, and
/// `drop_window_pages` the window's; the bytes stay either way.
#[test]
fn a_window_and_the_view_hold_a_page_once() {
    let soc = MockSoc::new().unwrap();
    let core = soc.core(2).unwrap();
    let w = Q7.dynamic_windows[2];
    let a = Q7.hbm_soc_base + (5 << 30);
    let len = 1 << 20;
    let view = soc.hbm().ptr(a - Q7.hbm_soc_base, len).unwrap();
    // SAFETY: `len` bytes of the view, mapped for the memory's life.
    unsafe { view.write_bytes(7, len as usize) };
    assert!(mapping_rss(view) >= len, "the view holds what it wrote");
    // SAFETY: the test is this core's only user; no pointer into the window is held.
    unsafe { core.write_window_register(neuron_hal::WindowId::new(2).unwrap(), a) };
    assert_eq!(mapping_rss(view), 0, "the view let go of the window's pages");
    let p = core.nx_ptr(w.nx_base);
    // SAFETY: the window shows HBM at `a` now; `len` is within it.
    let sum: u64 = (0..len as usize).step_by(4096).map(|i| u64::from(unsafe { p.add(i).read_volatile() })).sum();
    assert_eq!(sum, 7 * (len / 4096), "the bytes stayed");
    assert!(mapping_rss(p) >= len, "the window holds what it read");
    // SAFETY: as above.
    unsafe { p.add(4096).write_volatile(9) };
    core.drop_window_pages();
    assert_eq!(mapping_rss(p), 0, "the window let go of its pages");
    // SAFETY: as above (the view, then the window: both fault back in).
    assert_eq!(unsafe { (view.add(4096).read_volatile(), p.add(4096).read_volatile()) }, (9, 9));
    assert!(DYNAMIC_WINDOW_SIZE >= len);
}

/// While an accessor reaches memory through the view (`lend_view`, the
/// host fast path), a window programmed for it leaves the view's pages
/// mapped: the window is never touched, and dropping them would only have
/// the accessor fault each back in. The run's end (`drop_window_pages`)
/// ends the loan: the next window drops them again.
#[test]
fn a_window_programmed_for_a_lent_view_leaves_the_view_its_pages() {
    let soc = MockSoc::new().unwrap();
    let core = soc.core(1).unwrap();
    let (a, b) = (Q7.hbm_soc_base + (6 << 30), Q7.hbm_soc_base + (7 << 30));
    let len = 1 << 20;
    let (va, vb) = (soc.hbm().ptr(a - Q7.hbm_soc_base, len).unwrap(), soc.hbm().ptr(b - Q7.hbm_soc_base, len).unwrap());
    // SAFETY: `len` bytes of the view at each, mapped for the memory's life.
    unsafe {
        va.write_bytes(7, len as usize);
        vb.write_bytes(8, len as usize);
    }
    // Both ranges lie in the view's one mapping: its RSS tells.
    let held = mapping_rss(va);
    assert!(held >= 2 * len);
    let w = neuron_hal::WindowId::new(1).unwrap();
    core.lend_view();
    // SAFETY: the test is this core's only user; no pointer into the window is held.
    unsafe { core.write_window_register(w, a) };
    assert_eq!(mapping_rss(va), held, "the lent view keeps its pages");
    core.drop_window_pages();
    // SAFETY: the test is this core's only user; no pointer into the window is held.
    unsafe { core.write_window_register(w, b) };
    assert_eq!(mapping_rss(va), held - len, "after the run the loan is over: the view lets go again");
}

/// One live core per cpu (the `Hal` contract's "one handle per core",
/// which `unsafe impl Hal for MockCore` relies on): a second core for a
/// live cpu is refused, other cpus and other SoCs are not, and the cpu is
/// free again once its core drops.
#[test]
fn one_live_core_per_cpu() {
    let soc = MockSoc::new().unwrap();
    let c4 = soc.core(4).unwrap();
    assert_eq!(soc.core(4).unwrap_err().kind(), std::io::ErrorKind::AlreadyExists);
    let c5 = soc.core(5).unwrap();
    let other = MockSoc::new().unwrap();
    let o4 = other.core(4).unwrap();
    drop(c4);
    let again = soc.core(4).unwrap();
    assert_eq!((again.prid(), c5.prid(), o4.prid()), (4, 5, 4));
    assert_eq!(soc.core(64).unwrap_err().kind(), std::io::ErrorKind::InvalidInput);
}
