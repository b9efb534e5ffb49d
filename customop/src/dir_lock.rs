//! A build directory's lock file (`customop-build/lock`): opened so that
//! nothing planted there can hang or redirect the tool — never through a
//! symbolic link, never blocking on a FIFO's open, and only when it is a
//! regular file — created 0600, and waited for within a bound: a lock
//! held past it is an error that names the holder (from `/proc/locks`)
//! and what to do, not a hang.

use crate::error::{Error, ErrorKind, Result};
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;
use std::time::{Duration, Instant};

/// The variable that sets how long to wait for a lock, in seconds.
pub const WAIT_ENV: &str = "NEURONCUSTOMOP_LOCK_TIMEOUT";

/// How long a build or a load waits for another build of the same
/// directory by default.
const DEFAULT_WAIT: Duration = Duration::from_secs(600);

/// Shared (a reader) or exclusive (a build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Shared,
    Exclusive,
}

/// Opens (`create`: creating it 0600) the lock file at `path` and takes
/// it in `mode`. `Ok(None)`: no lock file and `create` false.
pub fn take(path: &Path, mode: Mode, create: bool) -> Result<Option<File>> {
    let mut o = std::fs::OpenOptions::new();
    o.read(true).custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC);
    if create {
        o.write(true).create(true).truncate(false).mode(0o600);
    }
    let f = match o.open(path) {
        Ok(f) => f,
        Err(e) if !create && e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Err(not_a_lock(path, "a symbolic link")),
        Err(e) => return Err(Error::io(if create { "create" } else { "open" }, path, e)),
    };
    let m = f.metadata().map_err(|e| Error::io("read", path, e))?;
    if !m.is_file() {
        return Err(not_a_lock(path, "not a regular file"));
    }
    if m.uid() == crate::users::euid() && m.permissions().mode() & 0o077 != 0 {
        // A lock from before locks were private: others could hold it.
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
    wait(&f, path, mode, wait_bound()?)?;
    Ok(Some(f))
}

fn not_a_lock(path: &Path, what: &str) -> Error {
    Error::new(
        ErrorKind::Io,
        format!("{} is {what}: a build directory's lock is a regular file the build makes; remove it (nothing else uses it)", path.display()),
    )
}

fn wait_bound() -> Result<Duration> {
    match std::env::var(WAIT_ENV) {
        Err(_) => Ok(DEFAULT_WAIT),
        Ok(v) => match v.trim().parse::<f64>() {
            Ok(s) if (0.0..1e9).contains(&s) => Ok(Duration::from_secs_f64(s)),
            _ => Err(Error::new(ErrorKind::Usage, format!("{WAIT_ENV}={v:?}: give a number of seconds (0 or more)"))),
        },
    }
}

/// Takes the lock, retrying until `bound` has passed.
fn wait(f: &File, path: &Path, mode: Mode, bound: Duration) -> Result<()> {
    let started = Instant::now();
    let mut pause = Duration::from_millis(5);
    loop {
        let got = match mode {
            Mode::Shared => f.try_lock_shared(),
            Mode::Exclusive => f.try_lock(),
        };
        match got {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io("lock", path, e)),
            Err(std::fs::TryLockError::WouldBlock) if started.elapsed() >= bound => return Err(held(f, path, bound)),
            Err(std::fs::TryLockError::WouldBlock) => {
                std::thread::sleep(pause.min(bound.saturating_sub(started.elapsed())));
                pause = (pause * 2).min(Duration::from_millis(200));
            }
        }
    }
}

fn held(f: &File, path: &Path, bound: Duration) -> Error {
    let holder = f.metadata().ok().and_then(|m| holder(m.dev(), m.ino()));
    let who = match holder {
        Some(pid) => {
            let user = std::fs::metadata(format!("/proc/{pid}")).ok().map(|m| crate::users::describe(m.uid()));
            let cmd = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok().map(|c| c.trim().to_owned());
            let mut s = format!("process {pid}");
            if let Some(c) = cmd {
                s.push_str(&format!(" ({c})"));
            }
            if let Some(u) = user {
                s.push_str(&format!(" of {u}"));
            }
            s
        }
        None => "another process (not found in /proc/locks)".to_owned(),
    };
    Error::new(
        ErrorKind::Io,
        format!(
            "{} is held by {who} and was not released within {:.0} s: another build of this directory is running, or hangs; \
             wait for it to finish or stop it, or use another build directory ({WAIT_ENV} sets the wait in seconds)",
            path.display(),
            bound.as_secs_f64()
        ),
    )
}

/// The pid holding a lock on the file `dev`/`ino`, from `/proc/locks`
/// (lines `N: FLOCK ADVISORY WRITE PID MAJ:MIN:INODE START END`; a waiter's
/// lines carry `->`).
fn holder(dev: u64, ino: u64) -> Option<u32> {
    let text = std::fs::read_to_string("/proc/locks").ok()?;
    let want = format!("{:02x}:{:02x}:{ino}", libc::major(dev), libc::minor(dev));
    holder_in(&text, &want)
}

fn holder_in(text: &str, want: &str) -> Option<u32> {
    text.lines().filter(|l| !l.contains("->")).find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.get(5) == Some(&want)).then(|| f.get(4)?.parse().ok()).flatten().filter(|&p| p > 0)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn proc_locks_lines_name_the_holder() {
        let text =
            "1: FLOCK  ADVISORY  WRITE 4242 fd:01:131 0 EOF\n1: -> FLOCK  ADVISORY  WRITE 77 fd:01:131 0 EOF\n2: POSIX  ADVISORY  READ 9 00:15:7 0 EOF\n";
        assert_eq!(holder_in(text, "fd:01:131"), Some(4242));
        assert_eq!(holder_in(text, "00:15:7"), Some(9));
        assert_eq!(holder_in(text, "00:15:8"), None);
    }

    #[test]
    fn a_held_lock_is_an_error_naming_the_holder_within_the_bound() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("lock");
        let held_here = take(&p, Mode::Exclusive, true).unwrap().unwrap();
        assert_eq!(std::fs::metadata(&p).unwrap().permissions().mode() & 0o777, 0o600);
        let other = std::fs::File::open(&p).unwrap();
        let started = Instant::now();
        let e = wait(&other, &p, Mode::Shared, Duration::from_millis(300)).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5));
        assert!(e.message.contains(&format!("is held by process {}", std::process::id())), "{e}");
        drop(held_here);
        wait(&other, &p, Mode::Shared, Duration::from_millis(300)).unwrap();
    }

    #[test]
    fn a_fifo_or_a_link_is_refused_without_hanging() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("lock");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(take(&fifo, Mode::Exclusive, true).unwrap_err().message.contains("not a regular file"));
        let link = d.path().join("lock2");
        std::os::unix::fs::symlink(d.path().join("target"), &link).unwrap();
        assert!(take(&link, Mode::Shared, true).unwrap_err().message.contains("a symbolic link"));
        assert!(!d.path().join("target").exists(), "the link was not followed");
    }
}
