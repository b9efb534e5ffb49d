//! The host simulator: a mock SoC with eight cores, tensors placed in HBM,
//! ops launched through their registered `<fn>_stack_switch` launchers on
//! 1 or 8 cores in parallel threads, a report per core and a verdict: a
//! run fails when any core recorded an error, a guard region was
//! overwritten, the op ignored arguments or output was left unwritten.

mod launch;
mod output;
mod run_report;
mod staging;
pub(crate) use run_report::describe;
pub use run_report::{CoreReport, RunFailure, RunReport};
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

/// The device's dimension rule (SPEC §12): up to 8 dims of at most
/// 65,535 each, or up to 4 dims of at most 4,294,967,295 each.
pub fn device_dims_ok(shape: &[u64]) -> bool {
    let narrow = shape.len() <= 8 && shape.iter().all(|&n| n <= u64::from(u16::MAX));
    let wide = shape.len() <= 4 && shape.iter().all(|&n| n <= u64::from(u32::MAX));
    narrow || wide
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
            // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
            unsafe { self.soc.hbm().zero_keeping(TENSOR_AREA_OFFSET, TENSOR_AREA_OFFSET + used.min(RESET_KEEP_BYTES)) }?;
        }
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { self.soc.sbuf().discard() }?;
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
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { coverage::fill(&self.soc, at + bytes, len, GUARD_CANARY) }.map_err(|_| Error::AddressUnmapped)?;
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
            // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
            let _ = unsafe { coverage::fill(&self.soc, *at, *len, GUARD_CANARY) };
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
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { self.soc.write(d.storage, data) }.map_err(|_| Error::AddressUnmapped)?;
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
}
