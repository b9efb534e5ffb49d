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
        child(parent, res_r, res_w, err_r, err_w, job);
    }
    close(res_w);
    close(err_w);
    let r = wait_for(pid, res_r, err_r, timeout, interrupted);
    close(res_r);
    close(err_r);
    r
}

/// The child's side: dies with the parent, stderr into the pipe, SIGINT
/// back to its default (Ctrl-C ends it; the parent decides what that
/// means), the job, its result, `_exit`.
fn child(parent: libc::pid_t, res_r: RawFd, res_w: RawFd, err_r: RawFd, err_w: RawFd, job: impl FnOnce(&mut Channel) -> Vec<u8>) -> ! {
    // SAFETY: plain system calls on this process and on descriptors it
    // owns; a child whose parent died before the prctl exits at once.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::close(res_r);
        libc::close(err_r);
        libc::dup2(err_w, 2);
        libc::close(err_w);
    }
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
