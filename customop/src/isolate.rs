//! Runs a job (a shape function and a kernel) in a forked child process,
//! bounded in time and stoppable.
//!
//! Why a child: a kernel is native code on the simulator's threads. A
//! thread cannot be killed safely in-process (it may hold the allocator's
//! lock, or a core half-updated), and a SIGSEGV or `abort()` ends the
//! whole process. In a child, a timeout or Ctrl-C is a SIGKILL of the
//! child, which the kernel cannot survive or corrupt anything by, and a
//! crash is the child's death, which the parent reports; the parent's
//! state is untouched, so the next call works. The child is forked (not
//! exec'd): it shares the loaded library and the arguments as they are,
//! and does only the job, then `_exit`s. It dies with its parent
//! (PR_SET_PDEATHSIG), so a killed tool leaves no kernel spinning.

use crate::stderr_log::StderrLog;
use std::io;
use std::os::fd::RawFd;
use std::time::{Duration, Instant};

/// How often the parent wakes to look at the clock and for an interrupt.
const TICK: Duration = Duration::from_millis(50);

/// A tagged frame of the child's channel: the phase it entered.
pub(crate) const FRAME_PHASE: u8 = 1;
/// A tagged frame of the child's channel: the job's result.
pub(crate) const FRAME_RESULT: u8 = 2;

/// What the child tells the parent while it works.
pub struct Channel {
    pub(crate) fd: RawFd,
}

impl Channel {
    /// The child entered phase `p` (named by the parent on a crash or a
    /// timeout).
    pub fn phase(&mut self, p: u8) {
        self.frame(FRAME_PHASE, &[p]);
    }

    pub(crate) fn frame(&mut self, tag: u8, payload: &[u8]) {
        let mut b = Vec::with_capacity(payload.len() + 9);
        b.push(tag);
        b.extend_from_slice(&(payload.len() as u64).to_le_bytes());
        b.extend_from_slice(payload);
        let mut rest = &b[..];
        while !rest.is_empty() {
            // SAFETY: writing initialised bytes to the pipe this child owns.
            let n = unsafe { libc::write(self.fd, rest.as_ptr().cast(), rest.len()) };
            if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
                continue;
            }
            if n <= 0 {
                return;
            }
            rest = &rest[n as usize..];
        }
    }
}

/// How the child ended.
#[derive(Debug)]
pub enum Ended {
    /// It finished the job: its result.
    Finished(Vec<u8>),
    /// It died of signal `signal`.
    Killed { signal: i32 },
    /// It exited with `code` without a result (a panic).
    Exited { code: i32 },
    /// The time bound passed: it was killed.
    TimedOut,
    /// `interrupted` said to stop: it was killed.
    Interrupted,
}

/// The child's end, what it wrote to stderr, and the last phase it
/// entered (0: none).
#[derive(Debug)]
pub struct Outcome {
    /// How it ended.
    pub ended: Ended,
    /// Its stderr (the crash report, anything the kernel printed there).
    pub stderr: String,
    /// The last phase it entered.
    pub phase: u8,
}

/// Runs `job` in a child process; waits at most `timeout`, and stops it
/// when `interrupted` (asked every [`TICK`]) says so. The child's stderr
/// is collected, not shown.
pub fn run(job: impl FnOnce(&mut Channel) -> Vec<u8>, timeout: Option<Duration>, interrupted: &mut dyn FnMut() -> bool) -> io::Result<Outcome> {
    let (res_r, res_w) = pipe()?;
    let (err_r, err_w) = match pipe() {
        Ok(p) => p,
        Err(e) => {
            close(res_r);
            close(res_w);
            return Err(e);
        }
    };
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: fork; the child runs only the job (the loaded library's
    // code and this crate's), then `_exit`s without running the parent's
    // atexit handlers or destructors.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        let e = io::Error::last_os_error();
        for fd in [res_r, res_w, err_r, err_w] {
            close(fd);
        }
        return Err(e);
    }
    if pid == 0 {
        child(parent, res_w, err_r, err_w, job);
    }
    close(res_w);
    close(err_w);
    let r = wait_for(pid, res_r, err_r, timeout, interrupted);
    close(res_r);
    close(err_r);
    r
}

/// The child's side: [`child_prologue`], the job, its result, `_exit`.
/// (The parent's end of the result pipe goes with every other descriptor.)
fn child(parent: libc::pid_t, res_w: RawFd, err_r: RawFd, err_w: RawFd, job: impl FnOnce(&mut Channel) -> Vec<u8>) -> ! {
    child_prologue(parent, err_r, err_w, &[res_w]);
    let mut ch = Channel { fd: res_w };
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(&mut ch)));
    let code = match r {
        Ok(bytes) => {
            ch.frame(FRAME_RESULT, &bytes);
            0
        }
        Err(_) => 101,
    };
    // SAFETY: ends the child without unwinding into the parent's frames.
    unsafe { libc::_exit(code) }
}

pub(crate) fn pipe() -> io::Result<(RawFd, RawFd)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 writes two descriptors into `fds`.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((fds[0], fds[1]))
}

/// What a forked child (a run's, or a library's worker) does first: it
/// dies with the parent (a child whose parent died before the prctl
/// exits at once); SIGINT goes back to its default (Ctrl-C ends it; the
/// parent decides what that means); its stderr goes into the pipe
/// `err_w` (`err_r` is the parent's end); and every other descriptor it
/// inherited is closed but 0, 1 and `keep`.
///
/// Why close them: a fork copies every descriptor the process has open at
/// that moment, whichever thread opened it: another thread's compiler
/// pipe (whose reader then waits for an end of file that never comes
/// while the child lives), a build directory's lock (held, then, as long
/// as the child), a sibling run's pipes. A library's worker lives as long
/// as the library: what it kept would block a rebuild of that library
/// forever (issue: reload under load).
pub(crate) fn child_prologue(parent: libc::pid_t, err_r: RawFd, err_w: RawFd, keep: &[RawFd]) {
    // SAFETY: plain system calls on this process and on descriptors it
    // owns.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::close(err_r);
        libc::dup2(err_w, 2);
        if err_w != 2 {
            libc::close(err_w);
        }
    }
    close_inherited(keep);
}

/// Closes every descriptor from 3 up but those in `keep`.
pub(crate) fn close_inherited(keep: &[RawFd]) {
    let mut keep: Vec<u32> = keep.iter().filter(|&&f| f > 2).map(|&f| f as u32).collect();
    keep.sort_unstable();
    let mut from = 3u32;
    for k in keep.iter().copied().chain([u32::MAX]) {
        if k > from {
            let to = if k == u32::MAX { u32::MAX } else { k - 1 };
            // SAFETY: close_range(2) on this process's own descriptor
            // table; no pointer is involved.
            let rc = unsafe { libc::syscall(libc::SYS_close_range, from, to, 0u32) };
            if rc != 0 {
                close_listed(from, to);
            }
        }
        from = from.max(k.saturating_add(1));
    }
}

/// close_range's fallback (Linux before 5.9): the open descriptors in
/// `[from, to]`, as /proc lists them, closed one by one.
fn close_listed(from: u32, to: u32) {
    let open: Vec<u32> = match std::fs::read_dir("/proc/self/fd") {
        Ok(d) => d.flatten().filter_map(|e| e.file_name().to_str()?.parse().ok()).collect(),
        Err(_) => return,
    };
    for fd in open.into_iter().filter(|f| (from..=to).contains(f)) {
        close(fd as RawFd);
    }
}

pub(crate) fn close(fd: RawFd) {
    // SAFETY: closing a descriptor this module opened and owns.
    unsafe { libc::close(fd) };
}

/// Reads what `fd` has now (non-blocking poll said it is readable) into
/// `put`; false at end of file or on error.
pub(crate) fn drain(fd: RawFd, put: &mut dyn FnMut(&[u8])) -> bool {
    let mut chunk = [0u8; 1 << 16];
    // SAFETY: reading into a live local buffer of its length.
    let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
    if n > 0 {
        put(&chunk[..n as usize]);
        true
    } else {
        n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted
    }
}

/// The parent's side: reads both pipes until the child is gone, within
/// the bounds; kills the child when they pass; reaps it. The child's exit
/// is watched, not only the pipes' end: a sibling child forked by another
/// thread meanwhile may hold their write ends open.
fn wait_for(pid: libc::pid_t, res: RawFd, err: RawFd, timeout: Option<Duration>, interrupted: &mut dyn FnMut() -> bool) -> io::Result<Outcome> {
    let start = Instant::now();
    let mut bufs = (Vec::new(), StderrLog::default());
    let mut open = [true, true];
    let mut stop = None;
    let mut status = None;
    while status.is_none() {
        if interrupted() {
            stop = Some(Ended::Interrupted);
            break;
        }
        let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
        if left == Some(Duration::ZERO) {
            stop = Some(Ended::TimedOut);
            break;
        }
        let wait = left.map_or(TICK, |l| l.min(TICK));
        if let Err(e) = read_ready(res, err, &mut open, &mut bufs, wait) {
            kill_and_reap(pid);
            return Err(e);
        }
        if !open[0] && !open[1] {
            status = Some(reap(pid, 0)?);
        } else if let Some(s) = reap_now(pid)? {
            // Gone: what it wrote is in the pipes already.
            while (open[0] || open[1]) && read_ready(res, err, &mut open, &mut bufs, Duration::ZERO)? {}
            status = Some(s);
        }
    }
    let (out, errb) = bufs;
    let (phase, result) = frames(&out);
    let stderr = errb.into_text();
    let Some(status) = status else {
        kill_and_reap(pid);
        return Ok(Outcome { ended: stop.unwrap_or(Ended::Interrupted), stderr, phase });
    };
    let ended = if libc::WIFSIGNALED(status) {
        Ended::Killed { signal: libc::WTERMSIG(status) }
    } else {
        match result {
            Some(r) if libc::WEXITSTATUS(status) == 0 => Ended::Finished(r),
            _ => Ended::Exited { code: libc::WEXITSTATUS(status) },
        }
    };
    Ok(Outcome { ended, stderr, phase })
}

/// Waits up to `wait` for either open pipe to be readable and reads what
/// is there; a pipe at its end is marked closed. Whether anything was read.
fn read_ready(res: RawFd, err: RawFd, open: &mut [bool; 2], bufs: &mut (Vec<u8>, StderrLog), wait: Duration) -> io::Result<bool> {
    let fd = |i: usize, f: RawFd| if open[i] { f } else { -1 };
    let mut fds = [libc::pollfd { fd: fd(0, res), events: libc::POLLIN, revents: 0 }, libc::pollfd { fd: fd(1, err), events: libc::POLLIN, revents: 0 }];
    // SAFETY: polling two live pollfd entries (a negative fd is skipped).
    let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait.as_millis() as i32) };
    if n < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted { Ok(false) } else { Err(e) };
    }
    let mut any = false;
    for (i, f) in [res, err].into_iter().enumerate() {
        if open[i] && fds[i].revents != 0 {
            any = true;
            let more = if i == 0 { drain(f, &mut |b| bufs.0.extend_from_slice(b)) } else { drain(f, &mut |b| bufs.1.push(b)) };
            if !more {
                open[i] = false;
            }
        }
    }
    Ok(any)
}

/// The last phase and the result the frames in `b` give (a cut last
/// frame is ignored).
fn frames(mut b: &[u8]) -> (u8, Option<Vec<u8>>) {
    let (mut phase, mut result) = (0, None);
    while b.len() >= 9 {
        let len = u64::from_le_bytes(b[1..9].try_into().expect("8 bytes")) as usize;
        let Some(payload) = b.get(9..9usize.saturating_add(len)) else { break };
        match b[0] {
            FRAME_PHASE => phase = payload.first().copied().unwrap_or(0),
            FRAME_RESULT => result = Some(payload.to_vec()),
            _ => {}
        }
        b = &b[9 + len..];
    }
    (phase, result)
}

/// Waits for child `pid` (`flags`: 0 or WNOHANG); its status.
pub(crate) fn reap(pid: libc::pid_t, flags: i32) -> io::Result<i32> {
    let mut status = 0;
    loop {
        // SAFETY: waiting for our own child, status into a local.
        if unsafe { libc::waitpid(pid, &mut status, flags) } == pid {
            return Ok(status);
        }
        let e = io::Error::last_os_error();
        if e.kind() != io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}

/// The child's status if it has ended, without waiting.
pub(crate) fn reap_now(pid: libc::pid_t) -> io::Result<Option<i32>> {
    let mut status = 0;
    // SAFETY: polling our own child's state, status into a local.
    match unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) } {
        0 => Ok(None),
        p if p == pid => Ok(Some(status)),
        _ => Err(io::Error::last_os_error()),
    }
}

pub(crate) fn kill_and_reap(pid: libc::pid_t) {
    // SAFETY: signalling our own child, not yet reaped (its pid is ours
    // until `reap`).
    unsafe { libc::kill(pid, libc::SIGKILL) };
    let _ = reap(pid, 0);
}

/// The name of signal `sig`.
pub fn signal_name(sig: i32) -> String {
    match sig {
        libc::SIGSEGV => "SIGSEGV".into(),
        libc::SIGBUS => "SIGBUS".into(),
        libc::SIGILL => "SIGILL".into(),
        libc::SIGFPE => "SIGFPE".into(),
        libc::SIGABRT => "SIGABRT".into(),
        libc::SIGKILL => "SIGKILL".into(),
        libc::SIGINT => "SIGINT".into(),
        libc::SIGTERM => "SIGTERM".into(),
        _ => format!("signal {sig}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn never(_: &mut Channel) -> Vec<u8> {
        loop {
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn a_finished_job_gives_its_result_and_phase() {
        let o = run(
            |ch| {
                ch.phase(2);
                vec![7; 200_000]
            },
            None,
            &mut || false,
        )
        .unwrap();
        assert!(matches!(o.ended, Ended::Finished(ref r) if r.len() == 200_000 && r[0] == 7), "{o:?}");
        assert_eq!(o.phase, 2);
    }

    /// A descriptor another thread had open at the fork (a compiler's
    /// pipe, a build lock) is closed in the child: the pipe's reader sees
    /// its end while the child still runs.
    #[test]
    fn a_child_keeps_no_descriptor_it_inherited() {
        let (r, w) = pipe().unwrap();
        let o = run(
            move |_| {
                // SAFETY: F_GETFD on a descriptor number; no pointer.
                let open = |fd| unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1;
                let (a, b) = (open(r), open(w));
                // The reader's end of file, seen while this child lives.
                std::thread::sleep(Duration::from_millis(300));
                vec![u8::from(a), u8::from(b), u8::from(open(2))]
            },
            None,
            &mut || false,
        );
        close(w);
        let mut buf = [0u8; 1];
        // SAFETY: reading into a live one-byte buffer.
        let n = unsafe { libc::read(r, buf.as_mut_ptr().cast(), 1) };
        close(r);
        let o = o.unwrap();
        assert!(matches!(o.ended, Ended::Finished(ref b) if b[..] == [0, 0, 1]), "{o:?}");
        assert_eq!(n, 0, "the pipe's write end stayed open");
        // close_inherited keeps exactly what it is told (and 0 to 2).
        let kept = run(
            |ch| {
                let (a, b) = pipe().unwrap();
                let (c, d) = pipe().unwrap();
                close_inherited(&[b, d, ch.fd]);
                // SAFETY: F_GETFD on descriptor numbers; no pointer.
                let open = |fd| u8::from(unsafe { libc::fcntl(fd, libc::F_GETFD) } != -1);
                vec![open(a), open(b), open(c), open(d), open(2)]
            },
            None,
            &mut || false,
        )
        .unwrap();
        assert!(matches!(kept.ended, Ended::Finished(ref b) if b[..] == [0, 1, 0, 1, 1]), "{kept:?}");
    }

    #[test]
    fn a_crash_is_the_signal_and_the_stderr() {
        let o = run(
            |ch| {
                ch.phase(1);
                // SAFETY: writing a literal to stderr, then aborting the child.
                unsafe {
                    libc::write(2, b"dying\n".as_ptr().cast(), 6);
                    libc::abort()
                }
            },
            None,
            &mut || false,
        )
        .unwrap();
        assert!(matches!(o.ended, Ended::Killed { signal: libc::SIGABRT }), "{o:?}");
        assert_eq!((o.stderr.as_str(), o.phase), ("dying\n", 1));
    }

    #[test]
    fn a_job_past_its_time_or_interrupted_is_killed() {
        let t = Instant::now();
        let o = run(never, Some(Duration::from_millis(200)), &mut || false).unwrap();
        assert!(matches!(o.ended, Ended::TimedOut), "{o:?}");
        assert!(t.elapsed() < Duration::from_secs(5));
        let mut asked = 0;
        let o = run(never, None, &mut || {
            asked += 1;
            asked > 3
        })
        .unwrap();
        assert!(matches!(o.ended, Ended::Interrupted), "{o:?}");
    }
}
