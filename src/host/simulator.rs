//! The host simulator: a mock SoC with eight cores, tensors placed in HBM,
//! ops launched through their registered `<fn>_stack_switch` launchers on
//! 1..=8 cores in parallel threads, and a report per core.

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
const TENSOR_AREA_OFFSET: u64 = 1 << 30;
/// Placement granule; each tensor is followed by one unused granule, so
/// neighbouring tensors never share a page.
const PLACEMENT_ALIGN: u64 = 4096;
/// The byte the guard region after each tensor holds (from the tensor's
/// last byte to the end of the free granule after it); checked after
/// every run.
pub const GUARD_CANARY: u8 = 0xCD;

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
    /// What the kernel printed (flushed at cleanup), one entry a line.
    pub printf: String,
    /// printf bytes overwritten before the host read them.
    pub printf_lost: u64,
    /// Set when the kernel thrashed the dynamic windows; names the regions.
    pub thrash_warning: Option<String>,
}

/// The reports of one run, one per core used.
#[derive(Clone, Debug, Default)]
pub struct RunReport {
    /// Per core, in core order.
    pub cores: Vec<CoreReport>,
    /// Guard regions found overwritten after the run, one line per
    /// tensor: a kernel wrote past that tensor's end.
    pub guard_errors: Vec<String>,
}

impl RunReport {
    /// Whether every core finished with status 0.
    pub fn ok(&self) -> bool {
        self.guard_errors.is_empty() && self.cores.iter().all(|c| c.status == 0 && c.returned == 0)
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
}

impl Simulator {
    /// A fresh SoC with eight reset cores.
    pub fn new() -> std::io::Result<Self> {
        let soc = MockSoc::new()?;
        let cores = (0..CORE_COUNT).map(|c| soc.core(c).map(SimCore::new)).collect::<std::io::Result<Vec<_>>>()?;
        let next = soc.platform().hbm_soc_base + TENSOR_AREA_OFFSET;
        Ok(Self { soc, cores, ops: Vec::new(), next, args: Vec::new(), output: None, guards: Vec::new() })
    }

    /// The mock SoC.
    pub fn soc(&self) -> &Arc<MockSoc> {
        &self.soc
    }

    /// Core `cpu`.
    pub fn core(&mut self, cpu: u32) -> &mut SimCore {
        &mut self.cores[cpu as usize]
    }

    /// Registers the ops of `table` (what the loader does with
    /// `register_funcs`). Returns how many.
    pub fn register(&mut self, table: OpTable) -> Result<usize, Error> {
        unsafe extern "C" fn collect(handle: *mut c_void, name: *const c_char, f: OpFn) -> i32 {
            // SAFETY: handle is the Vec passed below; name is a C string
            // from the kernel's table.
            let (ops, name) = unsafe { (&mut *handle.cast::<Vec<(String, OpFn)>>(), CStr::from_ptr(name)) };
            ops.push((name.to_string_lossy().into_owned(), f));
            0
        }
        let mut ops = Vec::new();
        // SAFETY: the table is the kernel's generated one; collect matches
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
    pub fn alloc(&mut self, bytes: u64) -> u64 {
        let at = self.next;
        let span = bytes.div_ceil(PLACEMENT_ALIGN).max(1) * PLACEMENT_ALIGN;
        self.next += span + PLACEMENT_ALIGN;
        at
    }

    /// Reserves `bytes` for tensor `name` and fills the guard region after
    /// it (to the end of the free granule that follows) with the canary.
    fn alloc_guarded(&mut self, bytes: u64, name: String) -> u64 {
        let at = self.alloc(bytes);
        let end = at + bytes.div_ceil(PLACEMENT_ALIGN).max(1) * PLACEMENT_ALIGN + PLACEMENT_ALIGN;
        let len = end - (at + bytes);
        let _ = self.soc.write(at + bytes, &std::vec![GUARD_CANARY; len as usize]);
        self.guards.push((at + bytes, len, name));
        at
    }

    /// Checks every guard region; one line per overwritten one.
    pub fn check_guards(&self) -> Vec<String> {
        let mut bad = Vec::new();
        for (at, len, name) in &self.guards {
            let mut v = std::vec![0u8; *len as usize];
            if self.soc.read(*at, &mut v).is_err() {
                continue;
            }
            if let Some(first) = v.iter().position(|&b| b != GUARD_CANARY) {
                let last = v.iter().rposition(|&b| b != GUARD_CANARY).unwrap_or(first);
                bad.push(std::format!(
                    "kernel wrote past the end of {name}: guard bytes {first}..={last} after it (SoC {:#x}) overwritten",
                    at + first as u64
                ));
            }
        }
        bad
    }

    /// Places a contiguous tensor with `data` in HBM; returns its descriptor.
    pub fn place(&mut self, dtype: Dtype, shape: &[u64], data: &[u8]) -> Result<RawTensorDesc, Error> {
        let name = std::format!("argument {}", self.args.len());
        let at = self.alloc_guarded(data.len() as u64, name);
        let d = RawTensorDesc::contiguous(Location::Hbm, dtype.code(), at, shape).ok_or(Error::BadShape)?;
        if d.buffer_bytes != data.len() as u64 {
            return Err(Error::BufferTooSmall);
        }
        self.soc.write(at, data).map_err(|_| Error::AddressUnmapped)?;
        Ok(d)
    }

    /// Appends an argument to the pending invocation.
    pub fn push_arg(&mut self, kind: ArgKind, desc: RawTensorDesc) {
        self.args.push(Arg { kind, desc });
    }

    /// Places and appends a tensor argument.
    pub fn arg_tensor(&mut self, dtype: Dtype, shape: &[u64], data: &[u8]) -> Result<RawTensorDesc, Error> {
        let d = self.place(dtype, shape, data)?;
        self.push_arg(ArgKind::Tensor, d);
        Ok(d)
    }

    /// Places and appends a one-element value argument (scalar, int, ...).
    pub fn arg_value(&mut self, kind: ArgKind, dtype: Dtype, elem: &[u8]) -> Result<RawTensorDesc, Error> {
        let d = self.place(dtype, &[1], elem)?;
        self.push_arg(kind, d);
        Ok(d)
    }

    /// Sets the output: a zeroed tensor of `shape` in HBM.
    pub fn set_output(&mut self, dtype: Dtype, shape: &[u64]) -> Result<RawTensorDesc, Error> {
        let numel: u64 = shape.iter().product();
        let bytes = numel * dtype.elem_size() as u64;
        let at = self.alloc_guarded(bytes, "the output".into());
        let d = RawTensorDesc::contiguous(Location::Hbm, dtype.code(), at, shape).ok_or(Error::BadShape)?;
        self.output = Some(d);
        Ok(d)
    }

    /// Sets a raw output descriptor (tests of the gates).
    pub fn set_output_raw(&mut self, d: RawTensorDesc) {
        self.output = Some(d);
    }

    /// The pending output.
    pub fn output(&self) -> Option<RawTensorDesc> {
        self.output
    }

    /// Clears the pending arguments and output.
    pub fn clear_args(&mut self) {
        self.args.clear();
        self.output = None;
    }

    /// Reads SoC memory.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.soc.read(addr, buf).map_err(|_| Error::AddressUnmapped)
    }

    /// Fills the output tensor's storage (`buffer_bytes` of it) with
    /// `byte`: a sentinel, to show later that a run wrote nothing.
    pub fn fill_output(&self, byte: u8) -> Result<(), Error> {
        let d = self.output.ok_or(Error::NoInvocation)?;
        let v = std::vec![byte; d.buffer_bytes as usize];
        self.soc.write(d.storage, &v).map_err(|_| Error::AddressUnmapped)
    }

    /// Reads the output tensor's bytes.
    pub fn read_output(&self) -> Result<Vec<u8>, Error> {
        let d = self.output.ok_or(Error::NoInvocation)?;
        let mut v = std::vec![0u8; d.buffer_bytes as usize];
        self.read(d.storage, &mut v)?;
        Ok(v)
    }

    /// Runs op `name` on cores `0..cores` in parallel threads, each serving
    /// the same invocation block (each core takes its slice by
    /// `get_cpu_id()`).
    pub fn run(&mut self, name: &str, cores: u32) -> Result<RunReport, Error> {
        let block = self.block()?;
        self.run_block(name, cores, &block)
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
    pub fn run_block(&mut self, name: &str, cores: u32, block: &[u8]) -> Result<RunReport, Error> {
        let f = self.ops.iter().find(|(n, _)| n == name).map(|(_, f)| *f).ok_or(Error::NoInvocation)?;
        let cores = cores.clamp(1, CORE_COUNT) as usize;
        let at = self.alloc(block.len() as u64);
        self.soc.write(at, block).map_err(|_| Error::AddressUnmapped)?;
        let mut reports = std::vec![CoreReport::default(); cores];
        std::thread::scope(|s| {
            for (core, rep) in self.cores[..cores].iter_mut().zip(reports.iter_mut()) {
                let run = move || {
                    core.hal().set_invocation_block(at);
                    core.state().translator.thrash = neuron_runtime::thrash::ThrashStats::new();
                    let paint = super::diagnostics::paint_stack();
                    // SAFETY: f is a launcher the kernel registered.
                    let returned = core.enter(|| unsafe { f() });
                    core.hal().set_invocation_block(0);
                    *rep = report(core, returned);
                    rep.stack_high_water = paint.high_water();
                };
                // A thread that cannot start leaves its report empty (returned
                // 0, status 0, cpu 0): visible as a report of the wrong core.
                let _ = std::thread::Builder::new().stack_size(super::diagnostics::RUN_THREAD_STACK).spawn_scoped(s, run);
            }
        });
        let guard_errors = self.check_guards();
        Ok(RunReport { cores: reports, guard_errors })
    }
}

fn report(core: &mut SimCore, returned: i32) -> CoreReport {
    let (status, last_error) = (core.invocation_status(), core.last_error());
    let hal = core.hal();
    let (programs, dma_in, dma_out) = (
        hal.counters().total_window_programs(),
        hal.counters().dma_bytes(DmaDirection::M2S),
        hal.counters().dma_bytes(DmaDirection::S2M),
    );
    let cpu = neuron_hal::Hal::prid(hal);
    let st = core.state();
    CoreReport {
        cpu,
        returned,
        status,
        last_error,
        translate: st.translator.stats,
        window_programs: programs,
        dma_in,
        dma_out,
        hbm: st.hbm.stats(),
        dataram: st.dataram.stats(),
        libc: st.libc.stats(),
        stack_high_water: 0,
        printf: String::new(),
        printf_lost: 0,
        thrash_warning: super::diagnostics::thrash_warning(cpu, &st.translator.thrash),
    }
    .with_printf(st)
}

impl CoreReport {
    fn with_printf(mut self, st: &mut neuron_runtime::CoreState<neuron_hal_mock::MockCore>) -> Self {
        (self.printf, self.printf_lost) = super::diagnostics::drain_printf(&mut st.printf);
        self
    }
}
