//! A run: the op's launchers on 1 or 8 cores (threads), each core's
//! report, then the simulator's checks on what the run left (guards,
//! coverage, the sanitizer's findings) and the verdict.

use super::run_report::{report, Counters};
use super::*;

impl Simulator {
    /// Runs op `name` on cores `0..cores` (1 or 8) in parallel threads,
    /// each serving the same invocation block (each core takes its slice
    /// by `get_cpu_id()`). `Err` when the run is refused before it starts;
    /// otherwise the report, whose [`RunReport::failure`] is the verdict.
    pub fn run(&mut self, name: &str, cores: u32) -> Result<RunReport, Error> {
        self.last_ok = false;
        self.writer_map = None;
        self.check_launch(name, cores)?;
        if self.output.is_none() {
            return Err(Error::NoOutput);
        }
        let block = self.block()?;
        self.serve_block(name, cores, &block)
    }

    /// The refusals every run makes before it starts.
    fn check_launch(&self, name: &str, cores: u32) -> Result<OpFn, Error> {
        if cores != 1 && cores != CORE_COUNT {
            return Err(Error::BadCoreCount);
        }
        self.ops.iter().find(|(n, _)| n == name).map(|(_, f)| *f).ok_or(Error::UnknownOp)
    }

    /// The invocation block the pending arguments and output make.
    pub fn block(&self) -> Result<Vec<u8>, Error> {
        let mut b = InvocationBuilder::new();
        for a in &self.args {
            b.arg(a.kind, a.desc)?;
        }
        if let Some(o) = self.output {
            b.output(o);
        }
        Ok(b.build().to_vec())
    }

    /// Runs op `name` as [`run`](Self::run) does, but serving `block` as
    /// the invocation block, byte for byte (tests of the header gates:
    /// a block the builder would refuse to make).
    ///
    /// # Safety
    /// Every descriptor in `block` meets [`push_arg`](Self::push_arg)'s
    /// contract ([`block`](Self::block) gives one that does, for the
    /// pending arguments).
    ///
    /// ```compile_fail,E0133
    /// # use neuron_sim::simulator::Simulator;
    /// # fn f(s: &mut Simulator, block: &[u8]) {
    /// let _ = s.run_block("op", 1, block);
    /// # }
    /// ```
    pub unsafe fn run_block(&mut self, name: &str, cores: u32, block: &[u8]) -> Result<RunReport, Error> {
        self.serve_block(name, cores, block)
    }

    /// [`run_block`](Self::run_block) on a block of placed descriptors.
    fn serve_block(&mut self, name: &str, cores: u32, block: &[u8]) -> Result<RunReport, Error> {
        self.last_ok = false;
        let f = self.check_launch(name, cores)?;
        self.running.clear();
        self.running.push_str(name);
        self.multicore = cores > 1;
        let cores = cores as usize;
        let started = std::time::Instant::now();
        self.zero_stale_tail()?;
        let at = self.alloc(block.len() as u64)?;
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { self.soc.write(at, block) }.map_err(|_| Error::AddressUnmapped)?;
        let placed = self.placed_output;
        // Filled already when the caller had it filled ahead, between calls.
        let filled = self.take_prefilled(placed);
        if let Some(o) = placed.filter(|_| !filled) {
            // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
            unsafe { coverage::fill(&self.soc, o.storage, o.buffer_bytes, self.sentinel) }.map_err(|_| Error::AddressUnmapped)?;
        }
        self.watch_run(placed);
        let launched = std::time::Instant::now();
        // One core: its thread is the only writer while the host waits.
        self.soc.sanitizer().set_one_writer(cores == 1);
        let (reports, failed_threads) = self.launch(f, 0..cores, at, self.sentinel);
        self.soc.sanitizer().set_one_writer(false);
        let kernels = launched.elapsed();
        self.sink_result = None;
        // The output to its file while the verdict runs (finished, joined,
        // before any run again and when this function returns, however).
        let mut writing = match (&self.sink, placed) {
            (Some(sink), Some(o)) => self.soc.soc_ptr(o.storage, o.buffer_bytes).map(|p| {
                // SAFETY: the output's bytes lie in the SoC's mapping, which
                // lives as long as `self`; nothing writes them until the
                // write is finished: it is before any run again (below) and
                // when `writing` drops, at the latest when this returns.
                unsafe { sink.start(p, o.buffer_bytes as usize) }
            }),
            _ => None,
        };
        let mut rewrite = false;
        let findings = self.soc.sanitizer().end();
        let mut rep = RunReport { op: name.into(), cores: reports, guard_errors: self.check_guards(), failed_threads, ..RunReport::default() };
        for c in &mut rep.cores {
            c.multicore_refused = self.cores[c.cpu as usize].state().multicore_refused().map(|a| self.tensor_at(a));
            c.sites = self.cores[c.cpu as usize].error_sites().iter().map(|s| self.name_site(s)).collect();
        }
        rep.device_limits = rep.cores.iter().filter_map(|c| crate::device_limits::stack_failure(name, c)).collect();
        // When the hooks saw every element written, none can hold the
        // sentinel unwritten or have changed unseen: the scan for the
        // sentinel, and the copy of who wrote each element, could not
        // change the verdict, and are not made. Nor is the output written
        // again (no attribution or confirming run): a caller told so
        // reads it while the verdict runs.
        let all_seen = placed.is_some_and(|o| self.soc.sanitizer().all_written(o.storage) == Some(true));
        if let Some(o) = placed.filter(|_| all_seen && rep.guard_errors.is_empty() && rep.failed_threads.is_empty()) {
            self.announce_output(&o);
        }
        let (cross_writes, findings): (Vec<_>, Vec<_>) = findings.into_iter().partition(|f| f.kind == neuron_hal_mock::sanitizer::FindingKind::CrossCoreWrite);
        rep.device_limits.extend(findings.iter().map(|f| crate::sanitizer_report::failure(name, f)));
        // Stores into an input no hook saw (through a raw pointer), by its
        // pages: hashed at the run's first raw pointer, if it made one.
        let inputs = crate::input_pages::InputPages::of_run(self.soc.sanitizer().raw_pointer_hashes(), &mut self.placed_pages);
        for (arg, a, b) in inputs.changed(&self.soc) {
            if !findings.iter().any(|f| f.kind == neuron_hal_mock::sanitizer::FindingKind::InputWritten && f.region == arg) {
                rep.device_limits.push(crate::sanitizer_report::input_changed(name, &arg, a, b));
            }
        }
        rep.warnings = crate::device_limits::warnings(name, &rep.cores);
        rep.unwritten_allowed = core::mem::take(&mut self.allow_unwritten);
        let keep_map = core::mem::take(&mut self.keep_writer_map);
        self.writer_map = None;
        if let Some(o) = placed {
            let elem = Dtype::from_code(o.dtype).map_or(1, |d| d.elem_size().max(1)) as u64;
            // Who wrote each output element, as the hooks saw it (copied
            // when all were seen only for a writer map).
            let seen = if all_seen && !keep_map { None } else { self.soc.sanitizer().written_by(o.storage) };
            let held = match all_seen {
                true => Vec::new(),
                false => coverage::unwritten(&self.soc, o.storage, o.buffer_bytes, elem, self.sentinel).map_err(|_| Error::AddressUnmapped)?,
            };
            rep.overlaps = cross_writes.iter().map(|f| crate::sanitizer_report::overlap(f, elem)).collect();
            let clean = rep.failed_threads.is_empty() && rep.cores.iter().all(|c| !c.unhandled_error && c.status == 0);
            // The attribution runs (each core again, alone) only where the
            // hooks cannot say who wrote: an output element changed by a
            // store they did not see, or a guard overwritten.
            let in_doubt = !rep.guard_errors.is_empty() || (!all_seen && seen.as_deref().is_none_or(|s| crate::writes::unseen_writes(s, &held)));
            if cores > 1 && clean && in_doubt && o.buffer_bytes <= crate::writes::MAX_ATTRIBUTED_BYTES {
                // The kernels run again: the output's write first ends.
                self.sink_result = writing.take().map(crate::output_sink::Writing::finish);
                rewrite = true;
                let w = crate::writes::attribute(self, f, cores, at, o)?;
                rep.overlaps = w.overlaps;
                rep.guard_errors.extend(w.outside);
            }
            // An element the hooks saw written is written, whatever it holds.
            let mut ranges = match &seen {
                Some(s) => crate::writes::not_seen_written(&held, s),
                None => held,
            };
            if !ranges.is_empty() && rep.judge().is_none() {
                // An element still holding the sentinel may have been
                // written with exactly those bytes by a store no hook saw:
                // run again over a second sentinel and keep only what
                // holds it in both runs (exact for a kernel whose writes
                // do not depend on the output's old contents). A run that
                // already failed is not repeated.
                self.sink_result = writing.take().map(crate::output_sink::Writing::finish);
                rewrite = true;
                ranges = self.confirm_unwritten(f, cores, at, o, elem, &ranges)?;
            }
            if keep_map {
                self.writer_map = seen.as_deref().map(|s| crate::writer_map::build(s, &ranges));
            }
            if !ranges.is_empty() {
                let mut m = coverage::message(&ranges, o.buffer_bytes / elem);
                if cores == 1 && rep.cores.iter().any(|c| c.cpu_queried) {
                    m.push_str(" (the kernel asked get_cpu_id()/get_cpu_count() but ran on 1 core: run it on 8)");
                }
                // Cores that returned a tensor of their own each had it
                // copied whole over the output, racing the others.
                let copied = self.cores[..cores].iter_mut().map(|c| c.state().args().returned()).filter(|r| *r).count();
                if cores > 1 && copied > 0 {
                    m.push_str(&std::format!(
                        " ({copied} of the {cores} cores returned a tensor of their own, each copied whole over the output: \
                         on several cores each writes its slice of get_dst_tensor() and returns that)"
                    ));
                }
                rep.unwritten = Some(m);
            }
        }
        rep.failure = rep.judge();
        self.last_ok = rep.failure.is_none();
        if let Some(w) = writing.take() {
            self.sink_result = Some(w.finish());
        }
        if rewrite && self.last_ok {
            // The output as the last run left it.
            if let (Some(sink), Some(o)) = (&self.sink, placed) {
                if let Some(p) = self.soc.soc_ptr(o.storage, o.buffer_bytes) {
                    // SAFETY: as above; finished before the next statement.
                    self.sink_result = Some(unsafe { sink.start(p, o.buffer_bytes as usize) }.finish());
                }
            }
        }
        rep.verdict_ns = started.elapsed().saturating_sub(kernels).as_nanos() as u64;
        Ok(rep)
    }

    /// Runs launcher `f` on cores `0..cores` in parallel threads serving
    /// the block at `at`: each core's report (a placeholder for a core
    /// whose thread did not run), and the cores whose thread failed.
    pub(super) fn launch(&mut self, f: OpFn, cores: core::ops::Range<usize>, at: u64, fill: u8) -> (Vec<CoreReport>, Vec<u32>) {
        let first = cores.start;
        self.launched |= cores.clone().fold(0, |m, c| m | 1 << c);
        let mut reports = std::vec![None::<CoreReport>; cores.len()];
        let mut failed_threads = Vec::new();
        let op = self.running.as_str();
        let multicore = self.multicore;
        // One core on a thread that has a run thread's stack (a worker's
        // serving thread): run there, not on a new thread whose stack
        // pages the paint must fault in again every run.
        if cores.len() == 1 && crate::crash::stack_room() >= crate::diagnostics::RUN_THREAD_STACK {
            let (core, rep) = (&mut self.cores[first], &mut reports[0]);
            if crate::fault::take_spawn_failure(first as u32)
                || std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_core(core, rep, first, op, multicore, f, at, fill))).is_err()
            {
                failed_threads.push(first as u32);
            }
        } else if let Some(pool) = self.pool.as_mut() {
            // A simulator serving many runs: its parked run threads.
            let mut jobs: Vec<(usize, std::boxed::Box<dyn FnOnce() + Send + '_>)> = Vec::new();
            for (i, (core, rep)) in self.cores[cores].iter_mut().zip(reports.iter_mut()).enumerate() {
                let i = first + i;
                if crate::fault::take_spawn_failure(i as u32) {
                    failed_threads.push(i as u32);
                } else {
                    jobs.push((i, std::boxed::Box::new(move || run_core(core, rep, i, op, multicore, f, at, fill))));
                }
            }
            failed_threads.extend(pool.run(jobs));
        } else {
            std::thread::scope(|s| {
                let mut handles = Vec::new();
                for (i, (core, rep)) in self.cores[cores].iter_mut().zip(reports.iter_mut()).enumerate() {
                    let i = first + i;
                    let run = move || run_core(core, rep, i, op, multicore, f, at, fill);
                    let spawned = if crate::fault::take_spawn_failure(i as u32) {
                        Err(std::io::Error::other("injected spawn failure"))
                    } else {
                        std::thread::Builder::new().stack_size(crate::diagnostics::RUN_THREAD_STACK).spawn_scoped(s, run)
                    };
                    match spawned {
                        Ok(h) => handles.push((i, h)),
                        Err(_) => failed_threads.push(i as u32),
                    }
                }
                for (i, h) in handles {
                    if h.join().is_err() {
                        failed_threads.push(i as u32);
                    }
                }
            });
        }
        failed_threads.sort_unstable();
        // A core whose thread did not run (or did not finish) has no report
        // of its own: a placeholder naming it, never counted as a pass (the
        // verdict fails on `failed_threads` first).
        let reports: Vec<CoreReport> =
            reports.into_iter().enumerate().map(|(i, r)| r.unwrap_or_else(|| CoreReport { cpu: (first + i) as u32, ..CoreReport::default() })).collect();
        (reports, failed_threads)
    }

    /// The elements of `candidates` that a second run, over the
    /// complement of the sentinel, also leaves holding it: those were
    /// never written. The output then holds the first sentinel there
    /// again, the second run's values elsewhere.
    fn confirm_unwritten(&mut self, f: OpFn, cores: usize, at: u64, o: RawTensorDesc, elem: u64, candidates: &[(u64, u64)]) -> Result<Vec<(u64, u64)>, Error> {
        let second = !self.sentinel;
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { coverage::fill(&self.soc, o.storage, o.buffer_bytes, second) }.map_err(|_| Error::AddressUnmapped)?;
        let _ = self.launch(f, 0..cores, at, second);
        let again = coverage::unwritten(&self.soc, o.storage, o.buffer_bytes, elem, second).map_err(|_| Error::AddressUnmapped)?;
        let both = coverage::intersect(candidates, &again);
        for r in &both {
            // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
            unsafe { coverage::fill(&self.soc, o.storage + r.0 * elem, (r.1 - r.0) * elem, self.sentinel) }.map_err(|_| Error::AddressUnmapped)?;
        }
        Ok(both)
    }
}

/// Core `i`'s part of a run, on the calling thread: the launcher on the
/// bound core, its report into `rep`.
#[allow(clippy::too_many_arguments)]
fn run_core(core: &mut SimCore, rep: &mut Option<CoreReport>, i: usize, op: &str, multicore: bool, f: OpFn, at: u64, fill: u8) {
    let _crash = crate::crash::running(i as u32, op);
    core.begin_run(fill);
    core.state().set_multicore_strict(multicore);
    let before = Counters::of(core.hal());
    core.hal().set_invocation_block(at);
    let paint = crate::diagnostics::paint_stack();
    let t = std::time::Instant::now();
    // SAFETY: f is a launcher the kernel registered.
    let returned = core.enter(|| unsafe { f() });
    let kernel_ns = t.elapsed().as_nanos() as u64;
    core.hal().set_invocation_block(0);
    let mut r = report(core, returned, before);
    r.kernel_ns = kernel_ns;
    (r.stack_high_water, r.stack_beyond_paint) = paint.high_water();
    let (requested, sp) = core.launch_stack();
    r.stack_requested = requested;
    r.unoptimised_kernel = core.unoptimised_kernel();
    // Measured where the kernel calls the library (the painted high water
    // also holds the host library's frames, several KiB in a debug build),
    // and where its frames that call no library function left the paint.
    let (lowest, _) = paint.lowest_touched();
    r.kernel_stack = crate::device_limits::kernel_stack(sp, core.take_sp_low(), lowest);
    *rep = Some(r);
}
