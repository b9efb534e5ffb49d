//! The run report as Python objects, read from the text the simulator
//! prints (`neuron_sim_report`, the one formatting of the report, which
//! `customop run --report` prints too): `str(report)` is that text, and
//! its fields are parsed back out of it. A line this parser does not
//! know is an error, not a silent gap, so a change to the format shows
//! in the tests.

use pyo3::prelude::*;

/// One core's part of a run.
#[pyclass(module = "neuroncustomop", frozen, get_all)]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CoreReport {
    /// The core (0..8).
    pub cpu: u32,
    /// The launcher's return value.
    pub returned: i64,
    /// The first marshalling failure (0: none).
    pub status: i64,
    /// The last error the runtime recorded (0: none).
    pub last_error: i64,
    /// Every error the runtime recorded on this core, in order:
    /// `(code, message, handled)`; handled: the kernel cleared it
    /// (`neuron_clear_error`), or a `tcm_malloc` null, which kernels test.
    pub errors: Vec<(i64, String, bool)>,
    /// Errors past the log's capacity, counted but not kept.
    pub errors_dropped: u64,
    /// `(read, passed)` when the op read fewer arguments than it was given.
    pub args_unread: Option<(u64, u64)>,
    /// Translate hits per window (dynamic 0-2, SBUF, scratch).
    pub translate_hits: Vec<u64>,
    /// Translate misses per dynamic window.
    pub translate_misses: Vec<u64>,
    /// Translations refused.
    pub translate_refused: u64,
    /// Window-register writes.
    pub window_programs: u64,
    /// Set when the kernel thrashed the dynamic windows.
    pub thrash_warning: Option<String>,
    /// DMA bytes HBM -> data RAM.
    pub dma_in: u64,
    /// DMA bytes data RAM -> HBM.
    pub dma_out: u64,
    /// High-water marks in bytes.
    pub hbm_heap_high_water: u64,
    /// As above, the data-RAM heap.
    pub dataram_heap_high_water: u64,
    /// As above, the libc heap.
    pub libc_heap_high_water: u64,
    /// Deepest stack use.
    pub stack_high_water: u64,
    /// The kernel's own stack use (below the launcher, where it calls the
    /// library), and the stack it has on the device.
    pub kernel_stack: u64,
    /// As above: what the device gives the kernel.
    pub stack_on_device: u64,
    /// In a multicore run: this core printed, and the device keeps core
    /// 0's printf output only.
    pub printf_not_kept: bool,
    /// What the kernel printed, one entry a line.
    pub printf: Vec<String>,
    /// printf bytes lost to the ring's wrap-around.
    pub printf_lost: u64,
}

#[pymethods]
impl CoreReport {
    fn __repr__(&self) -> String {
        format!(
            "CoreReport(cpu={}, returned={}, status={}, last_error={}, dma_in={}, dma_out={}, printf={} line(s))",
            self.cpu,
            self.returned,
            self.status,
            self.last_error,
            self.dma_in,
            self.dma_out,
            self.printf.len()
        )
    }
}

/// A run's report.
#[pyclass(module = "neuroncustomop", frozen)]
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    /// Whether every core finished cleanly and no guard was hit.
    #[pyo3(get)]
    pub ok: bool,
    /// One per core run, in core order.
    #[pyo3(get)]
    pub cores: Vec<CoreReport>,
    /// Why the run failed, when it did: `(code, reason)`.
    #[pyo3(get)]
    pub verdict: Option<(i64, String)>,
    /// Tensors whose guard region the kernel overwrote (wrote past the end).
    #[pyo3(get)]
    pub guard_errors: Vec<String>,
    /// Output ranges more than one core wrote.
    #[pyo3(get)]
    pub overlaps: Vec<String>,
    /// Cores whose host thread could not start or did not finish.
    #[pyo3(get)]
    pub failed_threads: Vec<u32>,
    /// The output elements no core wrote, when some were not.
    #[pyo3(get)]
    pub unwritten: Option<String>,
    /// What the device would refuse or misrun besides the
    /// verdict: `(code, reason)`.
    #[pyo3(get)]
    pub device_limits: Vec<(i64, String)>,
    /// What runs on the device, but not as it did here.
    #[pyo3(get)]
    pub warnings: Vec<String>,
    /// Set when the simulator refused the run before any core started.
    #[pyo3(get)]
    pub refused: Option<String>,
    /// The report's text, as `customop run --report` prints it.
    #[pyo3(get)]
    pub text: String,
    /// A profiled emulated run (`profile=DIR`): the directory its files
    /// went to (`profile.json`, `flamegraph.svg`, `trace.json`).
    #[pyo3(get)]
    pub profile_dir: Option<String>,
    /// A profiled emulated run: the profile's summary (modeled device
    /// time, top lines), as `customop run --profile` prints it.
    #[pyo3(get)]
    pub profile_summary: Option<String>,
    /// What the report page draws the output map from (not an
    /// attribute): the op, the output's shape, its elements and the
    /// writer map's cells; None when the run kept no writer map.
    pub writer_map: Option<WriterMap>,
}

/// Who wrote each element of a run's output, for the report page.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WriterMap {
    pub op: String,
    pub shape: Vec<u64>,
    pub elements: u64,
    pub cells: Vec<u16>,
}

#[pymethods]
impl Report {
    fn __str__(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!("Report(ok={}, cores={}, guard_errors={:?})", if self.ok { "True" } else { "False" }, self.cores.len(), self.guard_errors)
    }

    /// The report as one self-contained HTML page, which a notebook
    /// shows: the findings and, per core, DMA, translations, high water
    /// against the device's limits, printf folded away, and the output
    /// map by core for a call made with `report=True` on the simulator.
    fn _repr_html_(&self) -> String {
        let input = match &self.writer_map {
            Some(m) => customop::report_page::PageInput { op: &m.op, shape: &m.shape, report: &self.text, writers: Some((m.elements, &m.cells)) },
            None => customop::report_page::PageInput { op: "", shape: &[], report: &self.text, writers: None },
        };
        customop::report_page::page(&input)
    }

    /// A profiled emulated run's `profile.json` as Python data (None for
    /// a run without `profile=`).
    #[getter]
    fn profile<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyAny>>> {
        let Some(dir) = &self.profile_dir else { return Ok(None) };
        let path = std::path::Path::new(dir).join(customop::profile::output::PROFILE_JSON);
        let text = std::fs::read_to_string(&path).map_err(|e| pyo3::exceptions::PyOSError::new_err(format!("{}: {e}", path.display())))?;
        Ok(Some(py.import("json")?.call_method1("loads", (text,))?))
    }

    /// Every printf line of the run, core by core.
    #[getter]
    fn printf(&self) -> Vec<String> {
        self.cores.iter().flat_map(|c| c.printf.iter().cloned()).collect()
    }
}

fn num<T: std::str::FromStr>(s: &str) -> Option<T> {
    s.trim().parse().ok()
}

/// `[1, 2, 3]`.
fn list(s: &str) -> Option<Vec<u64>> {
    let inner = s.trim().strip_prefix('[')?.strip_suffix(']')?;
    inner.split(',').map(str::trim).filter(|t| !t.is_empty()).map(|t| t.parse().ok()).collect()
}

/// The text between `before` and `after` in `s`.
fn between<'a>(s: &'a str, before: &str, after: &str) -> Option<&'a str> {
    let at = s.find(before)? + before.len();
    let rest = &s[at..];
    Some(&rest[..rest.find(after)?])
}

fn core_header(l: &str) -> Option<CoreReport> {
    let rest = l.strip_prefix("core ")?;
    let (cpu, rest) = rest.split_once(": launcher returned ")?;
    let (returned, rest) = rest.split_once(", status ")?;
    let (status, last) = rest.split_once(", last error ")?;
    Some(CoreReport { cpu: num(cpu)?, returned: num(returned)?, status: num(status)?, last_error: num(last)?, ..Default::default() })
}

/// `45 (a message)`, as the report describes an error code.
fn described(s: &str) -> Option<(i64, String)> {
    match s.split_once(' ') {
        Some((code, msg)) => Some((num(code)?, msg.strip_prefix('(')?.strip_suffix(')')?.to_owned())),
        None => Some((num(s)?, String::new())),
    }
}

/// Which indented list a core's `    ` lines belong to.
#[derive(Clone, Copy, PartialEq)]
enum Section {
    None,
    Errors,
    Printf,
}

const HANDLED: &str = " (handled)";

fn core_line(c: &mut CoreReport, section: &mut Section, l: &str) -> Option<()> {
    if let Some(item) = l.strip_prefix("    ") {
        match *section {
            Section::Errors => {
                if let Some(n) = item.strip_prefix("... and ").and_then(|r| r.strip_suffix(" more")) {
                    c.errors_dropped = num(n)?;
                } else {
                    let (item, handled) = match item.strip_suffix(HANDLED) {
                        Some(i) => (i, true),
                        None => (item, false),
                    };
                    // "83 (its message), where: argument 0 ..., at k.cpp:12":
                    // the site is in the verdict's reason.
                    let item = item.split_once(", where: ").map_or(item, |(e, _)| e);
                    let (code, msg) = described(item)?;
                    c.errors.push((code, msg, handled));
                }
            }
            Section::Printf => c.printf.push(item.to_owned()),
            Section::None => return None,
        }
        return Some(());
    }
    *section = Section::None;
    if l == "  errors, in order:" {
        *section = Section::Errors;
    } else if let Some(a) = l.strip_prefix("  the op read ") {
        let (read, rest) = a.split_once(" of the invocation's ")?;
        c.args_unread = Some((num(read)?, num(rest.strip_suffix(" arguments")?)?));
    } else if let Some(t) = l.strip_prefix("  translate: ") {
        c.translate_hits = list(between(t, "hits ", " (dynamic")?)?;
        c.translate_misses = list(between(t, "misses ", ", refused")?)?;
        c.translate_refused = num(between(t, "refused ", ", window")?)?;
        c.window_programs = num(t.split_once("window programs ")?.1)?;
    } else if let Some(w) = l.strip_prefix("  warning: ") {
        c.thrash_warning = Some(w.to_owned());
    } else if let Some(d) = l.strip_prefix("  DMA: ") {
        c.dma_in = num(between(d, "", " bytes in")?)?;
        c.dma_out = num(between(d, "), ", " bytes out")?)?;
    } else if let Some(h) = l.strip_prefix("  high water: ") {
        c.hbm_heap_high_water = num(between(h, "HBM heap ", " B,")?)?;
        c.dataram_heap_high_water = num(between(h, "data-RAM heap ", " B,")?)?;
        c.libc_heap_high_water = num(between(h, "libc heap ", " B,")?)?;
        // "stack more than N B": the run went past the painted stack.
        let stack = between(h, "stack ", " B")?;
        c.stack_high_water = num(stack.strip_prefix("more than ").unwrap_or(stack))?;
        c.kernel_stack = num(between(h, "the kernel's own: ", " B of")?)?;
        c.stack_on_device = num(between(h, " B of the ", " B it has")?)?;
    } else if l == "  printf not kept on the device: in multicore mode only core 0's printf output is" {
        c.printf_not_kept = true;
    } else {
        let p = l.strip_prefix("  printf (")?;
        c.printf_lost = num(between(p, "", " bytes lost")?)?;
        *section = Section::Printf;
    }
    Some(())
}

/// A run-level line (before the first core): `None` if it is not one.
fn run_line(r: &mut Report, l: &str) -> Option<()> {
    if let Some(v) = l.strip_prefix("  verdict: error ") {
        // `45 (its message): reason`, or `45: reason` for a code without one.
        let digits = v.find(|ch: char| !(ch.is_ascii_digit() || ch == '-')).unwrap_or(v.len());
        let (code, rest) = v.split_at(digits);
        let reason = match rest.strip_prefix(" (") {
            Some(r) => r.split_once("): ")?.1,
            None => rest.strip_prefix(": ")?,
        };
        r.verdict = Some((num(code)?, reason.to_owned()));
    } else if l.starts_with("  what to do: ") {
        // The verdict's usual fix: in the report's text, not a field.
    } else if let Some(d) = l.strip_prefix("  device limit: error ") {
        let (code, rest) = d.split_once(' ')?;
        r.device_limits.push((num(code)?, rest.split_once("): ").map_or(rest, |x| x.1).to_owned()));
    } else if let Some(w) = l.strip_prefix("  warning: ") {
        r.warnings.push(w.to_owned());
    } else if let Some(g) = l.strip_prefix("  guard: ") {
        r.guard_errors.push(g.to_owned());
    } else if let Some(o) = l.strip_prefix("  overlap: ") {
        r.overlaps.push(o.to_owned());
    } else if let Some(c) = l.strip_prefix("  core ").and_then(|c| c.strip_suffix(": its host thread could not start or did not finish")) {
        r.failed_threads.push(num(c)?);
    } else {
        r.unwritten = Some(l.strip_prefix("  output: ")?.to_owned());
    }
    Some(())
}

/// Parses the simulator's report text; the error names the line.
pub fn parse(text: &str) -> Result<Report, String> {
    let mut r = Report { text: text.to_owned(), ..Default::default() };
    let mut lines = text.lines();
    let first = lines.next().unwrap_or("");
    if let Some(why) = first.strip_prefix("run refused: ") {
        r.refused = Some(why.to_owned());
        return Ok(r);
    }
    let head = first.strip_prefix("run: ").and_then(|h| h.split_once(" core(s), ")).ok_or_else(|| format!("report line 1 not understood: {first:?}"))?;
    let declared: usize = num(head.0).ok_or_else(|| format!("report line 1 not understood: {first:?}"))?;
    r.ok = head.1 == "ok";
    let mut section = Section::None;
    for (n, l) in lines.enumerate() {
        let bad = || format!("report line {} not understood: {l:?}", n + 2);
        if let Some(c) = core_header(l) {
            r.cores.push(c);
            section = Section::None;
        } else if let Some(c) = r.cores.last_mut() {
            core_line(c, &mut section, l).ok_or_else(bad)?;
        } else {
            run_line(&mut r, l).ok_or_else(bad)?;
        }
    }
    if r.cores.len() != declared {
        return Err(format!("the report declares {declared} core(s) and shows {}", r.cores.len()));
    }
    Ok(r)
}
