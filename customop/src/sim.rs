//! The simulator C API (`neuron_sim_*`, `include/neuroncustomop.h`) of a
//! built library, as typed function pointers, and a handle that frees
//! itself.
//!
//! The simulator driven here is the copy inside the built shared object
//! (its kernel binds to it), never the `neuroncustomop` crate this tool
//! links: that is why everything goes through the library's exports.

use crate::dylib::Library;
use crate::error::{Error, ErrorKind, Result};
use std::ffi::{c_char, c_void, CStr, CString};

type SimCallFn = unsafe extern "C" fn(*mut c_void) -> i32;

macro_rules! sym {
    ($lib:expr, $name:literal) => {{
        // SAFETY: the symbol is the library's export of that name, whose C
        // signature (include/neuroncustomop.h, or the generated shape
        // entry) is the field's type.
        unsafe { $lib.function($name) }?
    }};
}

/// The entry points of one loaded library.
#[derive(Clone, Copy, Debug)]
pub struct SimApi {
    /// `neuron_sim_new`.
    pub new: unsafe extern "C" fn() -> *mut c_void,
    /// `neuron_sim_free`.
    pub free: unsafe extern "C" fn(*mut c_void),
    /// `neuron_sim_register`.
    pub register: unsafe extern "C" fn(*mut c_void) -> i32,
    /// `neuron_sim_arg_tensor`.
    pub arg_tensor: unsafe extern "C" fn(*mut c_void, u8, *const u64, u32, *const c_void, usize) -> i32,
    /// `neuron_sim_arg_value`.
    pub arg_value: unsafe extern "C" fn(*mut c_void, u8, u8, *const c_void) -> i32,
    /// `neuron_sim_set_output`.
    pub set_output: unsafe extern "C" fn(*mut c_void, u8, *const u64, u32) -> i32,
    /// `neuron_sim_run`.
    pub run: unsafe extern "C" fn(*mut c_void, *const c_char, u32) -> i32,
    /// `neuron_sim_report`.
    pub report: unsafe extern "C" fn(*mut c_void) -> *const c_char,
    /// `neuron_sim_read_output`.
    pub read_output: unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> i32,
    /// `neuron_sim_read_output_at`.
    pub read_output_at: unsafe extern "C" fn(*mut c_void, u64, *mut c_void, usize) -> i32,
    /// `neuron_sim_timings`.
    pub timings: unsafe extern "C" fn(*mut c_void, *mut u64, usize, *mut usize) -> i32,
    /// `neuron_sim_call`.
    pub call: unsafe extern "C" fn(Option<SimCallFn>, *mut c_void) -> i32,
    /// `neuron_error_message`.
    pub error_message_fn: unsafe extern "C" fn(i32) -> *const c_char,
    /// The generated `customop_shape_eval`.
    pub shape_eval: SimCallFn,
    /// `neuron_sim_reset` (None: a library linked before it existed).
    pub reset: Option<unsafe extern "C" fn(*mut c_void) -> i32>,
    /// `neuron_sim_set_output_sink` and `neuron_sim_output_sink_errno`
    /// (None: a library linked before they existed).
    pub output_sink: Option<(unsafe extern "C" fn(*mut c_void, i32, u64) -> i32, unsafe extern "C" fn(*mut c_void) -> i32)>,
    /// The staging entry points (None: a library linked before them).
    pub staging: Option<StagingApi>,
    /// `neuron_sim_set_output_ready` (None: a library linked before it).
    pub output_ready: Option<unsafe extern "C" fn(*mut c_void, Option<OutputReadyFn>, *mut c_void) -> i32>,
    /// `neuron_sim_prefill_output` (None: a library linked before it).
    pub prefill_output: Option<unsafe extern "C" fn(*mut c_void, u64, u64) -> i32>,
    /// `neuron_sim_inspect_output` (None: a library linked before it).
    pub inspect_output: Option<unsafe extern "C" fn(*mut c_void, *mut c_void, usize) -> i32>,
    /// `neuron_sim_keep_writer_map` and `neuron_sim_writer_map` (None: a
    /// library linked before them).
    pub writer_map: Option<(unsafe extern "C" fn(*mut c_void) -> i32, WriterMapFn)>,
}

/// `neuron_sim_writer_map`'s signature.
pub type WriterMapFn = unsafe extern "C" fn(*mut c_void, *mut u16, usize, *mut usize, *mut u64) -> i32;

/// What `neuron_sim_set_output_ready` calls: its context, the output's
/// offset in the tensor area, its bytes.
pub type OutputReadyFn = unsafe extern "C" fn(*mut c_void, u64, u64);

/// A simulator on the caller's HBM file (`neuron_sim_new_staged` and the
/// calls that go with it): arguments staged in place, the output read in
/// place.
#[derive(Clone, Copy, Debug)]
pub struct StagingApi {
    /// `neuron_sim_new_staged`.
    pub new: unsafe extern "C" fn(i32) -> *mut c_void,
    /// `neuron_sim_staging_offset`.
    pub offset: unsafe extern "C" fn() -> u64,
    /// `neuron_sim_place_span`.
    pub place_span: unsafe extern "C" fn(u64) -> u64,
    /// `neuron_sim_arg_tensor_staged`.
    pub arg_tensor: unsafe extern "C" fn(*mut c_void, u8, *const u64, u32, u64, *const u64, usize) -> i32,
    /// `neuron_sim_output_offset`.
    pub output_offset: unsafe extern "C" fn(*mut c_void, *mut u64) -> i32,
}

impl StagingApi {
    fn load(lib: &Library) -> Result<Self> {
        Ok(Self {
            new: sym!(lib, "neuron_sim_new_staged"),
            offset: sym!(lib, "neuron_sim_staging_offset"),
            place_span: sym!(lib, "neuron_sim_place_span"),
            arg_tensor: sym!(lib, "neuron_sim_arg_tensor_staged"),
            output_offset: sym!(lib, "neuron_sim_output_offset"),
        })
    }

    /// Where the tensor area starts in the HBM file.
    pub fn area_offset(&self) -> u64 {
        // SAFETY: a pure function of no arguments.
        unsafe { (self.offset)() }
    }

    /// How far apart a tensor of `bytes` and the next argument are placed
    /// (None: past 64 bits).
    pub fn place_span(&self, bytes: u64) -> Option<u64> {
        // SAFETY: a pure function of a number.
        Some(unsafe { (self.place_span)(bytes) }).filter(|&s| s != 0)
    }
}

impl SimApi {
    /// Looks up every entry point in `lib`.
    pub fn load(lib: &Library) -> Result<Self> {
        Ok(Self {
            new: sym!(lib, "neuron_sim_new"),
            free: sym!(lib, "neuron_sim_free"),
            register: sym!(lib, "neuron_sim_register"),
            arg_tensor: sym!(lib, "neuron_sim_arg_tensor"),
            arg_value: sym!(lib, "neuron_sim_arg_value"),
            set_output: sym!(lib, "neuron_sim_set_output"),
            run: sym!(lib, "neuron_sim_run"),
            report: sym!(lib, "neuron_sim_report"),
            read_output: sym!(lib, "neuron_sim_read_output"),
            read_output_at: sym!(lib, "neuron_sim_read_output_at"),
            timings: sym!(lib, "neuron_sim_timings"),
            call: sym!(lib, "neuron_sim_call"),
            error_message_fn: sym!(lib, "neuron_error_message"),
            shape_eval: sym!(lib, "customop_shape_eval"),
            // SAFETY: as `sym!`: the export's C signature is the field's type.
            reset: unsafe { lib.function("neuron_sim_reset") }.ok(),
            // SAFETY: as `sym!`.
            output_sink: unsafe { lib.function("neuron_sim_set_output_sink") }.ok().zip(unsafe { lib.function("neuron_sim_output_sink_errno") }.ok()),
            staging: StagingApi::load(lib).ok(),
            // SAFETY: as `sym!`.
            output_ready: unsafe { lib.function("neuron_sim_set_output_ready") }.ok(),
            // SAFETY: as `sym!`.
            prefill_output: unsafe { lib.function("neuron_sim_prefill_output") }.ok(),
            // SAFETY: the symbol has this signature (sim/src/sim_ffi.rs).
            inspect_output: unsafe { lib.function("neuron_sim_inspect_output") }.ok(),
            // SAFETY: the symbols have these signatures (sim/src/sim_ffi.rs).
            writer_map: unsafe { lib.function("neuron_sim_keep_writer_map") }.ok().zip(unsafe { lib.function("neuron_sim_writer_map") }.ok()),
        })
    }

    /// The runtime's message for error `code`.
    pub fn error_message(&self, code: i32) -> String {
        // SAFETY: neuron_error_message takes any code and returns a static
        // C string (or null for an unknown one).
        let p = unsafe { (self.error_message_fn)(code) };
        if p.is_null() {
            return format!("unknown error {code}");
        }
        // SAFETY: non-null: a static NUL-terminated string.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// A simulator of the library, freed on drop.
pub struct Sim {
    api: SimApi,
    h: *mut c_void,
}

impl Sim {
    /// A fresh simulator with the library's ops registered.
    pub fn new(api: SimApi) -> Result<Self> {
        // SAFETY: neuron_sim_new takes nothing; null is checked.
        Self::registered(api, unsafe { (api.new)() })
    }

    /// A fresh simulator on the HBM file `fd` (`neuron_sim_new_staged`),
    /// the library's ops registered.
    pub fn new_staged(api: SimApi, fd: i32) -> Result<Self> {
        let staging = api.staging.ok_or_else(|| Error::new(ErrorKind::Environment, "the library has no staging simulator (link it again)"))?;
        // SAFETY: neuron_sim_new_staged takes a descriptor (a bad one is
        // its NULL); null is checked.
        Self::registered(api, unsafe { (staging.new)(fd) })
    }

    /// `h` (null: the reason the simulator could not be made) with the
    /// library's ops registered.
    fn registered(api: SimApi, h: *mut c_void) -> Result<Self> {
        if h.is_null() {
            let why = neuroncustomop::host::reserve::why_no_simulator().unwrap_or_else(|| "cannot map the mock SoC".into());
            return Err(Error::new(ErrorKind::Environment, format!("neuron_sim_new failed: {why}")));
        }
        let s = Self { api, h };
        // SAFETY: h is live.
        let n = unsafe { (api.register)(h) };
        if n < 0 {
            return Err(Error::new(ErrorKind::RunFailed, format!("registering the ops failed: {}", api.error_message(-n))));
        }
        Ok(s)
    }

    fn check(&self, rc: i32, what: &str) -> Result<()> {
        if rc == 0 {
            Ok(())
        } else {
            Err(Error::new(ErrorKind::BadInput, format!("{what}: error {rc}: {}", self.api.error_message(rc))))
        }
    }

    /// Places a tensor argument.
    pub fn arg_tensor(&mut self, dtype: u8, shape: &[u64], data: &[u8], what: &str) -> Result<()> {
        // SAFETY: h live; shape readable for its length; data for its length.
        let rc = unsafe { (self.api.arg_tensor)(self.h, dtype, shape.as_ptr(), shape.len() as u32, data.as_ptr().cast(), data.len()) };
        self.check(rc, what)
    }

    /// Places a one-element value argument of kind `kind`.
    pub fn arg_value(&mut self, kind: u8, dtype: u8, elem: &[u8], what: &str) -> Result<()> {
        // SAFETY: h live; elem holds one element of dtype (the caller
        // encodes it with that dtype's size).
        let rc = unsafe { (self.api.arg_value)(self.h, kind, dtype, elem.as_ptr().cast()) };
        self.check(rc, what)
    }

    /// Appends the tensor argument the caller staged at `offset` of the
    /// tensor area (a staging simulator's). No page hashes: the run takes
    /// them if its kernel makes a raw pointer.
    pub fn arg_tensor_staged(&mut self, dtype: u8, shape: &[u64], offset: u64, what: &str) -> Result<()> {
        let staging = self.api.staging.ok_or_else(|| Error::new(ErrorKind::Environment, "the library has no staging simulator"))?;
        // SAFETY: h live; shape readable for its length; no hashes.
        let rc = unsafe { (staging.arg_tensor)(self.h, dtype, shape.as_ptr(), shape.len() as u32, offset, std::ptr::null(), 0) };
        self.check(rc, what)
    }

    /// Where the passed run's output lies in the tensor area.
    pub fn output_offset(&mut self) -> Result<u64> {
        let staging = self.api.staging.ok_or_else(|| Error::new(ErrorKind::Environment, "the library has no staging simulator"))?;
        let mut at = 0u64;
        // SAFETY: h live; `at` writable.
        let rc = unsafe { (staging.output_offset)(self.h, &mut at) };
        self.check(rc, "the output").map(|()| at)
    }

    /// Sets the output.
    pub fn set_output(&mut self, dtype: u8, shape: &[u64]) -> Result<()> {
        // SAFETY: h live; shape readable.
        let rc = unsafe { (self.api.set_output)(self.h, dtype, shape.as_ptr(), shape.len() as u32) };
        self.check(rc, "the output")
    }

    /// Makes the runs write their output into `file` from `offset` as
    /// their kernels end (`neuron_sim_set_output_sink`): false, nothing
    /// set, for a library that predates it.
    pub fn set_output_sink(&mut self, file: &std::fs::File, offset: u64) -> Result<bool> {
        use std::os::fd::AsRawFd;
        let Some((set, _)) = self.api.output_sink else { return Ok(false) };
        // SAFETY: h live; the descriptor is open for the call (the
        // simulator keeps a duplicate).
        let rc = unsafe { set(self.h, file.as_raw_fd(), offset) };
        self.check(rc, "the output file").map(|()| true)
    }

    /// Has `ready(ctx, offset, len)` called during each later run, once
    /// its output is final should the run pass
    /// (`neuron_sim_set_output_ready`): false, nothing set, for a library
    /// that predates it.
    ///
    /// # Safety
    /// Until replaced or this simulator dropped, `ready` must be safe to
    /// call with `ctx` on the threads that run this simulator.
    pub unsafe fn set_output_ready(&mut self, ready: OutputReadyFn, ctx: *mut c_void) -> Result<bool> {
        let Some(set) = self.api.output_ready else { return Ok(false) };
        // SAFETY: h live; the callback's contract is the caller's.
        let rc = unsafe { set(self.h, Some(ready), ctx) };
        self.check(rc, "the output notice").map(|()| true)
    }

    /// Fills `len` bytes at `offset` of the tensor area with the sentinel
    /// for the next run (`neuron_sim_prefill_output`): false, nothing
    /// done, for a library that predates it.
    pub fn prefill_output(&mut self, offset: u64, len: u64) -> Result<bool> {
        let Some(prefill) = self.api.prefill_output else { return Ok(false) };
        // SAFETY: h live.
        let rc = unsafe { prefill(self.h, offset, len) };
        self.check(rc, "the output filled ahead").map(|()| true)
    }

    /// How the last run's write into the output sink ended: Ok when the
    /// file holds the output.
    pub fn output_sink_result(&self) -> std::io::Result<()> {
        let Some((_, errno)) = self.api.output_sink else { return Err(std::io::Error::other("no output sink in this library")) };
        // SAFETY: h live.
        match unsafe { errno(self.h) } {
            0 => Ok(()),
            -1 => Err(std::io::Error::other("the run wrote no output to its file")),
            e => Err(std::io::Error::from_raw_os_error(e)),
        }
    }

    /// Runs op `name` on `cores` cores: the status (0 = every core
    /// succeeded) and the report text.
    pub fn run(&mut self, name: &str, cores: u32) -> (i32, String) {
        let c = CString::new(name).expect("op names are identifiers");
        // SAFETY: h live; c a C string.
        let rc = unsafe { (self.api.run)(self.h, c.as_ptr(), cores) };
        // SAFETY: h live; the report is a C string valid until the next
        // run, copied at once.
        let rep = unsafe { CStr::from_ptr((self.api.report)(self.h)) }.to_string_lossy().into_owned();
        // This process has the kernel mapped: a finding's addresses become
        // its line here.
        (rc, crate::finding_site::symbolize(&rep))
    }

    /// Asks the next run to keep its writer map (false: the library
    /// cannot, being linked before it could).
    pub fn keep_writer_map(&mut self) -> bool {
        // SAFETY: h live.
        self.api.writer_map.is_some_and(|(keep, _)| unsafe { keep(self.h) } == 0)
    }

    /// The last run's writer map: the output's elements and the cells
    /// (`neuron_sim_writer_map`), None when the run kept none.
    pub fn writer_map(&mut self) -> Option<(u64, Vec<u16>)> {
        let (_, f) = self.api.writer_map?;
        let (mut n, mut elements) = (0usize, 0u64);
        // SAFETY: h live; asking only how many (no cells, cap 0).
        if unsafe { f(self.h, std::ptr::null_mut(), 0, &mut n, &mut elements) } != 0 {
            return None;
        }
        let mut cells = vec![0u16; n];
        // SAFETY: h live; cells writable for n values.
        (unsafe { f(self.h, cells.as_mut_ptr(), n, &mut n, &mut elements) } == 0).then_some((elements, cells))
    }

    /// The output's bytes (`n` of them).
    pub fn read_output(&mut self, n: usize) -> Result<Vec<u8>> {
        let mut v = vec![0u8; n];
        // SAFETY: h live; v writable for n bytes.
        let rc = unsafe { (self.api.read_output)(self.h, v.as_mut_ptr().cast(), n) };
        self.check(rc, "reading the output")?;
        Ok(v)
    }

    /// The output's `n` bytes as they are now, whatever the last run did
    /// (a failed run's too): `neuron_sim_inspect_output`.
    pub fn inspect_output(&mut self, n: usize) -> Result<Vec<u8>> {
        let f = self.api.inspect_output.ok_or_else(|| Error::new(ErrorKind::Environment, "the library cannot inspect the output (link it again)"))?;
        let mut v = vec![0u8; n];
        // SAFETY: h live; v writable for n bytes.
        let rc = unsafe { f(self.h, v.as_mut_ptr().cast(), n) };
        self.check(rc, "inspecting the output")?;
        Ok(v)
    }

    /// Brings the simulator back to its fresh state, ops registered
    /// (`neuron_sim_reset`); false when the library has no reset or it
    /// failed (then the handle must be dropped).
    pub fn reset(&mut self) -> bool {
        // SAFETY: h is live.
        self.api.reset.is_some_and(|r| unsafe { r(self.h) } == 0)
    }

    /// Copies the output's bytes into `dst` (its length: the output's size).
    pub fn read_output_into(&mut self, dst: &mut [u8]) -> Result<()> {
        // SAFETY: h live; dst writable for its length.
        let rc = unsafe { (self.api.read_output)(self.h, dst.as_mut_ptr().cast(), dst.len()) };
        self.check(rc, "reading the output")
    }

    /// Writes the output's `n` bytes to `w` a piece at a time (one copy
    /// out of the simulated HBM, through a buffer of at most 1 MiB).
    pub fn write_output(&mut self, n: u64, w: &mut dyn std::io::Write, path: &std::path::Path) -> Result<()> {
        const PIECE: u64 = 1 << 20;
        let mut buf = vec![0u8; n.min(PIECE) as usize];
        let mut at = 0;
        while at < n {
            let k = (n - at).min(PIECE) as usize;
            // SAFETY: h live; buf writable for k <= buf.len() bytes.
            let rc = unsafe { (self.api.read_output_at)(self.h, at, buf.as_mut_ptr().cast(), k) };
            self.check(rc, "reading the output")?;
            w.write_all(&buf[..k]).map_err(|e| Error::io("write", path, e))?;
            at += k as u64;
        }
        Ok(())
    }

    /// The last run's timings in ns: the run outside the kernels, then
    /// each core's kernel.
    pub fn timings(&self) -> Vec<u64> {
        let mut v = vec![0u64; 9];
        let mut n = 0usize;
        // SAFETY: h live; v writable for its length; n writable.
        let rc = unsafe { (self.api.timings)(self.h, v.as_mut_ptr(), v.len(), &mut n) };
        v.truncate(if rc == 0 { n.min(9) } else { 0 });
        v
    }

    /// The API.
    pub fn api(&self) -> &SimApi {
        &self.api
    }
}

impl Drop for Sim {
    fn drop(&mut self) {
        // SAFETY: h came from neuron_sim_new and is not used again.
        unsafe { (self.api.free)(self.h) };
    }
}
