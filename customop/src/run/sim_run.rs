//! The kernel's run on the simulator, in this process (a contained
//! child's or the tool's own with `--no-fork`): arguments placed, the run,
//! the output streamed into its file or read back.

use super::*;

/// A kernel run on the simulator: its status, report text, output bytes
/// (empty unless the status is 0, and when the output went to a file),
/// and where its time went.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SimRun {
    /// The run status (0: it passed).
    pub rc: i32,
    /// The report.
    pub report: String,
    /// The output.
    pub data: Vec<u8>,
    /// The run's process's part of the timings.
    pub timings: Timings,
    /// Who wrote the output (`Files::writer_map`): its elements and the
    /// cells of `neuron_sim_writer_map`.
    pub writers: Option<(u64, Vec<u16>)>,
}

/// What `customop run` gives the simulator's run beyond `placed`: its
/// tensors mapped from their `.npy` files (their `Placed::Tensor` data
/// is then empty), and the file the output's `.npy` goes to, straight
/// from the simulated HBM (a temporary the caller renames into place).
#[derive(Default)]
pub struct Files {
    /// Per argument, the mapped file of a tensor given as one.
    pub inputs: Vec<Option<npy::Mapped>>,
    /// The output's file.
    pub output: Option<PathBuf>,
    /// A failed run's output is read back as the kernel left it (into
    /// [`SimRun::data`]) rather than dropped.
    pub keep_failed: bool,
    /// The run keeps who wrote the output ([`SimRun::writers`]), for
    /// `--html`.
    pub writer_map: bool,
}

/// Runs the op on a fresh simulator: the run status, the report, the
/// output (empty unless the status is 0, and when it went to
/// `files.output`), the timings. `labels` describe the arguments in
/// messages (the text they were given as); a tensor with a mapped file in
/// `files.inputs` is copied from there.
pub fn run_sim(api: SimApi, op: &Op, labels: &[String], placed: &[Placed], files: &Files, spec: &OutputSpec, cores: u32) -> Result<SimRun> {
    let OutputSpec { dtype, shape } = spec;
    let mut t = Timings::default();
    let clock = Instant::now();
    let mut sim = Sim::new(api)?;
    t.setup = clock.elapsed();
    let clock = Instant::now();
    for (i, p) in placed.iter().enumerate() {
        let what = format!("argument {} of op `{}` ({})", i + 1, op.name, labels[i]);
        match p {
            Placed::Tensor(a) => {
                let mapped = files.inputs.get(i).and_then(Option::as_ref);
                sim.arg_tensor(a.dtype.code(), &a.shape, mapped.map_or(&a.data[..], npy::Mapped::data), &what)?;
                if let Some(m) = mapped {
                    m.release();
                }
            }
            Placed::Value { kind, dtype, bytes, .. } => sim.arg_value(kind.code(), dtype.code(), bytes, &what)?,
        }
    }
    sim.set_output(dtype.code(), shape)?;
    // The output file, its header written: the simulator writes the data
    // into it as the kernels end, while the verdict runs.
    let sunk = match &files.output {
        Some(path) => output_sink(&mut sim, *dtype, shape, path)?,
        None => None,
    };
    t.copy_in = clock.elapsed();
    let mapped = files.writer_map && sim.keep_writer_map();
    let (rc, report) = sim.run(&op.name, cores);
    let writers = if mapped { sim.writer_map() } else { None };
    if let Some((verdict, kernel)) = sim.timings().split_first() {
        t.verdict = Duration::from_nanos(*verdict);
        t.kernel = kernel.iter().map(|&n| Duration::from_nanos(n)).collect();
    }
    let numel: u64 = shape.iter().product();
    let bytes = numel * u64::from(dtype.elem_size());
    if rc != 0 {
        // The output as the kernel left it, when asked (none if the
        // library cannot say).
        let data = if files.keep_failed { sim.inspect_output(bytes as usize).unwrap_or_default() } else { Vec::new() };
        return Ok(SimRun { rc, report, data, timings: t, writers });
    }
    let clock = Instant::now();
    let data = match &files.output {
        Some(path) => {
            let f = match sunk {
                Some(f) => {
                    sim.output_sink_result().map_err(|e| Error::io("write", path, e))?;
                    f
                }
                None => write_output(&mut sim, *dtype, shape, bytes, path)?,
            };
            // The flush to the disk and the simulator's teardown (its
            // memory unmapped and given back: ~20 ms for a 64 MiB run,
            // which the caller would otherwise wait for as this process
            // ends) run at the same time.
            let syncing = std::thread::Builder::new().name("flush".into()).spawn(move || f.sync_data());
            drop(sim);
            let synced = match syncing {
                Ok(h) => h.join().unwrap_or_else(|_| Err(std::io::Error::other("the flushing thread panicked"))),
                Err(e) => Err(e),
            };
            synced.map_err(|e| Error::io("write", path, e))?;
            Vec::new()
        }
        None => sim.read_output(bytes as usize)?,
    };
    t.copy_out = clock.elapsed();
    Ok(SimRun { rc: 0, report, data, timings: t, writers })
}

/// Opens `path` (the caller's temporary), writes the `.npy` header and
/// makes it the simulator's output sink: the file, or None when the
/// library predates sinks (the output is then copied out after the run).
fn output_sink(sim: &mut Sim, dtype: Dtype, shape: &[u64], path: &Path) -> Result<Option<std::fs::File>> {
    use std::io::Write;
    if sim.api().output_sink.is_none() {
        return Ok(None);
    }
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(|e| Error::io("write", path, e))?;
    let header = npy::header(path, dtype, shape)?;
    f.write_all(&header).map_err(|e| Error::io("write", path, e))?;
    Ok(sim.set_output_sink(&f, header.len() as u64)?.then_some(f))
}

/// Writes the output's `.npy` to `path` (the caller's temporary, which
/// it renames into place): the header, then the data straight from the
/// simulated HBM; the caller flushes the file it returns to the disk (as
/// `atomic::write` does) before the rename. The disk writes start as the
/// pieces arrive ([`EarlyWriteback`]), so the flush waits for the last
/// pieces, not the whole file.
fn write_output(sim: &mut Sim, dtype: Dtype, shape: &[u64], bytes: u64, path: &Path) -> Result<std::fs::File> {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new().write(true).truncate(true).open(path).map_err(|e| Error::io("write", path, e))?;
    let header = npy::header(path, dtype, shape)?;
    f.write_all(&header).map_err(|e| Error::io("write", path, e))?;
    let mut w = EarlyWriteback { f: &f, at: header.len() as u64, started: 0 };
    sim.write_output(bytes, &mut w, path)?;
    Ok(f)
}

/// A file written front to back whose disk writes are started (not
/// waited for) every [`EarlyWriteback::STEP`] bytes: the disk works while
/// the rest is copied. Durability is unchanged: the caller still flushes
/// the file (`sync_data`) before it is renamed into place.
struct EarlyWriteback<'a> {
    f: &'a std::fs::File,
    /// The file's length so far (this writer appends).
    at: u64,
    /// The bytes `[0, started)` have had their writeback started.
    started: u64,
}

impl EarlyWriteback<'_> {
    const STEP: u64 = 8 << 20;
}

impl std::io::Write for EarlyWriteback<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        use std::os::fd::AsRawFd;
        let n = (&mut &*self.f).write(buf)?;
        self.at += n as u64;
        if self.at - self.started >= Self::STEP {
            let (from, len) = (self.started as libc::off64_t, (self.at - self.started) as libc::off64_t);
            // SAFETY: sync_file_range on a descriptor this writer borrows
            // open; it only starts writeback of the range (no pointer).
            // Best effort: a failure shows again in the final sync_data.
            let _ = unsafe { libc::sync_file_range(self.f.as_raw_fd(), from, len, libc::SYNC_FILE_RANGE_WRITE) };
            self.started = self.at;
        }
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        (&mut &*self.f).flush()
    }
}
