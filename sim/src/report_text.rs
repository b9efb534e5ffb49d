//! The per-core report as text, as a kernel author reads it after a run.

use super::simulator::{CoreReport, RunReport};
use core::fmt;

impl fmt::Display for CoreReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = &self.translate;
        writeln!(f, "core {}: launcher returned {}, status {}, last error {}", self.cpu, self.returned, self.status, self.last_error)?;
        if !self.errors.is_empty() {
            writeln!(f, "  errors, in order:")?;
            for (i, &e) in self.errors.iter().enumerate() {
                let handled = if i < self.errors_handled { " (handled)" } else { "" };
                match self.sites.iter().find(|s| s.entry == i) {
                    Some(s) => writeln!(f, "    {}, where: {s}{handled}", super::simulator::describe(e))?,
                    None => writeln!(f, "    {}{handled}", super::simulator::describe(e))?,
                }
            }
            if self.errors_dropped != 0 {
                writeln!(f, "    ... and {} more", self.errors_dropped)?;
            }
        }
        if self.args_read.0 < self.args_read.1 {
            writeln!(f, "  the op read {} of the invocation's {} arguments", self.args_read.0, self.args_read.1)?;
        }
        writeln!(
            f,
            "  translate: hits {:?} (dynamic 0-2, SBUF, scratch), misses {:?}, refused {}, window programs {}",
            t.hits, t.misses, t.refused, self.window_programs
        )?;
        if let Some(w) = &self.thrash_warning {
            writeln!(f, "  warning: {w}")?;
        }
        writeln!(f, "  DMA: {} bytes in (HBM -> data RAM), {} bytes out", self.dma_in, self.dma_out)?;
        writeln!(
            f,
            "  high water: HBM heap {} B, data-RAM heap {} B, libc heap {} B, stack {}{} B (the kernel's own: {} B of the {} B it has on the device)",
            self.hbm.high_water,
            self.dataram.high_water,
            self.libc.high_water,
            if self.stack_beyond_paint { "more than " } else { "" },
            self.stack_high_water,
            self.kernel_stack,
            super::device_limits::stack_on_device(self.stack_requested)
        )?;
        if !self.printf.is_empty() || self.printf_lost != 0 {
            writeln!(f, "  printf ({} bytes lost to wrap-around):", self.printf_lost)?;
            for line in self.printf.lines() {
                writeln!(f, "    {line}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for RunReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "run: {} core(s), {}", self.cores.len(), if self.ok() { "ok" } else { "FAILED" })?;
        if let Some(x) = &self.failure {
            writeln!(f, "  verdict: error {}: {}", super::simulator::describe(x.code), x.reason)?;
            if let Some(fix) = neuron_runtime::Error::from_code(x.code).map(super::remedy::what_to_do).filter(|s| !s.is_empty()) {
                writeln!(f, "  what to do: {fix}")?;
            }
        }
        for d in self.device_limits.iter().skip(usize::from(self.failure.as_ref() == self.device_limits.first())) {
            writeln!(f, "  device limit: error {}: {}", super::simulator::describe(d.code), d.reason)?;
        }
        for w in &self.warnings {
            writeln!(f, "  warning: {w}")?;
        }
        for e in &self.guard_errors {
            writeln!(f, "  guard: {e}")?;
        }
        for o in &self.overlaps {
            writeln!(f, "  overlap: {o}")?;
        }
        for c in &self.failed_threads {
            writeln!(f, "  core {c}: its host thread could not start or did not finish")?;
        }
        if let Some(u) = &self.unwritten {
            writeln!(f, "  output: {u}{}", if self.unwritten_allowed { " (allowed for this run)" } else { "" })?;
        }
        for c in &self.cores {
            write!(f, "{c}")?;
            if self.cores.len() > 1 && c.cpu != 0 && !c.printf.is_empty() {
                writeln!(f, "  printf not kept on the device: in multicore mode only core 0's printf output is")?;
            }
        }
        Ok(())
    }
}
