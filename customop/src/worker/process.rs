//! A library's worker process, seen from the parent: forking it (from one
//! spawner thread, so it does not die with a caller's thread), the call
//! memory it shares, and one request's exchange with it (the result
//! frame, its stderr, the bound and the interrupt). The calls that stage
//! arguments and read outputs are [`super::Call`]'s.

use super::doorbell::{spin_until, Doorbell};
use super::early_output::{self, Early, FRAME_OUTPUT};
use super::phase::Phase;
use super::serve::serve;
use super::shm::Shm;
use super::wire::{next_frame, read_log, read_some, write_all, Read};
use crate::isolate::{self, Ended, Outcome, FRAME_RESULT};
use crate::schema::Op;
use crate::sim::SimApi;
use crate::stderr_log::StderrLog;
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::Ordering;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the parent wakes to look at the clock and for an interrupt.
const TICK: Duration = Duration::from_millis(50);

/// A live worker, seen from the parent.
pub(super) struct Worker {
    pid: libc::pid_t,
    /// The process that forked it: a process forked from that one (a
    /// `multiprocessing` child) has a copy of this value, not the worker.
    owner: libc::pid_t,
    /// The request/reply socket.
    ctl: RawFd,
    /// The read end of the worker's stderr (non-blocking).
    err: RawFd,
    shm: Shm,
    /// The phase the worker is in (read when a call ends without a result).
    phase: Phase,
    /// Requests sent and replies received, shared with the worker.
    bell: Doorbell,
    /// Requests sent to it.
    sent: u64,
    /// Where the last call's output lay in the call memory: the worker
    /// may fill it ahead after that call (until `settled` says it is done).
    last_out: Option<(usize, usize)>,
    /// The simulator's environment ([`SIM_ENV`]) it was forked with.
    env: Vec<Option<std::ffi::OsString>>,
}

/// The environment variables the simulator reads when it is made: a
/// worker forked with other values is replaced, as a child forked per
/// call saw them.
const SIM_ENV: &[&str] = &["NEURON_SIM_HBM_GIB", "NEURON_SIM_SANITIZE"];

fn sim_env() -> Vec<Option<std::ffi::OsString>> {
    SIM_ENV.iter().map(std::env::var_os).collect()
}

/// A call's memory above this is given back after the call (a one-off
/// large tensor does not stay resident in an idle worker).
const KEEP_BYTES: usize = 256 << 20;

impl Worker {
    fn spawn(api: SimApi, ops: &[Op], shm: Shm, fill_delay: Option<Duration>) -> io::Result<Self> {
        let phase = Phase::new()?;
        let bell = Doorbell::new()?;
        let mut sv = [0; 2];
        // SAFETY: socketpair writes two descriptors into `sv`.
        if unsafe { libc::socketpair(libc::AF_UNIX, libc::SOCK_STREAM | libc::SOCK_CLOEXEC, 0, sv.as_mut_ptr()) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (err_r, err_w) = match isolate::pipe() {
            Ok(p) => p,
            Err(e) => {
                sv.iter().for_each(|&f| isolate::close(f));
                return Err(e);
            }
        };
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: fork; the child serves requests with the loaded
        // library's code and this crate's, and `_exit`s.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            [sv[0], sv[1], err_r, err_w].iter().for_each(|&f| isolate::close(f));
            return Err(e);
        }
        if pid == 0 {
            serve(parent, api, ops, sv[1], err_r, err_w, shm, phase, bell, fill_delay);
        }
        isolate::close(sv[1]);
        isolate::close(err_w);
        // SAFETY: setting a flag on our own descriptor.
        unsafe { libc::fcntl(err_r, libc::F_SETFL, libc::fcntl(err_r, libc::F_GETFL) | libc::O_NONBLOCK) };
        Ok(Self { pid, owner: parent, ctl: sv[0], err: err_r, shm, phase, bell, sent: 0, last_out: None, env: sim_env() })
    }

    /// Whether the worker is not this process's to use: it has ended (and
    /// is reaped), or another process forked it.
    fn gone(&self) -> bool {
        // SAFETY: getpid has no preconditions.
        self.owner != unsafe { libc::getpid() } || !matches!(isolate::reap_now(self.pid), Ok(None))
    }
}

impl Worker {
    /// Waits until the worker is done with the call memory after the last
    /// call (its fill ahead ended or skipped), or is gone.
    fn wait_settled(&self) {
        while !spin_until(self.bell.settled(), self.sent) {
            if self.gone() {
                return;
            }
            std::thread::sleep(Duration::from_micros(50));
        }
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        // SAFETY: getpid has no preconditions.
        if self.owner == unsafe { libc::getpid() } {
            isolate::kill_and_reap(self.pid);
        }
        isolate::close(self.ctl);
        isolate::close(self.err);
    }
}

/// A job for the spawner thread.
type SpawnJob = Box<dyn FnOnce() + Send>;

/// The thread workers are forked from, and the process it belongs to. A
/// worker dies with the thread that forked it (`PR_SET_PDEATHSIG` follows
/// the thread): forked from a caller's thread, it would die when that
/// thread ends, perhaps during another thread's call. This one lives as
/// long as the process.
static SPAWNER: Mutex<Option<(libc::pid_t, std::sync::mpsc::Sender<SpawnJob>)>> = Mutex::new(None);

impl Worker {
    /// A new worker for the library `api` with `ops`, its call memory
    /// `shm`: [`Worker::spawn`], on the spawner thread.
    pub(super) fn start(api: SimApi, ops: &[Op], shm: Shm, fill_delay: Option<Duration>) -> io::Result<Self> {
        // SAFETY: getpid has no preconditions.
        let me = unsafe { libc::getpid() };
        let ops = ops.to_vec();
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let job: SpawnJob = Box::new(move || {
            let _ = tx.send(Self::spawn(api, &ops, shm, fill_delay));
        });
        let mut spawner = SPAWNER.lock().unwrap_or_else(|e| e.into_inner());
        // None yet, or one of the process this one was forked from (its thread
        // did not come along), or gone.
        let job = match spawner.as_ref().filter(|(pid, _)| *pid == me) {
            Some((_, s)) => s.send(job).err().map(|std::sync::mpsc::SendError(job)| job),
            None => Some(job),
        };
        if let Some(job) = job {
            let (stx, srx) = std::sync::mpsc::channel::<SpawnJob>();
            std::thread::Builder::new().name("customop-spawner".into()).spawn(move || {
                for job in srx {
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })?;
            stx.send(job).map_err(|_| io::Error::other("the worker spawner thread ended"))?;
            *spawner = Some((me, stx));
        }
        drop(spawner);
        rx.recv().map_err(|_| io::Error::other("the worker spawner thread ended"))?
    }

    /// Whether a call must not use it: gone, or forked with another
    /// simulator environment.
    pub(super) fn stale(&self) -> bool {
        self.gone() || self.env != sim_env()
    }

    /// The memory arguments and outputs cross in.
    pub(super) fn shm(&mut self) -> &mut Shm {
        &mut self.shm
    }

    /// Its call memory, taken from a worker that is ended (for the one
    /// that replaces it, with a call's staged arguments in it).
    pub(super) fn into_shm(mut self) -> Shm {
        std::mem::replace(&mut self.shm, Shm { fd: -1, ptr: NonNull::dangling(), len: 0, base: 0 })
    }

    /// Before bytes `at..at + len` of the call memory are written: waits
    /// for the worker's fill ahead of the last output when they overlap it
    /// (both sides would write them at once).
    pub(super) fn settle_before_writing(&self, at: usize, len: usize) {
        if self.last_out.is_some_and(|(o, n)| at < o + n && o < at + len) {
            self.wait_settled();
        }
    }

    /// Where the last call's output lies in the call memory.
    pub(super) fn set_last_out(&mut self, at: usize, len: usize) {
        self.last_out = Some((at, len));
    }

    /// The call is done with the call memory: a large one is given back,
    /// and the worker may fill the next output ahead where this one lies.
    pub(super) fn release_call(&mut self) {
        if self.shm.len > KEEP_BYTES {
            self.shm.release();
        }
        // After any release of it.
        self.bell.released().store(self.sent, Ordering::Release);
    }

    /// Sends `req` and waits for the result frame, the worker's end, the
    /// bound or the interrupt; the worker's stderr meanwhile, and into
    /// `early` the output the worker says is final should the run pass.
    pub(super) fn exchange(
        &mut self,
        req: &[u8],
        timeout: Option<Duration>,
        interrupted: &mut dyn FnMut() -> bool,
        early: &mut Option<Early>,
    ) -> io::Result<Outcome> {
        let start = Instant::now();
        let mut frame = Vec::with_capacity(req.len() + 9);
        frame.push(FRAME_RESULT);
        frame.extend_from_slice(&(req.len() as u64).to_le_bytes());
        frame.extend_from_slice(req);
        let (mut out, mut err) = (Vec::new(), StderrLog::default());
        self.phase.set(0);
        if write_all(self.ctl, &frame).is_err() {
            // Gone before it took the request: the caller forks another.
            isolate::kill_and_reap(self.pid);
            while read_log(self.err, &mut err) == Read::Data {}
            return Ok(Outcome { ended: Ended::Killed { signal: libc::SIGKILL }, stderr: err.into_text(), phase: 0 });
        }
        // Rung, then a short spin for the reply before the blocking wait (see
        // `doorbell`): a small call's reply then finds this side awake.
        self.sent += 1;
        self.bell.posted().store(self.sent, std::sync::atomic::Ordering::Release);
        spin_until(self.bell.replied(), self.sent);
        let mut open = [true, true];
        // Asked when a wait ends without news, a signal broke it, or a tick
        // has passed since the last ask (a worker that keeps writing must not
        // keep Ctrl-C unheard), not on every frame: asking takes the GIL.
        let mut ask = false;
        let mut asked = Instant::now();
        loop {
            // Whole frames first: a result ends the call.
            while let Some((tag, payload, used)) = next_frame(&out) {
                if tag == FRAME_RESULT {
                    let r = payload.to_vec();
                    out.drain(..used);
                    while read_log(self.err, &mut err) == Read::Data {}
                    return Ok(Outcome { ended: Ended::Finished(r), stderr: err.into_text(), phase: self.phase.get() });
                }
                if tag == FRAME_OUTPUT {
                    // Copied now, while the worker's verdict runs (a region
                    // that cannot be mapped leaves it to the result).
                    if let Some((at, len)) = early_output::place(payload) {
                        if at.checked_add(len).is_some_and(|end| self.shm.follow(end).is_ok()) {
                            // SAFETY: the frame says the output is final: the
                            // worker's verdict writes no byte of it.
                            *early = unsafe { self.shm.range(at, len) }.map(|b| Early::copy(b, at));
                        }
                    }
                }
                out.drain(..used);
            }
            ask |= asked.elapsed() >= TICK;
            let interrupt = std::mem::take(&mut ask) && {
                asked = Instant::now();
                interrupted()
            };
            let stopped = if interrupt {
                Some(Ended::Interrupted)
            } else if timeout.is_some_and(|t| start.elapsed() >= t) {
                Some(Ended::TimedOut)
            } else {
                None
            };
            if let Some(end) = stopped {
                isolate::kill_and_reap(self.pid);
                while read_log(self.err, &mut err) == Read::Data {}
                return Ok(Outcome { ended: end, stderr: err.into_text(), phase: self.phase.get() });
            }
            if !open[0] {
                // The socket ended: the worker is gone; what it wrote is in.
                let status = isolate::reap(self.pid, 0)?;
                while read_log(self.err, &mut err) == Read::Data {}
                let ended = if libc::WIFSIGNALED(status) {
                    Ended::Killed { signal: libc::WTERMSIG(status) }
                } else {
                    Ended::Exited { code: libc::WEXITSTATUS(status) }
                };
                return Ok(Outcome { ended, stderr: err.into_text(), phase: self.phase.get() });
            }
            let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
            let wait = left.map_or(TICK, |l| l.min(TICK));
            let mut fds = [
                libc::pollfd { fd: self.ctl, events: libc::POLLIN, revents: 0 },
                libc::pollfd { fd: if open[1] { self.err } else { -1 }, events: libc::POLLIN, revents: 0 },
            ];
            // SAFETY: polling two live pollfd entries.
            let n = unsafe { libc::poll(fds.as_mut_ptr(), 2, wait.as_millis() as i32) };
            if n < 0 {
                let e = io::Error::last_os_error();
                if e.kind() != io::ErrorKind::Interrupted {
                    return Err(e);
                }
                ask = true;
                continue;
            }
            ask |= n == 0;
            if fds[0].revents != 0 && read_some(self.ctl, &mut out) == Read::End {
                open[0] = false;
            }
            if fds[1].revents != 0 && read_log(self.err, &mut err) == Read::End {
                open[1] = false;
            }
        }
    }
}
