//! A persistent run process per loaded library (issue 28): the Python
//! ops' calls go to one forked worker that holds one simulator, made once
//! and reset between runs (`neuron_sim_reset`), instead of a fork and a
//! fresh simulator per call. Arguments and output cross in a shared
//! memory region (a memfd mapped by both, made before the fork, grown on
//! demand); a socket carries the request and the result, a shared page the
//! phase. With a library that has the staging simulator, that memfd is the
//! simulator's HBM: the caller's array is copied once, straight to where
//! the simulator places the argument, and the output once, from where the
//! run left it into the caller's new array (issue 28). A library without
//! it has its arguments copied from the region into HBM and its output
//! back.
//!
//! Every guarantee of [`isolate`] holds: the worker dies with its parent;
//! a crash is its death, reported with its stderr and the phase; a
//! timeout or an interrupt kills it; after any of these the next call
//! forks a new one. A worker found dead between calls (Ctrl-C at the
//! terminal reaches it too) is replaced silently.

mod doorbell;
mod early_output;
mod phase;
mod serve;
mod shared_page;
mod shm;
mod wire;

use crate::contained;
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::{self, Ended, Outcome, FRAME_RESULT};
use crate::npy::Dtype;
use crate::schema::{ArgKind, Op};
use crate::shape::{OutputSpec, Value};
use crate::sim::SimApi;
use crate::stderr_log::StderrLog;
use doorbell::{spin_until, Doorbell};
use early_output::{Early, FRAME_OUTPUT};
use phase::Phase;
use serve::serve;
use shm::Shm;
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use wire::{encode_request, next_frame, read_log, read_some, write_all, Read};

/// How often the parent wakes to look at the clock and for an interrupt.
const TICK: Duration = Duration::from_millis(50);
/// The phases a worker reports (as `contained`'s).
pub(super) const SHAPE: u8 = 1;
pub(super) const KERNEL: u8 = 2;
/// Where in the shared region each argument starts (the simulator copies
/// from there; cache-line alignment keeps those copies fast).
pub(super) const ALIGN: usize = 64;

/// One argument of a call, its bytes (a tensor's) in the shared region.
#[derive(Clone, Debug)]
pub enum Staged {
    /// A tensor: dtype, shape, bytes at `at..at + len` of the region.
    Tensor { dtype: Dtype, shape: Vec<u64>, at: usize, len: usize },
    /// A one-element value: its kind, marshalled dtype and bytes, and
    /// what the shape function sees.
    Value { kind: ArgKind, dtype: Dtype, bytes: Vec<u8>, value: Value },
}

/// A live worker, seen from the parent.
struct Worker {
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

/// [`Worker::spawn`], on the spawner thread.
fn fork_worker(api: SimApi, ops: &[Op], shm: Shm, fill_delay: Option<Duration>) -> io::Result<Worker> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let ops = ops.to_vec();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let job: SpawnJob = Box::new(move || {
        let _ = tx.send(Worker::spawn(api, &ops, shm, fill_delay));
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

/// The worker of one loaded library: forked at the first call, kept
/// between calls, replaced after a crash, a timeout or an interrupt.
pub struct Pool {
    api: SimApi,
    ops: Vec<Op>,
    /// The worker between calls (a call takes it out and puts it back).
    slot: Mutex<Option<Worker>>,
    /// A call holds the worker.
    busy: AtomicBool,
    /// Tests only: the worker waits this long before each fill ahead.
    fill_delay: Option<Duration>,
}

impl Pool {
    /// The (not yet started) worker of the library `api`, whose ops are `ops`.
    pub fn new(api: SimApi, ops: Vec<Op>) -> Self {
        Self { api, ops, slot: Mutex::new(None), busy: AtomicBool::new(false), fill_delay: None }
    }

    /// For a test: a pool whose worker waits `d` before each fill ahead
    /// of an output's place, to show a call never stages over a fill
    /// still going on.
    #[doc(hidden)]
    pub fn with_slow_fill_ahead(mut self, d: Duration) -> Self {
        self.fill_delay = Some(d);
        self
    }

    /// Starts a call, or None while another thread's call holds the
    /// worker (that caller then runs in a one-shot child, `contained`).
    pub fn try_call(&self) -> Option<Call<'_>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        let worker = self.slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        Some(Call { pool: self, guard: worker, staged: Vec::new(), used: 0, writer_map: false })
    }
}

/// A call in preparation: its arguments staged in the worker's region.
/// It holds the library's worker until dropped (after its output is
/// read); it may move between threads (the caller releases the GIL).
pub struct Call<'a> {
    pool: &'a Pool,
    guard: Option<Worker>,
    staged: Vec<Staged>,
    used: usize,
    /// The run keeps its output's writer map ([`Call::keep_writer_map`]).
    writer_map: bool,
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.guard.as_mut() {
            if w.shm.len > KEEP_BYTES {
                w.shm.release();
            }
            // Done with this call's memory (after any release of it): the
            // worker may fill the next output ahead where this one lies.
            w.bell.released().store(w.sent, Ordering::Release);
        }
        *self.pool.slot.lock().unwrap_or_else(|e| e.into_inner()) = self.guard.take();
        self.pool.busy.store(false, Ordering::Release);
    }
}

/// What a finished call gave: the output's spec and the run's status and
/// report; the output's bytes are [`Finished::output`].
pub struct Finished<'a> {
    /// The shape function's output spec.
    pub spec: OutputSpec,
    /// The kernel run's status and report (its output: `output`).
    pub run: Option<(i32, String)>,
    call: Call<'a>,
    out: (usize, usize),
    /// The output, copied while the verdict ran (`early_output`).
    early: Option<Vec<u8>>,
    /// A failed run's output as the kernel left it (empty when the run
    /// passed, or the library cannot say).
    kept: Vec<u8>,
    /// Who wrote the output: its elements and the writer map's cells
    /// (when the call asked, [`Call::keep_writer_map`]).
    writers: Option<(u64, Vec<u16>)>,
}

impl Finished<'_> {
    /// A failed run's output as the kernel left it: what `customop run
    /// --keep-output` writes (empty when the run passed, or the library
    /// cannot say).
    pub fn take_kept(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.kept)
    }

    /// Who wrote the output (when the call asked for it): its elements and
    /// the cells of `neuron_sim_writer_map`, for the report page.
    pub fn take_writers(&mut self) -> Option<(u64, Vec<u16>)> {
        self.writers.take()
    }

    /// The output's bytes when they were copied out while the verdict
    /// ran (a large output; else None: read them with `output`).
    pub fn take_early(&mut self) -> Option<Vec<u8>> {
        self.early.take()
    }

    /// The output's bytes (empty unless the run passed).
    pub fn output(&mut self) -> &[u8] {
        let (at, len) = self.out;
        match self.call.guard.as_mut() {
            // SAFETY: the worker wrote the output before its reply and
            // writes the call memory again only after this call is
            // released (its drop, after this borrow of it ends).
            Some(w) => unsafe { w.shm.range(at, len) }.unwrap_or(&[]),
            None => &[],
        }
    }
}

impl<'a> Call<'a> {
    /// The run keeps who wrote each output element, returned with it
    /// ([`Finished::take_writers`]): a copy of the output's states, so
    /// only when a report page will draw it.
    pub fn keep_writer_map(&mut self) {
        self.writer_map = true;
    }

    fn worker(&mut self) -> Result<&mut Worker> {
        // Replaced only while its memory holds nothing of this call (a
        // worker that dies later is replaced by `run`, memory kept).
        if self.used == 0 && self.guard.as_ref().is_some_and(|w| w.gone() || w.env != sim_env()) {
            self.guard = None;
        }
        if self.guard.is_none() {
            let base = self.pool.api.staging.map_or(0, |s| s.area_offset());
            let w = Shm::new(base)
                .and_then(|shm| fork_worker(self.pool.api, &self.pool.ops, shm, self.pool.fill_delay))
                .map_err(|e| Error::new(ErrorKind::Environment, format!("cannot start the run's worker process: {e}")))?;
            self.guard = Some(w);
        }
        Ok(self.guard.as_mut().expect("just made"))
    }

    /// Stages a tensor, its bytes `data` copied into the region: where the
    /// simulator places it, with the staging simulator. Bytes over the last
    /// call's output place wait for the worker's fill ahead of it to end
    /// (both sides would write them at once).
    pub fn tensor(&mut self, dtype: Dtype, shape: Vec<u64>, data: &[u8]) -> Result<()> {
        let len = data.len();
        let staging = self.pool.api.staging;
        let (at, used) = match staging {
            Some(s) => (self.used, s.place_span(len as u64).and_then(|n| self.used.checked_add(n as usize))),
            None => (self.used.next_multiple_of(ALIGN), Some(self.used.next_multiple_of(ALIGN) + len)),
        };
        let used = used.ok_or_else(|| Error::new(ErrorKind::BadInput, format!("a tensor argument of {len} bytes is larger than the simulated HBM")))?;
        let w = self.worker()?;
        w.shm.grow(at + len).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot grow the run's argument memory to {} bytes: {e}", at + len)))?;
        if w.last_out.is_some_and(|(o, n)| at < o + n && o < at + len) {
            w.wait_settled();
        }
        // No page hashes: the run takes them only if its kernel makes a
        // raw pointer (`neuron_hal_mock::sanitizer`).
        // SAFETY: the caller's turn: the worker reads the call memory only
        // after the request, and writes it before then only over the last
        // output's place, which it has settled (just above) when these
        // bytes overlap it.
        let dst = unsafe { w.shm.range_mut(at, len) }.ok_or_else(|| Error::new(ErrorKind::Environment, "a staged tensor outside the call memory"))?;
        dst.copy_from_slice(data);
        self.used = used;
        self.staged.push(Staged::Tensor { dtype, shape, at, len });
        Ok(())
    }

    /// Stages a value argument (the worker places it: with the staging
    /// simulator it takes its place among the tensors').
    pub fn value(&mut self, kind: ArgKind, dtype: Dtype, bytes: Vec<u8>, value: Value) {
        if let Some(s) = self.pool.api.staging {
            self.used += s.place_span(bytes.len() as u64).unwrap_or(0) as usize;
        }
        self.staged.push(Staged::Value { kind, dtype, bytes, value });
    }

    /// Runs op `op` (its index in the pool's ops) on `cores` in the
    /// worker, within `timeout` and while `interrupted` says no: the
    /// output's spec, the run's status and report, the output.
    pub fn run(
        mut self,
        op: usize,
        labels: &[String],
        cores: u32,
        timeout: Option<Duration>,
        option: &str,
        interrupted: &mut dyn FnMut() -> bool,
    ) -> Result<Finished<'a>> {
        let schema_op = &self.pool.ops[op];
        let req = encode_request(op, cores, self.writer_map, self.used, &self.staged, labels);
        let w = self.worker()?;
        let mut early = None;
        let mut o = exchange(w, &req, timeout, interrupted, &mut early);
        // A worker that died before it took the request (killed between
        // calls, and not reaped yet when the call began) ran nothing of
        // this call: a new one, with the staged arguments, takes it.
        if o.as_ref().is_ok_and(|o| o.phase == 0 && matches!(o.ended, Ended::Killed { signal: libc::SIGKILL } | Ended::Exited { .. })) {
            let mut dead = self.guard.take().expect("a worker ran the call");
            let shm = std::mem::replace(&mut dead.shm, Shm { fd: -1, ptr: NonNull::dangling(), len: 0, base: 0 });
            drop(dead);
            let w = fork_worker(self.pool.api, &self.pool.ops, shm, self.pool.fill_delay)
                .map_err(|e| Error::new(ErrorKind::Environment, format!("cannot start the run's worker process: {e}")))?;
            early = None;
            o = exchange(self.guard.insert(w), &req, timeout, interrupted, &mut early);
        }
        let o = match o {
            Ok(o) => o,
            Err(e) => {
                self.guard = None;
                return Err(Error::new(ErrorKind::Environment, format!("op `{}`: the run's worker process failed: {e}", schema_op.name)));
            }
        };
        if !matches!(o.ended, Ended::Finished(_)) {
            // Killed, dead or stopped: the next call forks a new one.
            self.guard = None;
        }
        let bytes = contained::judge(schema_op, Some(cores), timeout, option, o)?;
        let bad = || Error::new(ErrorKind::Environment, format!("op `{}`: the run's worker sent a result that does not decode", schema_op.name));
        let (head, rest) = bytes.split_at_checked(24).ok_or_else(bad)?;
        let word = |i: usize| u64::from_le_bytes(head[i * 8..i * 8 + 8].try_into().expect("8 bytes")) as usize;
        let (at, len, region) = (word(0), word(1), word(2));
        let (spec, run) = contained::decode(rest).ok_or_else(bad)??;
        let w = self.guard.as_mut().ok_or_else(bad)?;
        w.shm.follow(region).map_err(|e| Error::new(ErrorKind::Environment, format!("op `{}`: cannot map the run's output: {e}", schema_op.name)))?;
        if at.checked_add(len).is_none_or(|e| e > w.shm.len) {
            return Err(bad());
        }
        let early = early.and_then(|e| e.take_if(at, len)).filter(|_| run.as_ref().is_some_and(|r| r.rc == 0));
        if let Some(w) = self.guard.as_mut() {
            w.last_out = Some((at, len));
        }
        let (run, kept, writers) = match run {
            Some(r) => (Some((r.rc, r.report)), r.data, r.writers),
            None => (None, Vec::new(), None),
        };
        Ok(Finished { spec, run, call: self, out: (at, len), early, kept, writers })
    }
}

/// Sends `req` and waits for the result frame, the worker's end, the
/// bound or the interrupt; the worker's stderr meanwhile, and into
/// `early` the output the worker says is final should the run pass.
fn exchange(w: &mut Worker, req: &[u8], timeout: Option<Duration>, interrupted: &mut dyn FnMut() -> bool, early: &mut Option<Early>) -> io::Result<Outcome> {
    let start = Instant::now();
    let mut frame = Vec::with_capacity(req.len() + 9);
    frame.push(FRAME_RESULT);
    frame.extend_from_slice(&(req.len() as u64).to_le_bytes());
    frame.extend_from_slice(req);
    let (mut out, mut err) = (Vec::new(), StderrLog::default());
    w.phase.set(0);
    if write_all(w.ctl, &frame).is_err() {
        // Gone before it took the request: the caller forks another.
        isolate::kill_and_reap(w.pid);
        while read_log(w.err, &mut err) == Read::Data {}
        return Ok(Outcome { ended: Ended::Killed { signal: libc::SIGKILL }, stderr: err.into_text(), phase: 0 });
    }
    // Rung, then a short spin for the reply before the blocking wait (see
    // `doorbell`): a small call's reply then finds this side awake.
    w.sent += 1;
    w.bell.posted().store(w.sent, std::sync::atomic::Ordering::Release);
    spin_until(w.bell.replied(), w.sent);
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
                while read_log(w.err, &mut err) == Read::Data {}
                return Ok(Outcome { ended: Ended::Finished(r), stderr: err.into_text(), phase: w.phase.get() });
            }
            if tag == FRAME_OUTPUT {
                // Copied now, while the worker's verdict runs (a region
                // that cannot be mapped leaves it to the result).
                if let Some((at, len)) = early_output::place(payload) {
                    if at.checked_add(len).is_some_and(|end| w.shm.follow(end).is_ok()) {
                        // SAFETY: the frame says the output is final: the
                        // worker's verdict writes no byte of it.
                        *early = unsafe { w.shm.range(at, len) }.map(|b| Early::copy(b, at));
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
            isolate::kill_and_reap(w.pid);
            while read_log(w.err, &mut err) == Read::Data {}
            return Ok(Outcome { ended: end, stderr: err.into_text(), phase: w.phase.get() });
        }
        if !open[0] {
            // The socket ended: the worker is gone; what it wrote is in.
            let status = isolate::reap(w.pid, 0)?;
            while read_log(w.err, &mut err) == Read::Data {}
            let ended =
                if libc::WIFSIGNALED(status) { Ended::Killed { signal: libc::WTERMSIG(status) } } else { Ended::Exited { code: libc::WEXITSTATUS(status) } };
            return Ok(Outcome { ended, stderr: err.into_text(), phase: w.phase.get() });
        }
        let left = timeout.map(|t| t.saturating_sub(start.elapsed()));
        let wait = left.map_or(TICK, |l| l.min(TICK));
        let mut fds = [
            libc::pollfd { fd: w.ctl, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: if open[1] { w.err } else { -1 }, events: libc::POLLIN, revents: 0 },
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
        if fds[0].revents != 0 && read_some(w.ctl, &mut out) == Read::End {
            open[0] = false;
        }
        if fds[1].revents != 0 && read_log(w.err, &mut err) == Read::End {
            open[1] = false;
        }
    }
}
