//! The host simulator: a mock SoC with eight cores, tensors placed in HBM,
//! ops launched through their registered `<fn>_stack_switch` launchers on
//! 1 or 8 cores in parallel threads, a report per core and a verdict: a
//! run fails when any core recorded an error, a guard region was
//! overwritten, the op ignored arguments or output was left unwritten.

mod staging;
pub use staging::OutputReady;

use super::coverage;
use super::SimCore;
use crate::ffi::launch::{OpFn, OpTable};
use core::ffi::{c_char, c_void, CStr};
use neuron_hal::dma::DmaDirection;
use neuron_hal::platform::CORE_COUNT;
use neuron_hal_mock::MockSoc;
use neuron_runtime::heap::HeapStats;
use neuron_runtime::marshal::descriptor::{Location, RawTensorDesc};
use neuron_runtime::marshal::dtype::Dtype;
use neuron_runtime::marshal::invocation::{ArgKind, InvocationBuilder};
use neuron_runtime::translate::TranslateStats;
use neuron_runtime::Error;
use std::string::String;
use std::sync::Arc;
use std::vec::Vec;

/// Where the simulator starts placing tensors: past hbm_scratch, in a
/// region of its own (defined here).
pub(crate) const TENSOR_AREA_OFFSET: u64 = 1 << 30;
/// Placement granule; each tensor is followed by one unused granule, so
/// neighbouring tensors never share a page.
const PLACEMENT_ALIGN: u64 = 4096;
/// Bytes of the tensor area whose host pages a reset keeps (zeroed) for
/// the next run; beyond it they are given back, so a worker's resident
/// memory between calls stays bounded.
const RESET_KEEP_BYTES: u64 = 64 << 20;
/// The byte the guard region after each tensor holds (from the tensor's
/// last byte to the end of the free granule after it); checked after
/// every run.
pub const GUARD_CANARY: u8 = 0xCD;

/// How far the next tensor is placed from one of `bytes` bytes: its
/// pages and the unused granule after them (None: past 64 bits).
pub fn place_span(bytes: u64) -> Option<u64> {
    bytes.div_ceil(PLACEMENT_ALIGN).max(1).checked_mul(PLACEMENT_ALIGN)?.checked_add(PLACEMENT_ALIGN)
}

/// One argument of an invocation.
#[derive(Clone, Copy, Debug)]
pub struct Arg {
    /// Its kind.
    pub kind: ArgKind,
    /// Its descriptor.
    pub desc: RawTensorDesc,
}

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
    pub sites: Vec<super::site_text::NamedSite>,
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
    fn judge(&self) -> Option<RunFailure> {
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
                let reason = match super::device_limits::multicore_accessor_reason(&self.op, c) {
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

/// The device's dimension rule (SPEC §12): up to 8 dims of at most
/// 65,535 each, or up to 4 dims of at most 4,294,967,295 each.
pub fn device_dims_ok(shape: &[u64]) -> bool {
    let narrow = shape.len() <= 8 && shape.iter().all(|&n| n <= u64::from(u16::MAX));
    let wide = shape.len() <= 4 && shape.iter().all(|&n| n <= u64::from(u32::MAX));
    narrow || wide
}

/// "85 (accessor element type differs ...)".
pub(crate) fn describe(code: i32) -> String {
    match Error::from_code(code) {
        Some(e) => std::format!("{code} ({})", e.message()),
        None => std::format!("{code}"),
    }
}

/// A simulated NeuronCore's eight Q7 cores and their HBM.
pub struct Simulator {
    soc: Arc<MockSoc>,
    cores: Vec<SimCore>,
    ops: Vec<(String, OpFn)>,
    next: u64,
    args: Vec<Arg>,
    output: Option<RawTensorDesc>,
    /// Guard regions: (first byte past the tensor, length, tensor name).
    guards: Vec<(u64, u64, String)>,
    /// The output the simulator placed (coverage is checked on it).
    placed_output: Option<RawTensorDesc>,
    /// The byte the output is filled with before a run.
    sentinel: u8,
    /// Unwritten output is allowed for the next run only.
    allow_unwritten: bool,
    /// The next run keeps its output's writer map (one run only).
    keep_writer_map: bool,
    /// The last run's writer map, when it was asked for.
    writer_map: Option<super::writer_map::WriterMap>,
    /// Whether the last run passed (the output may be read).
    last_ok: bool,
    /// The op being run (named in the report of a kernel that crashes).
    running: String,
    /// Whether the run in progress is a multicore one (accessors other
    /// than TCM are refused on every core, SPEC §12).
    multicore: bool,
    /// Whether runs are watched by the sanitizer: always, unless the
    /// environment says `NEURON_SIM_SANITIZE=0` (to measure its cost).
    sanitize: bool,
    /// The cores launched since the simulator was made or reset (bit per
    /// core): those [`reset`](Self::reset) stands up afresh.
    launched: u32,
    /// The page hashes a staging caller gave with the inputs it placed
    /// since the last run (compared after it if it made a raw pointer).
    placed_pages: Vec<super::input_pages::Placed>,
    /// Where each run's output is written as its kernels end (`customop
    /// run`'s output file), and how the last run's write ended.
    sink: Option<super::output_sink::Sink>,
    sink_result: Option<std::io::Result<()>>,
    /// Run threads kept between runs: made by the first reset (a
    /// simulator that serves many runs), None for one that runs once.
    pool: Option<super::core_pool::CorePool>,
    /// A simulator on the caller's HBM file ([`new_staged`](Self::new_staged)).
    staging: Option<staging::Staging>,
}

impl Simulator {
    /// A fresh SoC with eight reset cores (HBM: `NEURON_SIM_HBM_GIB`, see
    /// [`reserve`](super::reserve)).
    pub fn new() -> std::io::Result<Self> {
        Self::on(super::reserve::soc()?)
    }

    /// A simulator on `soc`, its cores made.
    fn on(soc: Arc<MockSoc>) -> std::io::Result<Self> {
        let cores =
            (0..CORE_COUNT).map(|c| soc.core(c).map(SimCore::new).map_err(|e| super::reserve::nx_failure(c, e))).collect::<std::io::Result<Vec<_>>>()?;
        let next = soc.platform().hbm_soc_base + TENSOR_AREA_OFFSET;
        Ok(Self {
            soc,
            cores,
            ops: Vec::new(),
            next,
            args: Vec::new(),
            output: None,
            guards: Vec::new(),
            placed_output: None,
            sentinel: coverage::DEFAULT_SENTINEL,
            allow_unwritten: false,
            keep_writer_map: false,
            writer_map: None,
            last_ok: false,
            running: String::new(),
            multicore: false,
            sanitize: std::env::var_os("NEURON_SIM_SANITIZE").is_none_or(|v| v != "0"),
            launched: 0,
            placed_pages: Vec::new(),
            sink: None,
            sink_result: None,
            pool: None,
            staging: None,
        })
    }

    /// Brings a used simulator back to the state [`new`](Self::new) gives
    /// it, keeping its address space and its registered ops, so that a
    /// process serving many runs makes its SoC once: HBM and SBUF read
    /// zeros again, every core that ran is stood up afresh (runtime
    /// state, heaps, TCM, windows, counters), the sanitizer watches
    /// nothing, and no argument, output, guard or verdict is left.
    pub fn reset(&mut self) -> std::io::Result<()> {
        if super::fault::take_reset_failure() {
            return Err(std::io::Error::other("reset failure injected (fault::fail_next_reset)"));
        }
        // The tensor area this run placed is where the next run places its
        // own: its pages are zeroed in place (up to RESET_KEEP_BYTES), not
        // given back and faulted in again (issue 28); the rest of HBM that
        // holds data is given back.
        // A staging simulator's tensor area is its caller's (zeroed where a
        // run would see it, when it starts: `staging`).
        if self.staging.is_some() {
            self.forget_prefilled();
            self.forget_stale()?;
        } else {
            let used = self.next - self.area_base();
            self.soc.hbm().zero_keeping(TENSOR_AREA_OFFSET, TENSOR_AREA_OFFSET + used.min(RESET_KEEP_BYTES))?;
        }
        self.soc.sbuf().discard()?;
        // The cores that ran, stood up afresh on their own NX spaces. (A
        // failure leaves the simulator without its cores: the caller must
        // drop it, as `neuron_sim_reset` says.)
        let mut cores = Vec::with_capacity(self.cores.len());
        for (c, core) in core::mem::take(&mut self.cores).into_iter().enumerate() {
            cores.push(if self.launched & (1 << c) != 0 { core.restart().map_err(|e| super::reserve::nx_failure(c as u32, e))? } else { core });
        }
        self.cores = cores;
        self.launched = 0;
        self.pool.get_or_insert_with(Default::default);
        let s = self.soc.sanitizer();
        s.begin();
        let _ = s.end();
        self.next = self.area_base();
        self.clear_args();
        self.guards.clear();
        self.sentinel = coverage::DEFAULT_SENTINEL;
        self.allow_unwritten = false;
        self.keep_writer_map = false;
        self.writer_map = None;
        self.running.clear();
        self.multicore = false;
        self.sink = None;
        self.sink_result = None;
        Ok(())
    }

    /// The SoC address of the tensor area, where placing starts.
    fn area_base(&self) -> u64 {
        self.soc.platform().hbm_soc_base + TENSOR_AREA_OFFSET
    }

    /// The mock SoC.
    pub fn soc(&self) -> &Arc<MockSoc> {
        &self.soc
    }

    /// Core `cpu`.
    pub fn core(&mut self, cpu: u32) -> &mut SimCore {
        // Whatever the caller does with it, a reset stands it up afresh.
        self.launched |= 1 << cpu;
        &mut self.cores[cpu as usize]
    }

    /// Registers the ops of the table linked into this binary (the one
    /// `custom_ops!` or the C++ header generates): what the loader does
    /// with `register_funcs`. Returns how many.
    pub fn register_linked(&mut self) -> Result<usize, Error> {
        // SAFETY: the linked table is the generated one: its functions are
        // sound to call and every op it lists is a generated launcher.
        unsafe { self.register(OpTable::linked()) }
    }

    /// Registers the ops of `table`. Returns how many.
    ///
    /// # Safety
    /// `table`'s functions must be sound to call as declared, and every op
    /// it lists must be sound to launch on this simulator (a launcher as
    /// `custom_ops!` or the C++ header generates): [`run`](Self::run)
    /// calls them. [`register_linked`](Self::register_linked) is the safe
    /// form for the linked table.
    ///
    /// Safe code cannot register functions it made up (issue 43, hole 5):
    ///
    /// ```compile_fail,E0133
    /// # use neuron_sim::simulator::Simulator;
    /// # use neuron_capi::ffi::launch::OpTable;
    /// # fn f(s: &mut Simulator, t: OpTable) {
    /// let _ = s.register(t);
    /// # }
    /// ```
    pub unsafe fn register(&mut self, table: OpTable) -> Result<usize, Error> {
        unsafe extern "C" fn collect(handle: *mut c_void, name: *const c_char, f: OpFn) -> i32 {
            // SAFETY: handle is the Vec passed below; name is a C string
            // from the kernel's table.
            let (ops, name) = unsafe { (&mut *handle.cast::<Vec<(String, OpFn)>>(), CStr::from_ptr(name)) };
            ops.push((name.to_string_lossy().into_owned(), f));
            0
        }
        let mut ops = Vec::new();
        // SAFETY: the caller vouches for the table; collect matches
        // RegisterCb and its handle is `ops`, live for the call.
        let n = unsafe { table.register((&mut ops as *mut Vec<(String, OpFn)>).cast(), collect) }?;
        self.ops = ops;
        Ok(n as usize)
    }

    /// Names of the registered ops.
    pub fn op_names(&self) -> Vec<&str> {
        self.ops.iter().map(|(n, _)| n.as_str()).collect()
    }

    /// Reserves `bytes` of HBM for a tensor (zeroed), returns its address.
    /// A tensor the rest of HBM cannot hold is refused, and nothing is
    /// reserved.
    pub fn alloc(&mut self, bytes: u64) -> Result<u64, Error> {
        let at = self.next;
        let p = self.soc.platform();
        let hbm_end = p.hbm_soc_base + p.hbm_size;
        let end = place_span(bytes).and_then(|s| at.checked_add(s)).ok_or(Error::TensorTooLarge)?;
        if end > hbm_end {
            return Err(Error::TensorTooLarge);
        }
        self.next = end;
        Ok(at)
    }

    /// Reserves `bytes` for tensor `name` and fills the guard region after
    /// it (to the end of the free granule that follows) with the canary.
    fn alloc_guarded(&mut self, bytes: u64, name: String) -> Result<u64, Error> {
        let at = self.alloc(bytes)?;
        let end = self.next;
        let len = end - (at + bytes);
        coverage::fill(&self.soc, at + bytes, len, GUARD_CANARY).map_err(|_| Error::AddressUnmapped)?;
        self.guards.push((at + bytes, len, name));
        Ok(at)
    }

    /// The descriptor of a contiguous HBM tensor, checked before anything
    /// is placed: a dtype that marshals, a rank of 1..=8 (4 when an entry
    /// needs 32 bits), no zero entry, an element count that does not
    /// overflow.
    fn contiguous(&self, dtype: Dtype, shape: &[u64]) -> Result<RawTensorDesc, Error> {
        if dtype.elem_size() == 0 {
            return Err(Error::DtypeNotMarshallable);
        }
        if shape.is_empty() || shape.len() > 8 {
            return Err(Error::BadRank);
        }
        if shape.contains(&0) {
            return Err(Error::BadShape);
        }
        if !device_dims_ok(shape) {
            return Err(Error::DimTooLarge);
        }
        let base = self.soc.platform().hbm_soc_base;
        RawTensorDesc::contiguous(Location::Hbm, dtype.code(), base, shape).ok_or(Error::BadShape)
    }
    /// Refills every guard region with the canary (between the attribution
    /// runs, so each core's overrun is its own).
    pub(crate) fn refill_guards(&self) {
        for (at, len, _) in &self.guards {
            let _ = coverage::fill(&self.soc, *at, *len, GUARD_CANARY);
        }
    }

    /// Starts the sanitizer on this run: the arguments (const) and the
    /// output the simulator placed (unwritten, holding the sentinel).
    fn watch_run(&self, placed: Option<RawTensorDesc>) {
        use neuron_hal_mock::sanitizer::RegionKind;
        let s = self.soc.sanitizer();
        s.begin();
        if !self.sanitize {
            // Nothing watched, nothing of an earlier run left.
            s.end();
            return;
        }
        let elem = |d: &RawTensorDesc| Dtype::from_code(d.dtype).map_or(1, |t| t.elem_size().max(1)) as u64;
        for (i, a) in self.args.iter().enumerate() {
            s.watch(a.desc.storage, a.desc.buffer_bytes, elem(&a.desc), 0, RegionKind::Input, std::format!("argument {i}"));
        }
        if let Some(o) = placed {
            s.watch(o.storage, o.buffer_bytes, elem(&o), self.sentinel, RegionKind::Output, "the output".into());
        }
    }

    /// Names the tensor whose storage holds SoC address `addr`: an
    /// argument, the output, or a tensor the kernel made.
    fn tensor_at(&self, addr: u64) -> String {
        let within = |d: &RawTensorDesc| addr >= d.storage && addr < d.storage.saturating_add(d.buffer_bytes.max(1));
        if let Some(i) = self.args.iter().position(|a| within(&a.desc)) {
            return std::format!("argument {i}");
        }
        if self.output.as_ref().is_some_and(within) {
            return "the output".into();
        }
        std::format!("a tensor the kernel made (SoC {addr:#x})")
    }

    /// `s` with its tensor named (and its shape, when placed here).
    fn name_site(&self, s: &crate::binding::site::ErrorSite) -> super::site_text::NamedSite {
        let within = |d: &RawTensorDesc| s.tensor >= d.storage && s.tensor < d.storage.saturating_add(d.buffer_bytes.max(1));
        let placed = self.args.iter().map(|a| &a.desc).chain(self.output.as_ref()).find(|d| within(d));
        let shape = placed.map(|d| (0..usize::from(d.num_dim)).map(|i| d.shape_entry(i)).collect());
        super::site_text::NamedSite {
            entry: s.entry,
            tensor: (s.tensor != 0).then(|| self.tensor_at(s.tensor)),
            shape,
            index: s.index,
            file: s.file.clone(),
            line: s.line,
            detail: s.detail.clone(),
        }
    }

    /// Runs launcher `f` on core `cpu` alone (the attribution runs).
    pub(crate) fn launch_one(&mut self, f: OpFn, cpu: usize, at: u64, fill: u8) -> bool {
        self.launch(f, cpu..cpu + 1, at, fill).1.is_empty()
    }

    /// The byte the output is filled with before a run.
    pub(crate) fn sentinel(&self) -> u8 {
        self.sentinel
    }

    /// Checks every guard region; one line per overwritten one.
    pub fn check_guards(&self) -> Vec<String> {
        let mut bad = Vec::new();
        let mut v = Vec::new();
        for (at, len, name) in &self.guards {
            v.resize(*len as usize, 0);
            if self.soc.read(*at, &mut v).is_err() {
                continue;
            }
            // Blocks folded without an early exit (vectorised: this runs
            // on every call), the byte-wise search only for a hit.
            if v.chunks(64).all(|c| c.iter().fold(0, |acc, &b| acc | (b ^ GUARD_CANARY)) == 0) {
                continue;
            }
            if let Some(first) = v.iter().position(|&b| b != GUARD_CANARY) {
                let last = v.iter().rposition(|&b| b != GUARD_CANARY).unwrap_or(first);
                bad.push(std::format!("kernel wrote past the end of {name}: guard bytes {first}..={last} after it (SoC {:#x}) overwritten", at + first as u64));
            }
        }
        bad
    }

    /// Places a contiguous tensor with `data` in HBM; returns its descriptor.
    pub fn place(&mut self, dtype: Dtype, shape: &[u64], data: &[u8]) -> Result<RawTensorDesc, Error> {
        let mut d = self.contiguous(dtype, shape)?;
        if d.buffer_bytes != data.len() as u64 {
            return Err(Error::BufferTooSmall);
        }
        let name = std::format!("argument {}", self.args.len());
        d.storage = self.alloc_guarded(data.len() as u64, name)?;
        self.soc.write(d.storage, data).map_err(|_| Error::AddressUnmapped)?;
        Ok(d)
    }

    /// Appends a raw descriptor as an argument of the pending invocation
    /// (tests of the gates; [`arg_tensor`](Self::arg_tensor) and
    /// [`arg_value`](Self::arg_value) place their data first).
    ///
    /// # Safety
    /// The kernel reads and writes `desc`'s storage as its view describes,
    /// and the invocation gates refuse some bad descriptors, not all: every
    /// byte the view reaches must be simulator HBM that nothing else uses
    /// (a tensor the simulator placed, as [`place`](Self::place) gives it,
    /// or part of one).
    ///
    /// Safe code cannot aim a kernel at an address it chose:
    ///
    /// ```compile_fail,E0133
    /// # use neuron_sim::simulator::Simulator;
    /// # use neuron_runtime::marshal::{invocation::ArgKind, descriptor::RawTensorDesc};
    /// # fn f(s: &mut Simulator, d: RawTensorDesc) {
    /// s.push_arg(ArgKind::Tensor, d);
    /// # }
    /// ```
    pub unsafe fn push_arg(&mut self, kind: ArgKind, desc: RawTensorDesc) {
        self.push_placed(kind, desc);
    }

    /// Appends an argument whose storage this simulator placed.
    pub(crate) fn push_placed(&mut self, kind: ArgKind, desc: RawTensorDesc) {
        self.args.push(Arg { kind, desc });
    }

    /// Places and appends a tensor argument.
    pub fn arg_tensor(&mut self, dtype: Dtype, shape: &[u64], data: &[u8]) -> Result<RawTensorDesc, Error> {
        let d = self.place(dtype, shape, data)?;
        self.push_placed(ArgKind::Tensor, d);
        Ok(d)
    }

    /// Places and appends a one-element value argument (scalar, int, ...).
    pub fn arg_value(&mut self, kind: ArgKind, dtype: Dtype, elem: &[u8]) -> Result<RawTensorDesc, Error> {
        let d = self.place(dtype, &[1], elem)?;
        self.push_placed(kind, d);
        Ok(d)
    }

    /// Sets the output: a tensor of `shape` in HBM (filled with the
    /// sentinel before each run). A refused output leaves the previous
    /// one (and everything else) as it was.
    pub fn set_output(&mut self, dtype: Dtype, shape: &[u64]) -> Result<RawTensorDesc, Error> {
        let mut d = self.contiguous(dtype, shape)?;
        d.storage = self.alloc_guarded(d.buffer_bytes, "the output".into())?;
        self.output = Some(d);
        self.placed_output = Some(d);
        self.last_ok = false;
        Ok(d)
    }

    /// Writes each run's output into `file` from byte `offset` as soon as
    /// its kernels end, on a thread of its own while the verdict runs (and
    /// again after a verdict that ran the kernels again), with its disk
    /// writes started: when [`run`](Self::run) returns, a run that passed
    /// has its output in the file ([`sink_result`](Self::sink_result)).
    pub fn set_output_sink(&mut self, file: std::fs::File, offset: u64) {
        self.sink = Some(super::output_sink::Sink::new(file, offset));
    }

    /// How the last run's write into the output sink ended (None: no sink,
    /// or a run that did not get as far as its kernels).
    pub fn sink_result(&self) -> Option<&std::io::Result<()>> {
        self.sink_result.as_ref()
    }

    /// Sets a raw output descriptor (tests of the gates). Coverage is still
    /// checked on the output [`set_output`](Self::set_output) placed, if any.
    ///
    /// # Safety
    /// As [`push_arg`](Self::push_arg): every byte `d`'s view reaches is
    /// simulator HBM that nothing else uses (the kernel and the run's
    /// sentinel fill write it).
    ///
    /// ```compile_fail,E0133
    /// # use neuron_sim::simulator::Simulator;
    /// # use neuron_runtime::marshal::descriptor::RawTensorDesc;
    /// # fn f(s: &mut Simulator, d: RawTensorDesc) {
    /// s.set_output_raw(d);
    /// # }
    /// ```
    pub unsafe fn set_output_raw(&mut self, d: RawTensorDesc) {
        self.output = Some(d);
        self.last_ok = false;
    }

    /// The pending output.
    pub fn output(&self) -> Option<RawTensorDesc> {
        self.output
    }

    /// Clears the pending arguments and output.
    pub fn clear_args(&mut self) {
        self.args.clear();
        self.placed_pages.clear();
        self.output = None;
        self.placed_output = None;
        self.last_ok = false;
    }

    /// Lets the next run leave output elements unwritten (they are still
    /// reported, but do not fail the run). Applies to one run.
    pub fn allow_unwritten_output(&mut self) {
        self.allow_unwritten = true;
    }

    /// Keeps the next run's writer map ([`writer_map`](Self::writer_map)):
    /// it costs a copy of the output's per-element writers, so only a
    /// caller that draws it asks. Applies to one run.
    pub fn keep_writer_map(&mut self) {
        self.keep_writer_map = true;
    }

    /// Who wrote the last run's output, per element or run of elements,
    /// when the run was asked to keep it and placed an output.
    pub fn writer_map(&self) -> Option<&super::writer_map::WriterMap> {
        self.writer_map.as_ref()
    }

    /// Reads SoC memory.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.soc.read(addr, buf).map_err(|_| Error::AddressUnmapped)
    }

    /// Fills the output tensor's storage (`buffer_bytes` of it) with
    /// `byte`, and makes `byte` the sentinel later runs fill it with (so a
    /// caller can check that a rejected run wrote nothing).
    pub fn fill_output(&mut self, byte: u8) -> Result<(), Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        if self.soc.resolve(d.storage, d.buffer_bytes).is_none() {
            return Err(Error::AddressUnmapped);
        }
        coverage::fill(&self.soc, d.storage, d.buffer_bytes, byte).map_err(|_| Error::AddressUnmapped)?;
        self.sentinel = byte;
        Ok(())
    }

    /// Reads the output tensor's bytes: only after a run that passed.
    pub fn read_output(&self) -> Result<Vec<u8>, Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        let mut v = std::vec![0u8; usize::try_from(d.buffer_bytes).map_err(|_| Error::TensorTooLarge)?];
        self.read_output_into(&mut v)?;
        Ok(v)
    }

    /// Copies the first `dst.len()` bytes of the output (at most its size)
    /// into `dst`; returns how many. Only after a run that passed.
    pub fn read_output_into(&self, dst: &mut [u8]) -> Result<usize, Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        if !self.last_ok {
            return Err(Error::NoRunResult);
        }
        let k = (d.buffer_bytes.min(dst.len() as u64)) as usize;
        self.read(d.storage, &mut dst[..k])?;
        Ok(k)
    }

    /// Copies `dst.len()` bytes of the output from byte `offset` on (a
    /// caller that writes it out a piece at a time); only after a run
    /// that passed. `BufferTooSmall` when the range passes its end.
    pub fn read_output_at(&self, offset: u64, dst: &mut [u8]) -> Result<(), Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        if !self.last_ok {
            return Err(Error::NoRunResult);
        }
        if offset.checked_add(dst.len() as u64).is_none_or(|end| end > d.buffer_bytes) {
            return Err(Error::BufferTooSmall);
        }
        self.read(d.storage + offset, dst)
    }

    /// Copies the first `dst.len()` bytes of the output as they are now
    /// (at most its size), whatever the last run did; returns how many.
    pub fn inspect_output(&self, dst: &mut [u8]) -> Result<usize, Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        let k = (d.buffer_bytes.min(dst.len() as u64)) as usize;
        self.read(d.storage, &mut dst[..k])?;
        Ok(k)
    }

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
        self.soc.write(at, block).map_err(|_| Error::AddressUnmapped)?;
        let placed = self.placed_output;
        // Filled already when the caller had it filled ahead, between calls.
        let filled = self.take_prefilled(placed);
        if let Some(o) = placed.filter(|_| !filled) {
            coverage::fill(&self.soc, o.storage, o.buffer_bytes, self.sentinel).map_err(|_| Error::AddressUnmapped)?;
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
        rep.device_limits = rep.cores.iter().filter_map(|c| super::device_limits::stack_failure(name, c)).collect();
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
        rep.device_limits.extend(findings.iter().map(|f| super::sanitizer_report::failure(name, f)));
        // Stores into an input no hook saw (through a raw pointer), by its
        // pages: hashed at the run's first raw pointer, if it made one.
        let inputs = super::input_pages::InputPages::of_run(self.soc.sanitizer().raw_pointer_hashes(), &mut self.placed_pages);
        for (arg, a, b) in inputs.changed(&self.soc) {
            if !findings.iter().any(|f| f.kind == neuron_hal_mock::sanitizer::FindingKind::InputWritten && f.region == arg) {
                rep.device_limits.push(super::sanitizer_report::input_changed(name, &arg, a, b));
            }
        }
        rep.warnings = super::device_limits::warnings(name, &rep.cores);
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
            rep.overlaps = cross_writes.iter().map(|f| super::sanitizer_report::overlap(f, elem)).collect();
            let clean = rep.failed_threads.is_empty() && rep.cores.iter().all(|c| !c.unhandled_error && c.status == 0);
            // The attribution runs (each core again, alone) only where the
            // hooks cannot say who wrote: an output element changed by a
            // store they did not see, or a guard overwritten.
            let in_doubt = !rep.guard_errors.is_empty() || (!all_seen && seen.as_deref().is_none_or(|s| super::writes::unseen_writes(s, &held)));
            if cores > 1 && clean && in_doubt && o.buffer_bytes <= super::writes::MAX_ATTRIBUTED_BYTES {
                // The kernels run again: the output's write first ends.
                self.sink_result = writing.take().map(super::output_sink::Writing::finish);
                rewrite = true;
                let w = super::writes::attribute(self, f, cores, at, o)?;
                rep.overlaps = w.overlaps;
                rep.guard_errors.extend(w.outside);
            }
            // An element the hooks saw written is written, whatever it holds.
            let mut ranges = match &seen {
                Some(s) => super::writes::not_seen_written(&held, s),
                None => held,
            };
            if !ranges.is_empty() && rep.judge().is_none() {
                // An element still holding the sentinel may have been
                // written with exactly those bytes by a store no hook saw:
                // run again over a second sentinel and keep only what
                // holds it in both runs (exact for a kernel whose writes
                // do not depend on the output's old contents). A run that
                // already failed is not repeated.
                self.sink_result = writing.take().map(super::output_sink::Writing::finish);
                rewrite = true;
                ranges = self.confirm_unwritten(f, cores, at, o, elem, &ranges)?;
            }
            if keep_map {
                self.writer_map = seen.as_deref().map(|s| super::writer_map::build(s, &ranges));
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
    fn launch(&mut self, f: OpFn, cores: core::ops::Range<usize>, at: u64, fill: u8) -> (Vec<CoreReport>, Vec<u32>) {
        let first = cores.start;
        self.launched |= cores.clone().fold(0, |m, c| m | 1 << c);
        let mut reports = std::vec![None::<CoreReport>; cores.len()];
        let mut failed_threads = Vec::new();
        let op = self.running.as_str();
        let multicore = self.multicore;
        // One core on a thread that has a run thread's stack (a worker's
        // serving thread): run there, not on a new thread whose stack
        // pages the paint must fault in again every run.
        if cores.len() == 1 && super::crash::stack_room() >= super::diagnostics::RUN_THREAD_STACK {
            let (core, rep) = (&mut self.cores[first], &mut reports[0]);
            if super::fault::take_spawn_failure(first as u32)
                || std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_core(core, rep, first, op, multicore, f, at, fill))).is_err()
            {
                failed_threads.push(first as u32);
            }
        } else if let Some(pool) = self.pool.as_mut() {
            // A simulator serving many runs: its parked run threads.
            let mut jobs: Vec<(usize, std::boxed::Box<dyn FnOnce() + Send + '_>)> = Vec::new();
            for (i, (core, rep)) in self.cores[cores].iter_mut().zip(reports.iter_mut()).enumerate() {
                let i = first + i;
                if super::fault::take_spawn_failure(i as u32) {
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
                    let spawned = if super::fault::take_spawn_failure(i as u32) {
                        Err(std::io::Error::other("injected spawn failure"))
                    } else {
                        std::thread::Builder::new().stack_size(super::diagnostics::RUN_THREAD_STACK).spawn_scoped(s, run)
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
        coverage::fill(&self.soc, o.storage, o.buffer_bytes, second).map_err(|_| Error::AddressUnmapped)?;
        let _ = self.launch(f, 0..cores, at, second);
        let again = coverage::unwritten(&self.soc, o.storage, o.buffer_bytes, elem, second).map_err(|_| Error::AddressUnmapped)?;
        let both = coverage::intersect(candidates, &again);
        for r in &both {
            coverage::fill(&self.soc, o.storage + r.0 * elem, (r.1 - r.0) * elem, self.sentinel).map_err(|_| Error::AddressUnmapped)?;
        }
        Ok(both)
    }
}

/// Core `i`'s part of a run, on the calling thread: the launcher on the
/// bound core, its report into `rep`.
#[allow(clippy::too_many_arguments)]
fn run_core(core: &mut SimCore, rep: &mut Option<CoreReport>, i: usize, op: &str, multicore: bool, f: OpFn, at: u64, fill: u8) {
    let _crash = super::crash::running(i as u32, op);
    core.begin_run(fill);
    core.state().set_multicore_strict(multicore);
    let before = Counters::of(core.hal());
    core.hal().set_invocation_block(at);
    let paint = super::diagnostics::paint_stack();
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
    r.kernel_stack = super::device_limits::kernel_stack(sp, core.take_sp_low(), lowest);
    *rep = Some(r);
}

/// The hardware counters a report reads, at one moment: a run's report
/// gives the difference, so it covers that run alone.
#[derive(Clone, Copy)]
struct Counters {
    window_programs: u64,
    dma_in: u64,
    dma_out: u64,
}

impl Counters {
    fn of(hal: &neuron_hal_mock::MockCore) -> Self {
        let c = hal.counters();
        Self { window_programs: c.total_window_programs(), dma_in: c.dma_bytes(DmaDirection::M2S), dma_out: c.dma_bytes(DmaDirection::S2M) }
    }
}

fn report(core: &mut SimCore, returned: i32, before: Counters) -> CoreReport {
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
        thrash_warning: super::diagnostics::thrash_warning(cpu, st.translator().thrash()),
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
        (self.printf, self.printf_lost) = super::diagnostics::drain_printf(st.printf_ring());
        self
    }
}
