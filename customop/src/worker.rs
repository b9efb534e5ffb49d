//! A persistent run process per loaded library (issue 28): the Python
//! ops' calls go to one forked worker that holds one simulator, made once
//! and reset between runs (`neuron_sim_reset`), instead of a fork and a
//! fresh simulator per call. Arguments and output cross in a shared
//! memory region (a memfd mapped by both, made before the fork, grown on
//! demand), copied once each way; a socket carries the request, the
//! phase frames and the result.
//!
//! Every guarantee of [`isolate`] holds: the worker dies with its parent;
//! a crash is its death, reported with its stderr and the phase; a
//! timeout or an interrupt kills it; after any of these the next call
//! forks a new one. A worker found dead between calls (Ctrl-C at the
//! terminal reaches it too) is replaced silently.

use crate::contained::{self, SimRun};
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::{self, Channel, Ended, Outcome, FRAME_PHASE, FRAME_RESULT};
use crate::npy::Dtype;
use crate::schema::{ArgKind, Op};
use crate::shape::{self, OutputSpec, Value};
use crate::sim::{Sim, SimApi};
use std::io;
use std::os::fd::RawFd;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How often the parent wakes to look at the clock and for an interrupt.
const TICK: Duration = Duration::from_millis(50);
/// The phases a worker reports (as `contained`'s).
const SHAPE: u8 = 1;
const KERNEL: u8 = 2;
/// Where in the shared region each argument starts (the simulator copies
/// from there; cache-line alignment keeps those copies fast).
const ALIGN: usize = 64;

/// A memfd mapped shared: the parent's and the worker's view of the
/// argument and output bytes.
struct Shm {
    fd: RawFd,
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the mapping is owned by this value; access goes through `&mut`.
unsafe impl Send for Shm {}

impl Shm {
    fn new() -> io::Result<Self> {
        // SAFETY: memfd_create with a literal name; the fd is checked.
        let fd = unsafe { libc::memfd_create(c"customop-args".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let mut s = Self { fd, ptr: NonNull::dangling(), len: 0 };
        s.grow(1 << 16)?;
        Ok(s)
    }

    /// Maps the first `len` bytes of the memfd (replacing the old view).
    fn map(&mut self, len: usize) -> io::Result<()> {
        // SAFETY: mapping our own memfd, shared; the old view is unmapped
        // after the new one exists (no reference into it is live: every
        // access goes through `&mut self`).
        let p = unsafe { libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, self.fd, 0) };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        if self.len > 0 {
            // SAFETY: the old view, ours, no longer used.
            unsafe { libc::munmap(self.ptr.as_ptr().cast(), self.len) };
        }
        self.ptr = NonNull::new(p.cast()).ok_or_else(|| io::Error::other("mmap returned null"))?;
        self.len = len;
        Ok(())
    }

    /// Makes the region at least `n` bytes (both sides' memfd; this
    /// side's view).
    fn grow(&mut self, n: usize) -> io::Result<()> {
        if n <= self.len {
            return Ok(());
        }
        // Never below what the other side made it.
        // SAFETY: fstat fills a plain struct for our own descriptor.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        let now = if unsafe { libc::fstat(self.fd, &mut st) } == 0 { st.st_size as usize } else { 0 };
        let len = n.next_power_of_two().max(now);
        // SAFETY: resizing our own memfd.
        if unsafe { libc::ftruncate(self.fd, len as libc::off_t) } != 0 {
            return Err(io::Error::last_os_error());
        }
        self.map(len)
    }

    /// Follows the other side's growth: maps `n` bytes if the view is smaller.
    fn follow(&mut self, n: usize) -> io::Result<()> {
        if n > self.len {
            self.map(n)?;
        }
        Ok(())
    }

    /// Gives the pages back (both views then read zeros; the size stays).
    fn release(&mut self) {
        // SAFETY: punching a hole in our own memfd.
        unsafe { libc::fallocate(self.fd, libc::FALLOC_FL_PUNCH_HOLE | libc::FALLOC_FL_KEEP_SIZE, 0, self.len as libc::off_t) };
    }

    fn bytes(&mut self) -> &mut [u8] {
        // SAFETY: the view is `len` bytes, mapped for our lifetime.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for Shm {
    fn drop(&mut self) {
        if self.fd < 0 {
            return;
        }
        // SAFETY: our own view and descriptor.
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
            libc::close(self.fd);
        }
    }
}

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
    fn spawn(api: SimApi, ops: &[Op], shm: Shm) -> io::Result<Self> {
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
            serve(parent, api, ops, sv[1], sv[0], err_r, err_w, shm);
        }
        isolate::close(sv[1]);
        isolate::close(err_w);
        // SAFETY: setting a flag on our own descriptor.
        unsafe { libc::fcntl(err_r, libc::F_SETFL, libc::fcntl(err_r, libc::F_GETFL) | libc::O_NONBLOCK) };
        Ok(Self { pid, owner: parent, ctl: sv[0], err: err_r, shm, env: sim_env() })
    }

    /// Whether the worker is not this process's to use: it has ended (and
    /// is reaped), or another process forked it.
    fn gone(&self) -> bool {
        // SAFETY: getpid has no preconditions.
        self.owner != unsafe { libc::getpid() } || !matches!(isolate::reap_now(self.pid), Ok(None))
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
fn fork_worker(api: SimApi, ops: &[Op], shm: Shm) -> io::Result<Worker> {
    // SAFETY: getpid has no preconditions.
    let me = unsafe { libc::getpid() };
    let ops = ops.to_vec();
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    let job: SpawnJob = Box::new(move || {
        let _ = tx.send(Worker::spawn(api, &ops, shm));
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
}

impl Pool {
    /// The (not yet started) worker of the library `api`, whose ops are `ops`.
    pub fn new(api: SimApi, ops: Vec<Op>) -> Self {
        Self { api, ops, slot: Mutex::new(None), busy: AtomicBool::new(false) }
    }

    /// Starts a call, or None while another thread's call holds the
    /// worker (that caller then runs in a one-shot child, `contained`).
    pub fn try_call(&self) -> Option<Call<'_>> {
        if self.busy.swap(true, Ordering::Acquire) {
            return None;
        }
        let worker = self.slot.lock().unwrap_or_else(|e| e.into_inner()).take();
        Some(Call { pool: self, guard: worker, staged: Vec::new(), used: 0 })
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
}

impl Drop for Call<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.guard.as_mut().filter(|w| w.shm.len > KEEP_BYTES) {
            w.shm.release();
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
}

impl Finished<'_> {
    /// The output's bytes (empty unless the run passed).
    pub fn output(&mut self) -> &[u8] {
        let (at, len) = self.out;
        match self.call.guard.as_mut() {
            Some(w) => &w.shm.bytes()[at..at + len],
            None => &[],
        }
    }
}

impl<'a> Call<'a> {
    fn worker(&mut self) -> Result<&mut Worker> {
        // Replaced only while its memory holds nothing of this call (a
        // worker that dies later is replaced by `run`, memory kept).
        if self.used == 0 && self.guard.as_ref().is_some_and(|w| w.gone() || w.env != sim_env()) {
            self.guard = None;
        }
        if self.guard.is_none() {
            let w = Shm::new()
                .and_then(|shm| fork_worker(self.pool.api, &self.pool.ops, shm))
                .map_err(|e| Error::new(ErrorKind::Environment, format!("cannot start the run's worker process: {e}")))?;
            self.guard = Some(w);
        }
        Ok(self.guard.as_mut().expect("just made"))
    }

    /// Stages a tensor of `len` bytes, written by `fill` into the region.
    pub fn tensor(&mut self, dtype: Dtype, shape: Vec<u64>, len: usize, fill: impl FnOnce(&mut [u8])) -> Result<()> {
        let at = self.used.next_multiple_of(ALIGN);
        let w = self.worker()?;
        w.shm.grow(at + len).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot grow the run's argument memory to {} bytes: {e}", at + len)))?;
        fill(&mut w.shm.bytes()[at..at + len]);
        self.used = at + len;
        self.staged.push(Staged::Tensor { dtype, shape, at, len });
        Ok(())
    }

    /// Stages a value argument.
    pub fn value(&mut self, kind: ArgKind, dtype: Dtype, bytes: Vec<u8>, value: Value) {
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
        let req = encode_request(op, cores, self.used, &self.staged, labels);
        let w = self.worker()?;
        let mut o = exchange(w, &req, timeout, interrupted);
        // A worker that died before it took the request (killed between
        // calls, and not reaped yet when the call began) ran nothing of
        // this call: a new one, with the staged arguments, takes it.
        if o.as_ref().is_ok_and(|o| o.phase == 0 && matches!(o.ended, Ended::Killed { signal: libc::SIGKILL } | Ended::Exited { .. })) {
            let mut dead = self.guard.take().expect("a worker ran the call");
            let shm = std::mem::replace(&mut dead.shm, Shm { fd: -1, ptr: NonNull::dangling(), len: 0 });
            drop(dead);
            let w = fork_worker(self.pool.api, &self.pool.ops, shm)
                .map_err(|e| Error::new(ErrorKind::Environment, format!("cannot start the run's worker process: {e}")))?;
            o = exchange(self.guard.insert(w), &req, timeout, interrupted);
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
        Ok(Finished { spec, run: run.map(|(rc, rep, _)| (rc, rep)), call: self, out: (at, len) })
    }
}

/// Sends `req` and waits for the result frame, the worker's end, the
/// bound or the interrupt; the worker's stderr meanwhile.
fn exchange(w: &mut Worker, req: &[u8], timeout: Option<Duration>, interrupted: &mut dyn FnMut() -> bool) -> io::Result<Outcome> {
    let start = Instant::now();
    let mut frame = Vec::with_capacity(req.len() + 9);
    frame.push(FRAME_RESULT);
    frame.extend_from_slice(&(req.len() as u64).to_le_bytes());
    frame.extend_from_slice(req);
    let (mut out, mut err) = (Vec::new(), Vec::new());
    if write_all(w.ctl, &frame).is_err() {
        // Gone before it took the request: the caller forks another.
        isolate::kill_and_reap(w.pid);
        while read_some(w.err, &mut err) == Read::Data {}
        return Ok(Outcome { ended: Ended::Killed { signal: libc::SIGKILL }, stderr: String::from_utf8_lossy(&err).into_owned(), phase: 0 });
    }
    let mut phase = 0;
    let mut open = [true, true];
    // Asked when a wait ends without news (every tick) or a signal
    // broke it, not on every frame: asking takes the GIL.
    let mut ask = false;
    loop {
        // Whole frames first: a result ends the call.
        while let Some((tag, payload, used)) = next_frame(&out) {
            match tag {
                FRAME_PHASE => phase = payload.first().copied().unwrap_or(0),
                FRAME_RESULT => {
                    let r = payload.to_vec();
                    out.drain(..used);
                    while read_some(w.err, &mut err) == Read::Data {}
                    return Ok(Outcome { ended: Ended::Finished(r), stderr: String::from_utf8_lossy(&err).into_owned(), phase });
                }
                _ => {}
            }
            out.drain(..used);
        }
        let stopped = if std::mem::take(&mut ask) && interrupted() {
            Some(Ended::Interrupted)
        } else if timeout.is_some_and(|t| start.elapsed() >= t) {
            Some(Ended::TimedOut)
        } else {
            None
        };
        if let Some(end) = stopped {
            isolate::kill_and_reap(w.pid);
            while read_some(w.err, &mut err) == Read::Data {}
            return Ok(Outcome { ended: end, stderr: String::from_utf8_lossy(&err).into_owned(), phase });
        }
        if !open[0] {
            // The socket ended: the worker is gone; what it wrote is in.
            let status = isolate::reap(w.pid, 0)?;
            while read_some(w.err, &mut err) == Read::Data {}
            let ended =
                if libc::WIFSIGNALED(status) { Ended::Killed { signal: libc::WTERMSIG(status) } } else { Ended::Exited { code: libc::WEXITSTATUS(status) } };
            return Ok(Outcome { ended, stderr: String::from_utf8_lossy(&err).into_owned(), phase });
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
        if fds[1].revents != 0 && read_some(w.err, &mut err) == Read::End {
            open[1] = false;
        }
    }
}

/// What a read gave.
#[derive(PartialEq, Eq)]
enum Read {
    /// Bytes.
    Data,
    /// The end of file, or an error.
    End,
    /// Nothing now (a non-blocking descriptor, or a signal).
    Nothing,
}

/// Appends what `fd` has now to `buf`, reading into its spare room (not
/// a zeroed buffer).
fn read_some(fd: RawFd, buf: &mut Vec<u8>) -> Read {
    buf.reserve(1 << 16);
    let room = buf.spare_capacity_mut();
    // SAFETY: reading into the vector's spare capacity, of its length.
    let n = unsafe { libc::read(fd, room.as_mut_ptr().cast(), room.len()) };
    if n > 0 {
        // SAFETY: `read` initialised the first n bytes of the spare room.
        unsafe { buf.set_len(buf.len() + n as usize) };
        return Read::Data;
    }
    match io::Error::last_os_error().kind() {
        _ if n == 0 => Read::End,
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Read::Nothing,
        _ => Read::End,
    }
}

/// The first whole frame of `b`: tag, payload, bytes it spans.
fn next_frame(b: &[u8]) -> Option<(u8, &[u8], usize)> {
    let len = usize::try_from(u64::from_le_bytes(b.get(1..9)?.try_into().ok()?)).ok()?;
    let payload = b.get(9..9usize.checked_add(len)?)?;
    Some((b[0], payload, 9 + len))
}

fn write_all(fd: RawFd, mut b: &[u8]) -> io::Result<()> {
    while !b.is_empty() {
        // SAFETY: writing initialised bytes to our own socket.
        let n = unsafe { libc::send(fd, b.as_ptr().cast(), b.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        b = &b[n as usize..];
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes; false at end of file.
fn read_exact(fd: RawFd, buf: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the unfilled part of a live buffer.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return false;
        }
        got += n as usize;
    }
    true
}

fn put(b: &mut Vec<u8>, bytes: &[u8]) {
    b.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    b.extend_from_slice(bytes);
}

fn encode_request(op: usize, cores: u32, region: usize, staged: &[Staged], labels: &[String]) -> Vec<u8> {
    let mut b = Vec::new();
    for v in [op as u64, u64::from(cores), region as u64, staged.len() as u64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for (s, label) in staged.iter().zip(labels) {
        match s {
            Staged::Tensor { dtype, shape, at, len } => {
                b.push(0);
                b.push(dtype.code());
                put(&mut b, &shape.iter().flat_map(|d| d.to_le_bytes()).collect::<Vec<_>>());
                b.extend_from_slice(&(*at as u64).to_le_bytes());
                b.extend_from_slice(&(*len as u64).to_le_bytes());
            }
            Staged::Value { kind, dtype, bytes, value } => {
                b.push(1);
                b.push(kind.code());
                b.push(dtype.code());
                put(&mut b, bytes);
                match value {
                    Value::Int(i) => {
                        b.push(0);
                        b.extend_from_slice(&i.to_le_bytes());
                    }
                    Value::Float(f) => {
                        b.push(1);
                        b.extend_from_slice(&f.to_le_bytes());
                    }
                    Value::Tensor(..) => b.push(2),
                }
            }
        }
        put(&mut b, label.as_bytes());
    }
    b
}

/// A decoded request: op index, cores, region size, arguments, labels.
type Request = (usize, u32, usize, Vec<Staged>, Vec<String>);

fn decode_request(mut b: &[u8]) -> Option<Request> {
    fn take<'a>(b: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
        let (h, t) = b.split_at_checked(n)?;
        *b = t;
        Some(h)
    }
    fn u64_of(b: &mut &[u8]) -> Option<u64> {
        Some(u64::from_le_bytes(take(b, 8)?.try_into().ok()?))
    }
    fn bytes<'a>(b: &mut &'a [u8]) -> Option<&'a [u8]> {
        let n = usize::try_from(u64_of(b)?).ok()?;
        take(b, n)
    }
    let kind_of =
        |c: u8| [ArgKind::Tensor, ArgKind::Scalar, ArgKind::Int, ArgKind::Float, ArgKind::LongLong, ArgKind::Double].into_iter().find(|k| k.code() == c);
    let (op, cores, region, n) = (u64_of(&mut b)? as usize, u64_of(&mut b)? as u32, u64_of(&mut b)? as usize, u64_of(&mut b)? as usize);
    let (mut staged, mut labels) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let s = match take(&mut b, 1)?[0] {
            0 => {
                let dtype = Dtype::from_code(take(&mut b, 1)?[0])?;
                let shape = bytes(&mut b)?.as_chunks::<8>().0.iter().map(|c| u64::from_le_bytes(*c)).collect();
                let (at, len) = (u64_of(&mut b)? as usize, u64_of(&mut b)? as usize);
                Staged::Tensor { dtype, shape, at, len }
            }
            _ => {
                let kind = kind_of(take(&mut b, 1)?[0])?;
                let dtype = Dtype::from_code(take(&mut b, 1)?[0])?;
                let v = bytes(&mut b)?.to_vec();
                let value = match take(&mut b, 1)?[0] {
                    0 => Value::Int(i64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
                    1 => Value::Float(f64::from_le_bytes(take(&mut b, 8)?.try_into().ok()?)),
                    _ => return None,
                };
                Staged::Value { kind, dtype, bytes: v, value }
            }
        };
        staged.push(s);
        labels.push(String::from_utf8_lossy(bytes(&mut b)?).into_owned());
    }
    Some((op, cores, region, staged, labels))
}

/// The worker's side: dies with the parent; stderr into the pipe; SIGINT
/// to its default; then serves requests until the socket ends.
#[allow(clippy::too_many_arguments)]
fn serve(parent: libc::pid_t, api: SimApi, ops: &[Op], ctl: RawFd, other: RawFd, err_r: RawFd, err_w: RawFd, mut shm: Shm) -> ! {
    // SAFETY: plain system calls on this process and on descriptors it
    // owns; a worker whose parent died before the prctl exits at once.
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
        if libc::getppid() != parent {
            libc::_exit(1);
        }
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::close(other);
        libc::close(err_r);
        libc::dup2(err_w, 2);
        libc::close(err_w);
    }
    // Served on a thread with a run thread's stack and more: a one-core
    // kernel then runs on it (`Simulator::launch`), whose painted stack
    // pages stay in from one call to the next.
    let ops = ops.to_vec();
    let serving = std::thread::Builder::new()
        .stack_size(neuroncustomop::host::diagnostics::RUN_THREAD_STACK + (4 << 20))
        .spawn(move || serve_loop(api, &ops, ctl, &mut shm))
        .map(|t| t.join().unwrap_or(101));
    let code = serving.unwrap_or(1);
    // SAFETY: ends the worker without unwinding into the parent's frames.
    unsafe { libc::_exit(code) }
}

/// Answers requests until the socket ends: the worker's exit status.
fn serve_loop(api: SimApi, ops: &[Op], ctl: RawFd, shm: &mut Shm) -> i32 {
    let mut ch = Channel { fd: ctl };
    let mut sim: Option<Sim> = None;
    let mut shapes = ShapeCache::default();
    loop {
        let mut head = [0u8; 9];
        if !read_exact(ctl, &mut head) {
            return 0;
        }
        let mut req = vec![0u8; u64::from_le_bytes(head[1..9].try_into().expect("8 bytes")) as usize];
        if !read_exact(ctl, &mut req) {
            return 1;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(api, ops, &req, shm, &mut sim, &mut shapes, &mut ch)));
        // What the kernel printed reaches the terminal with its call.
        // SAFETY: fflush(NULL) flushes every C stream.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        match r {
            Ok(reply) => ch.frame(FRAME_RESULT, &reply),
            Err(_) => return 101,
        }
        // The reset for the next call, while the caller reads this one's
        // output (and the memory the run took is given back now): a
        // failed or missing reset leaves a new simulator to the next call.
        if !sim.as_mut().is_some_and(Sim::reset) {
            sim = None;
        }
    }
}

/// One request: the shape function, the kernel on the (reset) simulator,
/// the output into the region. The reply: output place and region size,
/// then `contained`'s encoding.
fn job(api: SimApi, ops: &[Op], req: &[u8], shm: &mut Shm, sim: &mut Option<Sim>, shapes: &mut ShapeCache, ch: &mut Channel) -> Vec<u8> {
    let mut out = (0usize, 0usize);
    let r = (|| {
        let (index, cores, region, staged, labels) =
            decode_request(req).ok_or_else(|| Error::new(ErrorKind::Environment, "the run's worker got a request that does not decode"))?;
        let op = ops.get(index).ok_or_else(|| Error::new(ErrorKind::Environment, "the run's worker got an unknown op"))?;
        shm.follow(region).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot map the run's arguments: {e}")))?;
        ch.phase(SHAPE);
        let values: Vec<Value> = staged
            .iter()
            .map(|s| match s {
                Staged::Tensor { dtype, shape, .. } => Value::Tensor(*dtype, shape.clone()),
                Staged::Value { value, .. } => value.clone(),
            })
            .collect();
        let spec = shapes.evaluate(&api, op, index, values)?;
        ch.phase(KERNEL);
        // The simulator of the last call, reset; a new one when there is
        // none or the reset failed (the old one freed first).
        // Fresh: made, or reset after the last call's reply.
        let s = match sim {
            Some(s) => s,
            None => sim.insert(Sim::new(api)?),
        };
        for (i, p) in staged.iter().enumerate() {
            let what = format!("argument {} of op `{}` ({})", i + 1, op.name, labels[i]);
            match p {
                Staged::Tensor { dtype, shape, at, len } => {
                    let data = shm.bytes().get(*at..at + len).ok_or_else(|| Error::new(ErrorKind::Environment, "an argument outside the run's memory"))?;
                    s.arg_tensor(dtype.code(), shape, data, &what)?
                }
                Staged::Value { kind, dtype, bytes, .. } => s.arg_value(kind.code(), dtype.code(), bytes, &what)?,
            }
        }
        s.set_output(spec.dtype.code(), &spec.shape)?;
        let (rc, report) = s.run(&op.name, cores);
        if rc == 0 {
            let len = spec.shape.iter().product::<u64>() as usize * spec.dtype.size();
            let at = region.next_multiple_of(ALIGN);
            shm.grow(at + len).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot grow the run's output memory: {e}")))?;
            s.read_output_into(&mut shm.bytes()[at..at + len])?;
            out = (at, len);
        }
        Ok((spec, Some((rc, report, Vec::new()))))
    })();
    let r: Result<(OutputSpec, Option<SimRun>)> = r;
    let mut b = Vec::new();
    for v in [out.0, out.1, shm.len] {
        b.extend_from_slice(&(v as u64).to_le_bytes());
    }
    b.extend_from_slice(&contained::encode(&r));
    b
}

/// The shape functions' answers in this worker, per op and arguments
/// (dtypes and shapes of tensors, values of numbers): each evaluation
/// stands up a simulator to run on, which cost more than the rest of a
/// small call. Only answers are kept: a failing shape function runs (and
/// fails) again on every call.
#[derive(Default)]
struct ShapeCache {
    answers: std::collections::HashMap<(usize, Vec<ShapeKey>), OutputSpec>,
}

/// One argument as a cache key (a float by its bits: NaN is a value too).
#[derive(Clone, PartialEq, Eq, Hash)]
enum ShapeKey {
    Tensor(u8, Vec<u64>),
    Int(i64),
    Float(u64),
}

/// Answers kept at most (a loop over ever-new shapes does not grow it
/// without bound).
const SHAPE_CACHE_MAX: usize = 4096;

impl ShapeCache {
    fn evaluate(&mut self, api: &SimApi, op: &Op, index: usize, values: Vec<Value>) -> Result<OutputSpec> {
        let key: Vec<ShapeKey> = values
            .iter()
            .map(|v| match v {
                Value::Tensor(d, s) => ShapeKey::Tensor(d.code(), s.clone()),
                Value::Int(i) => ShapeKey::Int(*i),
                Value::Float(f) => ShapeKey::Float(f.to_bits()),
            })
            .collect();
        let key = (index, key);
        if let Some(spec) = self.answers.get(&key) {
            return Ok(spec.clone());
        }
        let spec = shape::evaluate(api, op, &values)?;
        if self.answers.len() >= SHAPE_CACHE_MAX {
            self.answers.clear();
        }
        self.answers.insert(key, spec.clone());
        Ok(spec)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_crosses_the_socket_whole() {
        let staged = vec![
            Staged::Tensor { dtype: Dtype::F32, shape: vec![2, 3], at: 64, len: 24 },
            Staged::Value { kind: ArgKind::Scalar, dtype: Dtype::I64, bytes: 7i64.to_le_bytes().to_vec(), value: Value::Int(7) },
            Staged::Value { kind: ArgKind::Float, dtype: Dtype::F32, bytes: 0.5f32.to_le_bytes().to_vec(), value: Value::Float(0.5) },
        ];
        let labels = vec!["a <f4 array of shape [2, 3]".to_owned(), "7".to_owned(), "0.5".to_owned()];
        let req = encode_request(3, 8, 88, &staged, &labels);
        let (op, cores, region, back, names) = decode_request(&req).unwrap();
        assert_eq!((op, cores, region, names), (3, 8, 88, labels));
        assert_eq!(format!("{back:?}"), format!("{staged:?}"));
        // A cut request does not decode (and does not panic).
        for n in 0..req.len() {
            assert!(decode_request(&req[..n]).is_none(), "{n}");
        }
    }

    #[test]
    fn frames_are_read_whole_or_not_at_all() {
        let mut b = vec![FRAME_PHASE];
        b.extend_from_slice(&1u64.to_le_bytes());
        b.push(2);
        assert_eq!(next_frame(&b), Some((FRAME_PHASE, &[2u8][..], 10)));
        assert_eq!(next_frame(&b[..9]), None);
    }

    #[test]
    fn the_shared_region_grows_and_both_views_see_it() {
        let mut a = Shm::new().unwrap();
        // SAFETY: duplicating our own descriptor for a second view.
        let mut b = Shm { fd: unsafe { libc::dup(a.fd) }, ptr: NonNull::dangling(), len: 0 };
        a.grow(1 << 20).unwrap();
        a.bytes()[(1 << 20) - 1] = 9;
        b.follow(a.len).unwrap();
        assert_eq!(b.bytes()[(1 << 20) - 1], 9);
        // Never shrunk below what the other side made it.
        b.grow(10).unwrap();
        b.grow(b.len + 1).unwrap();
        assert!(b.len >= 1 << 20);
        a.release();
        assert_eq!(b.bytes()[(1 << 20) - 1], 0);
    }
}
