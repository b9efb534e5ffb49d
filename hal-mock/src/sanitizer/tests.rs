//! The sanitizer's unit tests.

use super::stripes::STRIPE;
use super::*;
use std::vec;

fn setup() -> (Arc<MockSoc>, u64) {
    let soc = MockSoc::new().unwrap();
    let base = soc.platform().hbm_soc_base + (1 << 30);
    (soc, base)
}

#[test]
fn an_unwritten_element_read_is_found_a_written_one_is_not() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let mut v = CoreView::default();
    s.begin();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[0xA5; 32]) }.unwrap();
    s.watch(base, 32, 4, 0xA5, RegionKind::Output, "the output".into());
    s.write(&mut v, 0, base, 8);
    s.read(&soc, &mut v, 0, base, 8);
    assert!(s.end().is_empty(), "written, then read: nothing");
    s.begin();
    s.watch(base, 32, 4, 0xA5, RegionKind::Output, "the output".into());
    s.read(&soc, &mut v, 0, base + 8, 16);
    assert_eq!(
        s.end(),
        [Finding { kind: FindingKind::UninitialisedRead, region: "the output".into(), cpu: 0, other: None, first: 2, count: 4, ranges: vec![], pcs: vec![] }]
    );
}

/// What an accessor's fast path is lent: nothing outside the regions,
/// the input as such, the states from the range's first element (the
/// very states `write` marks and `read` checks) inside one region of
/// its element size, and the hooks' own checks for anything else; a
/// lent region outlives its unwatch until the next run.
#[test]
fn a_raw_pointer_hashes_the_inputs_as_they_are_then_once_a_watched_run() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[1; 8192]) }.unwrap();
    s.raw_pointer(&soc);
    assert_eq!(s.raw_pointer_hashes(), None, "no run watched: nothing taken");
    s.begin();
    s.watch(base, 5000, 4, 0, RegionKind::Input, "argument 0".into());
    s.watch(base + 8192, 64, 4, 0xA5, RegionKind::Output, "the output".into());
    assert_eq!(s.raw_pointer_hashes(), None, "no raw pointer yet");
    s.raw_pointer(&soc);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[2; 8]) }.unwrap();
    s.raw_pointer(&soc);
    let taken = s.raw_pointer_hashes().expect("taken at the first raw pointer");
    let mut before = Vec::new();
    page_hashes(&[1; 5000], &mut before);
    assert_eq!(taken, [InputHashes { name: "argument 0".into(), base, len: 5000, pages: before }], "the inputs only, as they were at the first");
    s.end();
    s.raw_pointer(&soc);
    assert_eq!(s.raw_pointer_hashes(), None, "read once; none taken after the run");
    s.begin();
    assert_eq!(s.raw_pointer_hashes(), None, "a new run starts with none");
}

#[test]
fn lent_states_are_the_regions_own() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let mut v = CoreView::default();
    assert_eq!(s.lend_states(&mut v, 0, base, 32, 4, true), Watched::No, "no run watched");
    s.begin();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[0xA5; 64]) }.unwrap();
    s.watch(base, 32, 4, 0xA5, RegionKind::Output, "the output".into());
    s.watch(base + 32, 32, 4, 0xA5, RegionKind::Input, "argument 0".into());
    assert_eq!(s.lend_states(&mut v, 0, base + 64, 8, 4, false), Watched::No);
    assert_eq!(s.lend_states(&mut v, 0, base + 32, 32, 4, true), Watched::Input);
    assert_eq!(s.lend_states(&mut v, 0, base + 16, 32, 4, false), Watched::Mixed, "two regions");
    assert_eq!(s.lend_states(&mut v, 0, base, 32, 2, false), Watched::Mixed, "another element size");
    assert_eq!(s.lend_states(&mut v, 0, base + 2, 8, 4, false), Watched::Mixed, "not on an element");
    assert_eq!(s.lend_states(&mut v, 3, base + 8, 24, 4, true), Watched::Mixed, "several writers: states change under their locks only");
    s.set_one_writer(true);
    let Watched::States { states, me } = s.lend_states(&mut v, 3, base + 8, 24, 4, true) else { panic!("the output's states") };
    assert_eq!(me, 1 << 3);
    s.write(&mut v, 3, base + 12, 4);
    s.unwatch(base);
    // SAFETY: the region was lent this run: alive until `begin`; element
    // 1 of the range is the region's element 3.
    assert_eq!(unsafe { (*states.add(1)).load(Ordering::Relaxed) }, 1 << 3);
    assert!(s.end().is_empty());
}

/// With several writers a hook changes states only under their
/// stripe's lock: a core's write into a stripe another hook holds
/// waits for it (so no load and store of one can lose the other's
/// bit), and one into another stripe does not.
#[test]
fn a_write_waits_for_the_stripe_another_hook_holds() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    s.begin();
    let n = 2 * STRIPE as u64;
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.fill(base, n * 4, 0xA5) }.unwrap();
    s.watch(base, n * 4, 4, 0xA5, RegionKind::Output, "the output".into());
    s.set_one_writer(false);
    let region = Arc::clone(&s.regions.read().unwrap()[0]);
    let held = s.hold(&region, 10, 10).expect("several writers: a lock");
    let state = |e: u64| region.state[e as usize].load(Ordering::Relaxed);
    std::thread::scope(|sc| {
        let writer = sc.spawn(|| {
            let mut v = CoreView::default();
            // The other stripe first: not held, done at once.
            s.write(&mut v, 2, base + STRIPE as u64 * 4, 4);
            s.write(&mut v, 1, base + 10 * 4, 4);
        });
        std::thread::sleep(std::time::Duration::from_millis(100));
        assert_eq!((state(STRIPE as u64), state(10)), (1 << 2, UNWRITTEN), "the held stripe's write waits");
        drop(held);
        writer.join().unwrap();
    });
    assert_eq!(state(10), 1 << 1);
    let again = s.hold(&region, 0, n - 1);
    assert!(again.is_some(), "released: held again");
    drop(again);
    s.set_one_writer(true);
    assert!(s.hold(&region, 0, n - 1).is_none(), "one writer: no lock");
}

#[test]
fn a_range_is_marked_as_element_by_element_and_keeps_other_bits() {
    for one in [true, false] {
        let s: Vec<AtomicU16> = [UNWRITTEN, 2, UNKNOWN_WRITER, 4].into_iter().map(AtomicU16::new).collect();
        let san = Sanitizer::default();
        san.set_one_writer(one);
        san.mark_range(&s[..3], 1);
        let got: Vec<u16> = s.iter().map(|x| x.load(Ordering::Relaxed)).collect();
        assert_eq!(got, [UNWRITTEN | 1, 3, UNKNOWN_WRITER | 1, 4], "one writer: {one}");
    }
}

#[test]
fn all_written_and_one_writer_marks() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let (mut v0, mut v1) = (CoreView::default(), CoreView::default());
    s.begin();
    s.watch(base, 16, 4, 0xA5, RegionKind::Output, "the output".into());
    assert_eq!(s.all_written(base + 4), None, "no region there");
    s.set_one_writer(true);
    s.write(&mut v0, 0, base, 12);
    assert_eq!(s.all_written(base), Some(false), "element 3 unwritten");
    s.write(&mut v0, 0, base + 12, 4);
    assert_eq!(s.all_written(base), Some(true));
    assert_eq!(s.written_by(base).unwrap(), [1, 1, 1, 1]);
    s.set_one_writer(false);
    assert!(s.end().is_empty(), "one core: no cross-core writes");
    // Two cores on one element: found (the scan runs with two writers).
    s.begin();
    s.watch(base, 16, 4, 0xA5, RegionKind::Output, "the output".into());
    s.write(&mut v0, 0, base, 16);
    s.write(&mut v1, 1, base + 8, 4);
    assert_eq!(s.written_by(base).unwrap(), [1, 1, 3, 1]);
    let f = s.end();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].kind, f[0].cpu, f[0].other, f[0].first, f[0].count), (FindingKind::CrossCoreWrite, 0, Some(1), 2, 1));
    // Elements written twice count once: one left is still unwritten.
    s.begin();
    s.watch(base, 16, 4, 0xA5, RegionKind::Output, "the output".into());
    s.set_one_writer(true);
    s.write(&mut v0, 0, base, 12);
    s.write(&mut v0, 0, base + 4, 4);
    assert_eq!(s.all_written(base), Some(false));
    s.set_one_writer(false);
    s.begin();
    s.watch(base, 16, 4, 0xA5, RegionKind::Output, "the output".into());
    s.write(&mut v0, 0, base, 12);
    s.write(&mut v1, 1, base, 4);
    assert_eq!(s.all_written(base), Some(false), "nor with several writers");
    let _ = s.end();
    // A writer the sanitizer could not name is not "all written", even
    // once a hook writes the element too.
    s.begin();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[0xA5; 16]) }.unwrap();
    s.watch(base, 16, 4, 0xA5, RegionKind::Output, "the output".into());
    s.write(&mut v0, 0, base, 12);
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base + 12, &[1; 4]) }.unwrap();
    s.read(&soc, &mut v0, 0, base + 12, 4);
    s.write(&mut v0, 0, base + 12, 4);
    assert_eq!(s.all_written(base), Some(false));
    // A copy of unwritten elements over written ones unwrites them.
    s.begin();
    s.watch(base, 8, 4, 0xA5, RegionKind::Output, "the output".into());
    s.watch(base + 8, 8, 4, 0xA5, RegionKind::Output, "scratch".into());
    s.write(&mut v0, 0, base, 8);
    assert_eq!(s.all_written(base), Some(true));
    s.copy(&mut v0, 0, base, base + 8, 4);
    assert_eq!(s.all_written(base), Some(false));
}

#[test]
fn a_raw_write_the_hooks_missed_is_not_an_uninitialised_read() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let mut v = CoreView::default();
    s.begin();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[0xA5; 16]) }.unwrap();
    s.watch(base, 16, 4, 0xA5, RegionKind::Scratch, "a tensor".into());
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &1.5f32.to_le_bytes()) }.unwrap();
    s.read(&soc, &mut v, 0, base, 4);
    assert!(s.end().is_empty());
}

#[test]
fn cross_core_reads_and_writes_and_input_writes() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let (mut v0, mut v3) = (CoreView::default(), CoreView::default());
    s.begin();
    s.watch(base, 64, 4, 0xA5, RegionKind::Output, "the output".into());
    s.watch(base + 4096, 64, 4, 0, RegionKind::Input, "argument 0".into());
    s.write(&mut v0, 0, base, 16);
    s.read(&soc, &mut v3, 3, base + 12, 4);
    s.write(&mut v3, 3, base + 8, 4);
    s.write(&mut v3, 3, base + 4, 4);
    s.write(&mut v3, 3, base + 4096 + 20, 4);
    s.read(&soc, &mut v3, 3, base + 4096, 64);
    let f = s.end();
    assert_eq!(f.len(), 3, "{f:?}");
    assert!(f.contains(&Finding {
        kind: FindingKind::CrossCoreRead,
        region: "the output".into(),
        cpu: 3,
        other: Some(0),
        first: 3,
        count: 1,
        ranges: vec![],
        pcs: vec![]
    }));
    assert!(f.contains(&Finding {
        kind: FindingKind::CrossCoreWrite,
        region: "the output".into(),
        cpu: 0,
        other: Some(3),
        first: 1,
        count: 2,
        ranges: vec![(1, 3)],
        pcs: vec![]
    }));
    assert!(f.contains(&Finding {
        kind: FindingKind::InputWritten,
        region: "argument 0".into(),
        cpu: 3,
        other: None,
        first: 5,
        count: 1,
        ranges: vec![],
        pcs: vec![]
    }));
    // Where: the frames of the access that made a finding first (a
    // cross-core write is found after the run, and has none).
    assert!(f.iter().all(|x| x.pcs.is_empty() == (x.kind == FindingKind::CrossCoreWrite)), "{f:?}");
}

#[test]
fn a_copy_carries_what_was_written_and_off_watches_nothing() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let mut v = CoreView::default();
    s.begin();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base, &[0xA5; 16]) }.unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { soc.write(base + 4096, &[0xA5; 16]) }.unwrap();
    s.watch(base, 16, 4, 0xA5, RegionKind::Scratch, "a tensor".into());
    s.watch(base + 4096, 16, 4, 0xA5, RegionKind::Output, "the output".into());
    s.write(&mut v, 0, base, 8);
    s.copy(&mut v, 0, base + 4096, base, 16);
    s.read(&soc, &mut v, 0, base + 4096, 8);
    assert!(s.end().is_empty(), "copied written elements are written");
    s.read(&soc, &mut v, 0, base + 4096 + 8, 8);
    assert!(s.end().is_empty(), "not watching after end");
}

#[test]
fn cross_core_writes_across_the_scan_pieces() {
    let (_soc, base) = setup();
    let s = Sanitizer::default();
    let (mut v0, mut v1) = (CoreView::default(), CoreView::default());
    s.begin();
    s.watch(base, 4 * 10_000, 4, 0xA5, RegionKind::Output, "the output".into());
    s.write(&mut v0, 0, base + 4 * 4090, 4 * 20);
    s.write(&mut v1, 1, base + 4 * 4095, 4 * 3);
    s.write(&mut v1, 1, base + 4 * 9999, 4);
    s.write(&mut v0, 0, base + 4 * 9999, 4);
    let f = s.end();
    assert_eq!(f.len(), 1, "{f:?}");
    assert_eq!((f[0].first, f[0].count, &f[0].ranges[..]), (4095, 4, &[(4095, 4098), (9999, 10_000)][..]));
}

#[test]
fn a_copy_marks_per_element_aligned_or_not() {
    let (soc, base) = setup();
    let s = Sanitizer::default();
    let (mut v0, mut v2) = (CoreView::default(), CoreView::default());
    let (src, dst) = (base, base + 4096);
    for one in [true, false] {
        s.begin();
        s.watch(src, 32, 4, 0xA5, RegionKind::Scratch, "a tensor".into());
        s.watch(dst, 32, 4, 0xA5, RegionKind::Output, "the output".into());
        s.set_one_writer(one);
        // Source elements 0, 1, 4, 5 written; destination 6 written
        // before the copy, which carries source 6's "unwritten" there.
        s.write(&mut v0, 0, src, 8);
        s.write(&mut v0, 0, src + 16, 8);
        s.write(&mut v0, 0, dst + 24, 4);
        // Aligned (a slice operation): elements 0..8 from 0..8.
        s.copy(&mut v2, 2, dst, src, 32);
        assert_eq!(s.written_by(dst).unwrap(), [4, 4, 0, 0, 4, 4, 0, 0], "one writer: {one}");
        // Not aligned (the element loop): destination elements 0 and 1
        // from the bytes at source 10 and 14, elements 2 and 3, which
        // no one wrote.
        s.write(&mut v0, 0, dst + 8, 4);
        s.copy(&mut v2, 2, dst, src + 10, 6);
        assert_eq!(s.written_by(dst).unwrap(), [0, 0, 1, 0, 4, 4, 0, 0], "one writer: {one}");
        s.set_one_writer(false);
        assert!(s.end().is_empty());
        assert_eq!(s.all_written(dst), Some(false), "scanned with the sanitizer off");
    }
    let _ = soc;
}
