//! What a run reports: per core (its errors, counters, heaps' high water,
//! printf) and the verdict, the first failure found.

use super::*;

/// What one core did during a run.
#[derive(Clone, Debug, Default)]
pub struct CoreReport {
    /// The core.
    pub cpu: u32,
    /// The launcher's return value.
    pub returned: i32,
    /// First marshalling failure (0: none).
    pub status: i32,
    /// Last error recorded.
    pub last_error: i32,
    /// Every error recorded on the core during the run, in order (codes).
    pub errors: Vec<i32>,
    /// Errors after the core's log was full (counted, not kept).
    pub errors_dropped: u32,
    /// How many of `errors` (the first ones) the kernel acknowledged with
    /// `neuron_clear_error` (handled: they do not fail the run).
    pub errors_handled: usize,
    /// Whether an error came after the last acknowledgement.
    pub unhandled_error: bool,
    /// (arguments the op read, arguments the invocation held).
    pub args_read: (usize, usize),
    /// Whether the kernel asked `get_cpu_id()`/`get_cpu_count()`.
    pub cpu_queried: bool,
    /// Translate hits/misses per record.
    pub translate: TranslateStats,
    /// Window-register writes.
    pub window_programs: u64,
    /// DMA bytes HBM → data RAM.
    pub dma_in: u64,
    /// DMA bytes data RAM → HBM.
    pub dma_out: u64,
    /// HBM heap use.
    pub hbm: HeapStats,
    /// Data-RAM heap use.
    pub dataram: HeapStats,
    /// libc heap use.
    pub libc: HeapStats,
    /// Deepest stack use of the run, in bytes (painted stack).
    pub stack_high_water: u64,
    /// The run used all of the painted stack: `stack_high_water` is a
    /// lower bound (the paint's depth), the use went at least that deep.
    pub stack_beyond_paint: bool,
    /// What the kernel printed (flushed at cleanup), one entry a line.
    pub printf: String,
    /// printf bytes overwritten before the host read them.
    pub printf_lost: u64,
    /// Set when the kernel thrashed the dynamic windows; names the regions.
    pub thrash_warning: Option<String>,
    /// The stack the launcher asked for (`STACK_SIZE`; 0: none ran).
    pub stack_requested: u32,
    /// The kernel is an unoptimised (debug) Rust build: its stack use is
    /// shown, not judged.
    pub unoptimised_kernel: bool,
    /// The kernel's own stack use: below the launcher's frame, in bytes.
    pub kernel_stack: u64,
    /// Stream accessors opened without a buffer (a 5th, or a full pool).
    pub unbuffered_streams: u32,
    /// The tensor an accessor was refused on in a multicore run, named.
    pub multicore_refused: Option<String>,
    /// Where in the kernel logged errors happened, where the C++ header
    /// told it (by position in `errors`).
    pub sites: Vec<crate::site_text::NamedSite>,
    /// How long the kernel ran on this core, in ns (wall clock; not in
    /// the report's text: `neuron_sim_timings`).
    pub kernel_ns: u64,
}

/// Why a run failed: the first failure found (cores in order, each core's
/// errors in the order they happened, then the simulator's own checks).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RunFailure {
    /// The error code (what `neuron_sim_run` returns).
    pub code: i32,
    /// The core it happened on, if it is a core's.
    pub cpu: Option<u32>,
    /// What happened, in words.
    pub reason: String,
}

/// The reports of one run, one per core used.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// The op that ran.
    pub op: String,
    /// What the device would refuse or misrun (SPEC §12), found on the
    /// cores' reports: each fails the run.
    pub device_limits: Vec<RunFailure>,
    /// What runs on the device, but not as it did here (SPEC §12).
    pub warnings: Vec<String>,
    /// Per core, in core order.
    pub cores: Vec<CoreReport>,
    /// Guard regions found overwritten after the run, one line per
    /// tensor: a kernel wrote past that tensor's end.
    pub guard_errors: Vec<String>,
    /// Output elements the run never wrote, as a sentence (None: all
    /// written, or no output placed by the simulator).
    pub unwritten: Option<String>,
    /// Whether the caller allowed unwritten output for this run.
    pub unwritten_allowed: bool,
    /// Output bytes two cores both wrote (multicore runs), one sentence
    /// per pair of cores: "cores 6 and 7 both wrote output bytes [..)".
    pub overlaps: Vec<String>,
    /// Cores whose host thread could not start or did not finish.
    pub failed_threads: Vec<u32>,
    /// The verdict: None when the run is a pass.
    pub failure: Option<RunFailure>,
    /// The run's time outside the kernels, in ns: the output's sentinel
    /// fill, the input pages' hashes and every check after the cores
    /// (not in the report's text: `neuron_sim_timings`).
    pub verdict_ns: u64,
}

impl RunReport {
    /// Whether the run passed: no core recorded an error, no guard was
    /// overwritten, the op read every argument and wrote all its output
    /// (unless allowed), every core's thread ran.
    pub fn ok(&self) -> bool {
        self.failure.is_none()
    }

    /// The verdict as a code: 0 for a pass.
    pub fn code(&self) -> i32 {
        self.failure.as_ref().map_or(0, |f| f.code)
    }

    /// Finds the first failure (see [`RunFailure`]).
    pub(super) fn judge(&self) -> Option<RunFailure> {
        let fail = |e: Error, cpu: Option<u32>, reason: String| Some(RunFailure { code: e.code(), cpu, reason });
        if let Some(&cpu) = self.failed_threads.first() {
            return fail(Error::CoreThreadFailed, Some(cpu), std::format!("core {cpu}: its host thread could not start or did not finish"));
        }
        for c in &self.cores {
            if c.unhandled_error {
                // A dropped error is one the log had no room for: the last
                // kept one stands for it.
                let at = if c.errors_handled < c.errors.len() { c.errors_handled } else { c.errors.len().saturating_sub(1) };
                let code = c.errors.get(at).copied().unwrap_or(c.last_error);
                let reason = match crate::device_limits::multicore_accessor_reason(&self.op, c) {
                    Some(r) if code == Error::MulticoreAccessor.code() => r,
                    _ => match c.sites.iter().find(|s| s.entry == at) {
                        Some(s) => std::format!("core {}: first error {}: {s}", c.cpu, describe(code)),
                        None => std::format!("core {}: first error {}", c.cpu, describe(code)),
                    },
                };
                return Some(RunFailure { code, cpu: Some(c.cpu), reason });
            }
            let code = if c.status != 0 { c.status } else { c.returned.saturating_abs() };
            if code != 0 {
                return Some(RunFailure {
                    code,
                    cpu: Some(c.cpu),
                    reason: std::format!("core {}: launcher returned {}, status {}", c.cpu, c.returned, c.status),
                });
            }
        }
        if let Some(d) = self.device_limits.first() {
            return Some(d.clone());
        }
        if let Some(g) = self.guard_errors.first() {
            return fail(Error::GuardOverwritten, None, g.clone());
        }
        if let Some(o) = self.overlaps.first() {
            return fail(Error::CoreWritesOverlap, None, o.clone());
        }
        for c in &self.cores {
            if c.args_read.0 < c.args_read.1 {
                return fail(
                    Error::ArgCountMismatch,
                    Some(c.cpu),
                    std::format!("core {}: the op read {} of the invocation's {} arguments", c.cpu, c.args_read.0, c.args_read.1),
                );
            }
        }
        match &self.unwritten {
            Some(u) if !self.unwritten_allowed => fail(Error::OutputNotCovered, None, u.clone()),
            _ => None,
        }
    }
}

/// "85 (accessor element type differs ...)".
pub(crate) fn describe(code: i32) -> String {
    match Error::from_code(code) {
        Some(e) => std::format!("{code} ({})", e.message()),
        None => std::format!("{code}"),
    }
}

/// The hardware counters a report reads, at one moment: a run's report
/// gives the difference, so it covers that run alone.
#[derive(Clone, Copy)]
pub(super) struct Counters {
    window_programs: u64,
    dma_in: u64,
    dma_out: u64,
}

impl Counters {
    pub(super) fn of(hal: &neuron_hal_mock::MockCore) -> Self {
        let c = hal.counters();
        Self { window_programs: c.total_window_programs(), dma_in: c.dma_bytes(DmaDirection::M2S), dma_out: c.dma_bytes(DmaDirection::S2M) }
    }
}

pub(super) fn report(core: &mut SimCore, returned: i32, before: Counters) -> CoreReport {
    let (status, last_error) = (core.invocation_status(), core.last_error());
    let (errors, errors_dropped, errors_handled, unhandled_error) = {
        let log = core.errors();
        (log.entries().iter().map(|e| e.code()).collect(), log.dropped(), log.acknowledged(), log.has_unacknowledged())
    };
    let cpu_queried = core.cpu_queried();
    let hal = core.hal();
    let now = Counters::of(hal);
    let cpu = neuron_hal::Hal::prid(hal);
    let st = core.state();
    CoreReport {
        cpu,
        returned,
        status,
        last_error,
        errors,
        errors_dropped,
        errors_handled,
        unhandled_error,
        args_read: st.args().last_reads(),
        cpu_queried,
        translate: *st.translator().stats(),
        window_programs: now.window_programs - before.window_programs,
        dma_in: now.dma_in - before.dma_in,
        dma_out: now.dma_out - before.dma_out,
        hbm: st.hbm().stats(),
        dataram: st.dataram().stats(),
        libc: st.libc().stats(),
        stack_high_water: 0,
        stack_beyond_paint: false,
        printf: String::new(),
        printf_lost: 0,
        thrash_warning: crate::diagnostics::thrash_warning(cpu, st.translator().thrash()),
        stack_requested: 0,
        unoptimised_kernel: false,
        kernel_stack: 0,
        unbuffered_streams: st.unbuffered_opens(),
        multicore_refused: None,
        sites: Vec::new(),
        kernel_ns: 0,
    }
    .with_printf(st)
}

impl CoreReport {
    fn with_printf(mut self, st: &mut neuron_runtime::CoreState<neuron_hal_mock::MockCore>) -> Self {
        (self.printf, self.printf_lost) = crate::diagnostics::drain_printf(st.printf_ring());
        self
    }
}
