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
mod process;
mod serve;
mod shared_page;
mod shm;
mod wire;

use crate::contained;
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::Ended;
use crate::npy::Dtype;
use crate::schema::{ArgKind, Op};
use crate::shape::{OutputSpec, Value};
use crate::sim::SimApi;
use process::Worker;
use shm::Shm;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::Duration;
use wire::encode_request;
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
            w.release_call();
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
            Some(w) => unsafe { w.shm().range(at, len) }.unwrap_or(&[]),
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
        if self.used == 0 && self.guard.as_ref().is_some_and(Worker::stale) {
            self.guard = None;
        }
        if self.guard.is_none() {
            let base = self.pool.api.staging.map_or(0, |s| s.area_offset());
            let w = Shm::new(base)
                .and_then(|shm| Worker::start(self.pool.api, &self.pool.ops, shm, self.pool.fill_delay))
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
        w.shm().grow(at + len).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot grow the run's argument memory to {} bytes: {e}", at + len)))?;
        w.settle_before_writing(at, len);
        // No page hashes: the run takes them only if its kernel makes a
        // raw pointer (`neuron_hal_mock::sanitizer`).
        // SAFETY: the caller's turn: the worker reads the call memory only
        // after the request, and writes it before then only over the last
        // output's place, which it has settled (just above) when these
        // bytes overlap it.
        let dst = unsafe { w.shm().range_mut(at, len) }.ok_or_else(|| Error::new(ErrorKind::Environment, "a staged tensor outside the call memory"))?;
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
        let mut o = w.exchange(&req, timeout, interrupted, &mut early);
        // A worker that died before it took the request (killed between
        // calls, and not reaped yet when the call began) ran nothing of
        // this call: a new one, with the staged arguments, takes it.
        if o.as_ref().is_ok_and(|o| o.phase == 0 && matches!(o.ended, Ended::Killed { signal: libc::SIGKILL } | Ended::Exited { .. })) {
            let shm = self.guard.take().expect("a worker ran the call").into_shm();
            let w = Worker::start(self.pool.api, &self.pool.ops, shm, self.pool.fill_delay)
                .map_err(|e| Error::new(ErrorKind::Environment, format!("cannot start the run's worker process: {e}")))?;
            early = None;
            o = self.guard.insert(w).exchange(&req, timeout, interrupted, &mut early);
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
        w.shm().follow(region).map_err(|e| Error::new(ErrorKind::Environment, format!("op `{}`: cannot map the run's output: {e}", schema_op.name)))?;
        if at.checked_add(len).is_none_or(|e| e > w.shm().len) {
            return Err(bad());
        }
        let early = early.and_then(|e| e.take_if(at, len)).filter(|_| run.as_ref().is_some_and(|r| r.rc == 0));
        if let Some(w) = self.guard.as_mut() {
            w.set_last_out(at, len);
        }
        let (run, kept, writers) = match run {
            Some(r) => (Some((r.rc, r.report)), r.data, r.writers),
            None => (None, Vec::new(), None),
        };
        Ok(Finished { spec, run, call: self, out: (at, len), early, kept, writers })
    }
}
