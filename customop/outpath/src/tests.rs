//! Every kind of destination, on private nodes in a temporary directory
//! (never /dev itself): device nodes need root, as the tools' CI is.

use super::*;
use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileTypeExt;

fn kind(p: &Path) -> &'static str {
    let t = std::fs::symlink_metadata(p).unwrap().file_type();
    match () {
        _ if t.is_symlink() => "symlink",
        _ if t.is_file() => "file",
        _ if t.is_char_device() => "char device",
        _ if t.is_block_device() => "block device",
        _ if t.is_fifo() => "fifo",
        _ if t.is_socket() => "socket",
        _ if t.is_dir() => "dir",
        _ => "other",
    }
}

/// The names in `dir` (to see that no temporary was left).
fn names(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    v.sort();
    v
}

/// A device node made with mknod(2); `None` (with a note) when this
/// process may not make one (not root).
fn mknod(p: &Path, mode: libc::mode_t, major: u32, minor: u32) -> Option<()> {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    let rc = unsafe { libc::mknod(c.as_ptr(), mode | 0o666, libc::makedev(major, minor)) };
    if rc == 0 {
        return Some(());
    }
    let e = io::Error::last_os_error();
    // SAFETY: geteuid has no preconditions.
    assert!(e.kind() == io::ErrorKind::PermissionDenied && unsafe { libc::geteuid() } != 0, "mknod {}: {e}", p.display());
    eprintln!("skipped: mknod needs root ({e})");
    None
}

fn mkfifo(p: &Path) {
    let c = CString::new(p.as_os_str().as_bytes()).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "{}", io::Error::last_os_error());
}

#[test]
fn a_regular_file_is_replaced_whole_keeping_its_permissions() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("y.npy");
    write(&p, b"first").unwrap();
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o644);
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o600)).unwrap();
    write(&p, b"second").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"second");
    assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
    // A failing writer leaves the old file and no temporary.
    let e = write_with(&p, |f| {
        f.write_all(b"half")?;
        Err(io::Error::other("disk on fire"))
    })
    .unwrap_err();
    assert_eq!(e.to_string(), "disk on fire");
    assert_eq!(std::fs::read(&p).unwrap(), b"second");
    assert_eq!(names(d.path()), ["y.npy"]);
}

#[test]
fn a_symlink_stays_a_link_and_its_target_is_written() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("results")).unwrap();
    let target = d.path().join("results/y.npy");
    std::fs::write(&target, b"old").unwrap();
    // A relative link, through a second (absolute) link.
    let link = d.path().join("link.npy");
    std::os::unix::fs::symlink("results/y.npy", &link).unwrap();
    let link2 = d.path().join("link2.npy");
    std::os::unix::fs::symlink(&link, &link2).unwrap();
    for (l, bytes) in [(&link, b"new1"), (&link2, b"new2")] {
        assert_eq!(destination(l).unwrap(), Destination::Replace(d.path().join("results").join("y.npy")));
        write(l, bytes).unwrap();
        assert_eq!(kind(&link), "symlink");
        assert_eq!(kind(&link2), "symlink");
        assert_eq!(std::fs::read(&target).unwrap(), bytes);
    }
    // The temporary went beside the target, not beside the link.
    assert_eq!(names(&d.path().join("results")), ["y.npy"]);
    // A tool's temporary for a link is made beside the target too, and persisted there.
    let t = temp_beside(&link).unwrap().unwrap();
    assert_eq!(t.parent().unwrap(), d.path().join("results"));
    std::fs::write(&t, b"tool").unwrap();
    persist(t, &link, Mode::FromTool).unwrap();
    assert_eq!((kind(&link), std::fs::read(&target).unwrap()), ("symlink", b"tool".to_vec()));
}

#[test]
fn a_dangling_link_gets_its_target_created() {
    let d = tempfile::tempdir().unwrap();
    let link = d.path().join("out.npy");
    std::os::unix::fs::symlink("made.npy", &link).unwrap();
    write(&link, b"bytes").unwrap();
    assert_eq!(kind(&link), "symlink");
    assert_eq!(std::fs::read(d.path().join("made.npy")).unwrap(), b"bytes");
}

#[test]
fn a_link_loop_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let (a, b) = (d.path().join("a"), d.path().join("b"));
    std::os::unix::fs::symlink(&b, &a).unwrap();
    std::os::unix::fs::symlink(&a, &b).unwrap();
    let e = write(&a, b"x").unwrap_err().to_string();
    assert!(e.contains("symbolic links deep"), "{e}");
    assert_eq!((kind(&a), kind(&b)), ("symlink", "symlink"));
}

#[test]
fn a_directory_is_refused_and_left_as_it_was() {
    let d = tempfile::tempdir().unwrap();
    let dir = d.path().join("out");
    std::fs::create_dir(&dir).unwrap();
    std::fs::write(dir.join("keep"), b"k").unwrap();
    let e = write(&dir, b"x").unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("is a directory; name a file inside it; nothing was written"), "{e}");
    // Through a link, the message says where the link leads.
    let link = d.path().join("l");
    std::os::unix::fs::symlink(&dir, &link).unwrap();
    let e = temp_beside(&link).unwrap_err().to_string();
    assert!(e.contains("(the link leads to"), "{e}");
    assert_eq!(names(&dir), ["keep"]);
    assert_eq!(kind(&link), "symlink");
}

#[test]
fn a_null_device_discards_and_stays_a_device() {
    let d = tempfile::tempdir().unwrap();
    let null = d.path().join("null");
    if mknod(&null, libc::S_IFCHR, 1, 3).is_none() {
        return;
    }
    assert_eq!(destination(&null).unwrap(), Destination::Stream(null.clone()));
    write(&null, &[7u8; 4096]).unwrap();
    assert!(temp_beside(&null).unwrap().is_none());
    // A tool's temporary is copied in, and removed.
    let t = temp_in(d.path(), "t", ".tmp").unwrap();
    std::fs::write(&t, b"abc").unwrap();
    persist(t, &null, Mode::KeepOr644).unwrap();
    assert_eq!(kind(&null), "char device");
    assert_eq!(names(d.path()), ["null"]);
}

#[test]
fn a_full_device_is_an_error_in_the_os_words() {
    let d = tempfile::tempdir().unwrap();
    let full = d.path().join("full");
    if mknod(&full, libc::S_IFCHR, 1, 7).is_none() {
        return;
    }
    let e = write(&full, b"bytes").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENOSPC), "{e}");
    assert!(e.to_string().contains("No space left on device"), "{e}");
    assert_eq!(kind(&full), "char device");
}

#[test]
fn a_block_device_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let blk = d.path().join("disk");
    if mknod(&blk, libc::S_IFBLK, 7, 0).is_none() {
        return;
    }
    let e = write(&blk, b"x").unwrap_err().to_string();
    assert!(e.contains("is a block device"), "{e}");
    assert_eq!(kind(&blk), "block device");
}

#[test]
fn a_fifo_streams_to_its_reader() {
    let d = tempfile::tempdir().unwrap();
    let fifo = d.path().join("pipe");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    // Larger than a pipe's buffer: the writer must stream, not write a file.
    let bytes: Vec<u8> = (0..200_000u32).map(|i| i as u8).collect();
    write(&fifo, &bytes).unwrap();
    assert_eq!(reader.join().unwrap(), bytes);
    assert_eq!(kind(&fifo), "fifo");
    assert_eq!(names(d.path()), ["pipe"]);
}

#[test]
fn a_socket_is_opened_not_replaced() {
    let d = tempfile::tempdir().unwrap();
    let sock = d.path().join("sock");
    let _l = std::os::unix::net::UnixListener::bind(&sock).unwrap();
    assert_eq!(destination(&sock).unwrap(), Destination::Stream(sock.clone()));
    // open(2) of a socket fails (ENXIO), as it does for NumPy: an error, the socket kept.
    let e = write(&sock, b"x").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::ENXIO), "{e}");
    assert_eq!(kind(&sock), "socket");
}

#[test]
fn a_tools_temporary_gets_the_usual_permissions() {
    let d = tempfile::tempdir().unwrap();
    let t = temp_in(d.path(), "t", ".so").unwrap();
    std::fs::set_permissions(&t, std::fs::Permissions::from_mode(0o700)).unwrap();
    let lib = d.path().join("lib.so");
    persist(t, &lib, Mode::FromTool).unwrap();
    assert_eq!(std::fs::metadata(&lib).unwrap().permissions().mode() & 0o777, 0o755);
    let t = temp_in(d.path(), "t", ".json").unwrap();
    let man = d.path().join("m.json");
    persist(t, &man, Mode::FromTool).unwrap();
    assert_eq!(std::fs::metadata(&man).unwrap().permissions().mode() & 0o777, 0o644);
    assert_eq!(names(d.path()), ["lib.so", "m.json"]);
}
