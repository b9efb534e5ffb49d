use super::*;

#[test]
fn only_never_written_pages_are_holes() {
    let m = PhysMemory::new("hole-test", 1 << 20).unwrap();
    assert!(m.is_hole(0, 1 << 20));
    // SAFETY: offset 5000 is inside the 1 MiB mapping.
    unsafe { m.ptr(5000, 1).unwrap().write(0) };
    assert!(!m.is_hole(4096, 4096), "a page written, even with a zero, is data");
    assert!(!m.is_hole(0, 8192), "a range partly data");
    assert!(!m.is_hole(4100, 16), "inside the extent found before");
    assert!(m.is_hole(0, 4096));
    assert!(m.is_hole(8192, 4096));
    assert!(!m.is_hole(0, 0), "nothing is not a hole");
    assert!(!m.is_hole(1 << 20, 1), "past the end");
    assert!(m.is_data(4096, 4096) && m.is_data(4100, 16));
    assert!(!m.is_data(4096, 8192), "a range partly a hole");
    assert!(!m.is_data(0, 4096) && !m.is_data(4096, 0) && !m.is_data(1 << 20, 1));
}

#[test]
fn zeroing_keeps_the_kept_range_and_gives_the_rest_back() {
    let m = PhysMemory::new("zero-test", 1 << 20).unwrap();
    // Data: a small extent below the kept range [64 KiB, 128 KiB), one
    // across its start, one inside, and a large one above it.
    for (off, len) in [(4096u64, 8192usize), ((60 << 10) + 5, 8192), (100 << 10, 8192), (512 << 10, 256 << 10)] {
        // SAFETY: every range is inside the 1 MiB mapping.
        unsafe { std::ptr::write_bytes(m.ptr(off, len as u64).unwrap(), 0x5A, len) };
    }
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { m.zero_keeping(64 << 10, 128 << 10) }.unwrap();
    assert!(m.resident_bytes() >= 8192 && m.resident_bytes() <= 96 << 10, "the kept pages stay: {}", m.resident_bytes());
    assert!(m.is_hole(512 << 10, 256 << 10), "a large extent elsewhere is given back");
    assert!(m.is_hole(56 << 10, 8 << 10), "so is the part of one outside the kept range");
    assert!(!m.is_hole(64 << 10, 4096), "kept");
    assert!(!m.is_hole(4096, 4096), "a small extent is kept too");
    assert!(m.is_data(64 << 10, 8 << 10) && m.is_data((100 << 10) + 7, 100), "the kept extents are still data");
    assert!(!m.is_data(56 << 10, 16 << 10), "not where it was given back");
    // (Last: reading a hole faults its page in.)
    // SAFETY: the whole mapping is readable.
    let all = unsafe { std::slice::from_raw_parts(m.ptr(0, 1 << 20).unwrap(), 1 << 20) };
    assert!(all.iter().all(|&b| b == 0), "every byte reads zero again");
}

#[test]
fn a_write_through_the_file_is_seen_in_the_view() {
    let m = PhysMemory::new("write-at-test", 1 << 20).unwrap();
    let data: Vec<u8> = (0..10_000u32).map(|i| i as u8).collect();
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { m.write_at(3000, &data) }.unwrap();
    // SAFETY: [3000, 13000) is inside the 1 MiB mapping.
    let seen = unsafe { std::slice::from_raw_parts(m.ptr(3000, 10_000).unwrap(), 10_000) };
    assert_eq!(seen, &data[..]);
    // SAFETY: no core runs while the test writes its own memory.
    assert!(unsafe { m.write_at((1 << 20) - 10, &data) }.is_err(), "past the end");
}

#[test]
fn zeroing_outside_a_range_leaves_its_bytes_and_says_where_they_end() {
    let m = PhysMemory::new("outside-test", 1 << 20).unwrap();
    for (off, len) in [(4096u64, 8192usize), ((60 << 10) + 5, 8192), (100 << 10, 8192), (512 << 10, 256 << 10)] {
        // SAFETY: every range is inside the 1 MiB mapping.
        unsafe { std::ptr::write_bytes(m.ptr(off, len as u64).unwrap(), 0x5A, len) };
    }
    // The kept range [64 KiB, 1 MiB): its last data ends at 768 KiB.
    // SAFETY: no core runs while the test writes its own memory.
    assert_eq!(unsafe { m.zero_outside(64 << 10, 1 << 20) }.unwrap(), 768 << 10);
    // SAFETY: the whole mapping is readable.
    let all = unsafe { std::slice::from_raw_parts(m.ptr(0, 1 << 20).unwrap(), 1 << 20) };
    assert!(all[..64 << 10].iter().all(|&b| b == 0), "zeroed below the range");
    assert!(all[64 << 10..(68 << 10) + 5].iter().all(|&b| b == 0x5A), "the range's part of an extent across its start is kept");
    assert!(all[100 << 10..108 << 10].iter().all(|&b| b == 0x5A) && all[512 << 10..768 << 10].iter().all(|&b| b == 0x5A));
    // Nothing in the range: where it starts.
    let n = PhysMemory::new("outside-none", 1 << 20).unwrap();
    // SAFETY: no core runs while the test writes its own memory.
    assert_eq!(unsafe { n.zero_outside(64 << 10, 1 << 20) }.unwrap(), 64 << 10);
}

#[test]
fn zeroing_a_range_punches_its_whole_pages_and_clears_its_ends() {
    let m = PhysMemory::new("range-test", 1 << 20).unwrap();
    // SAFETY: inside the 1 MiB mapping.
    unsafe { std::ptr::write_bytes(m.ptr(0, 64 << 10).unwrap(), 0x5A, 64 << 10) };
    // SAFETY: no core runs while the test writes its own memory.
    unsafe { m.zero_range(100, (40 << 10) - 200) }.unwrap();
    assert!(m.is_hole(4096, 32 << 10), "whole pages given back");
    assert!(!m.is_hole(0, 4096) && !m.is_hole(36 << 10, 4096), "the partial pages at the ends are zeroed in place");
    // SAFETY: the whole mapping is readable.
    let all = unsafe { std::slice::from_raw_parts(m.ptr(0, 64 << 10).unwrap(), 64 << 10) };
    assert!(all[..100].iter().all(|&b| b == 0x5A));
    assert!(all[100..(40 << 10) - 100].iter().all(|&b| b == 0));
    assert!(all[(40 << 10) - 100..].iter().all(|&b| b == 0x5A));
    // SAFETY: no core runs while the test writes its own memory.
    assert!(unsafe { m.zero_range(1 << 20, 1) }.is_err(), "past the end");
}

#[test]
fn memory_on_a_callers_file_keeps_its_bytes_and_is_lengthened() {
    // SAFETY: memfd_create with a literal name; checked.
    let fd = unsafe { libc::memfd_create(c"caller".as_ptr(), libc::MFD_CLOEXEC) };
    assert!(fd >= 0);
    // SAFETY: writing a few bytes to our own memfd.
    assert_eq!(unsafe { libc::pwrite(fd, b"abc".as_ptr().cast(), 3, 8192) }, 3);
    let m = PhysMemory::on_file(fd, 1 << 20).unwrap();
    // SAFETY: inside the 1 MiB mapping.
    assert_eq!(unsafe { std::slice::from_raw_parts(m.ptr(8192, 3).unwrap(), 3) }, b"abc");
    // SAFETY: fstat fills a plain struct for our own descriptor.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
    assert_eq!(st.st_size, 1 << 20);
    drop(m);
    // SAFETY: closing our own descriptor (the memory kept a duplicate,
    // closed with it).
    unsafe { libc::close(fd) };
    assert!(PhysMemory::on_file(-1, 1 << 20).is_err());
}
