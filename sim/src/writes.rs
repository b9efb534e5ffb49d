//! Which output bytes each core of a multicore run wrote, exactly.
//!
//! After a parallel run the simulator runs every core once more, alone
//! and one after another (a valid schedule: SPMD kernels have no barrier,
//! so a correct one is correct in any order), twice: over the output
//! filled with the sentinel and over its complement. A byte a core wrote
//! differs from at least one of the two fills whatever value it wrote, so
//! the union of the two differences is exactly the bytes that core wrote.
//! Bytes two cores both wrote are overlaps; a core that overwrote the
//! guard region after the output wrote outside it. The parallel run's
//! output is put back afterwards.
//!
//! These runs are needed only for writes the sanitizer's hooks did not
//! see (a raw pointer store): [`unseen_writes`] says whether any output
//! element changed without a hook seeing who wrote it.

use super::coverage;
use super::simulator::Simulator;
use crate::ffi::launch::OpFn;
use neuron_hal::platform::CORE_COUNT;
use neuron_runtime::marshal::descriptor::RawTensorDesc;
use std::string::String;
use std::vec::Vec;

/// Outputs larger than this are not attributed (the runs hold two copies
/// of the output in host memory).
pub const MAX_ATTRIBUTED_BYTES: u64 = 64 << 20;

/// What the attribution runs found.
pub struct Writes {
    /// One sentence per pair of cores that wrote the same bytes.
    pub overlaps: Vec<String>,
    /// One sentence per core that wrote past the output's end.
    pub outside: Vec<String>,
}

/// Runs each core alone over both fills (see the module comment).
pub fn attribute(sim: &mut Simulator, f: OpFn, cores: usize, at: u64, o: RawTensorDesc) -> Result<Writes, neuron_runtime::Error> {
    let unmapped = |_| neuron_runtime::Error::AddressUnmapped;
    let len = o.buffer_bytes as usize;
    let mut kept = std::vec![0u8; len];
    sim.read(o.storage, &mut kept)?;
    let mut written: Vec<Vec<(u64, u64)>> = Vec::new();
    let mut outside = Vec::new();
    let mut buf = std::vec![0u8; len];
    for cpu in 0..cores.min(CORE_COUNT as usize) {
        let mut mask = std::vec![false; len];
        for fill in [sim.sentinel(), !sim.sentinel()] {
            // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
            unsafe { coverage::fill(sim.soc(), o.storage, o.buffer_bytes, fill) }.map_err(unmapped)?;
            sim.refill_guards();
            if !sim.launch_one(f, cpu, at, fill) {
                return Err(neuron_runtime::Error::CoreThreadFailed);
            }
            sim.read(o.storage, &mut buf)?;
            for (m, &b) in mask.iter_mut().zip(&buf) {
                *m |= b != fill;
            }
            for g in sim.check_guards() {
                let line = std::format!("core {cpu}: {g}");
                if !outside.contains(&line) {
                    outside.push(line);
                }
            }
        }
        written.push(ranges(&mask));
    }
    sim.refill_guards();
    // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
    unsafe { sim.soc().write(o.storage, &kept) }.map_err(unmapped)?;
    let mut overlaps = Vec::new();
    for a in 0..written.len() {
        for b in a + 1..written.len() {
            let both = coverage::intersect(&written[a], &written[b]);
            if !both.is_empty() {
                overlaps.push(std::format!("cores {a} and {b} both wrote output bytes {}", list(&both)));
            }
        }
    }
    Ok(Writes { overlaps, outside })
}

/// Whether an output element changed without the hooks seeing its writer:
/// `seen` per element (the sanitizer's `written_by`), `held` the element
/// ranges that still hold the sentinel (so the others changed).
pub fn unseen_writes(seen: &[u16], held: &[(u64, u64)]) -> bool {
    use neuron_hal_mock::sanitizer::{UNKNOWN_WRITER, UNWRITTEN};
    let mut next = held.iter().peekable();
    seen.iter().enumerate().any(|(i, &s)| {
        let i = i as u64;
        while next.peek().is_some_and(|r| r.1 <= i) {
            next.next();
        }
        let holds = next.peek().is_some_and(|r| r.0 <= i);
        s & UNKNOWN_WRITER != 0 || (s == UNWRITTEN && !holds)
    })
}

/// The ranges of `held` (elements holding the sentinel) less the elements
/// a hook saw written (a kernel may write the sentinel's very bytes).
pub fn not_seen_written(held: &[(u64, u64)], seen: &[u16]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in held {
        for i in a..b {
            if seen.get(i as usize).is_none_or(|&s| s == neuron_hal_mock::sanitizer::UNWRITTEN) {
                match out.last_mut() {
                    Some(r) if r.1 == i => r.1 = i + 1,
                    _ => out.push((i, i + 1)),
                }
            }
        }
    }
    out
}

/// The true runs of `mask` as half-open ranges.
fn ranges(mask: &[bool]) -> Vec<(u64, u64)> {
    let mut out: Vec<(u64, u64)> = Vec::new();
    for (i, _) in mask.iter().enumerate().filter(|(_, &m)| m) {
        let i = i as u64;
        match out.last_mut() {
            Some(r) if r.1 == i => r.1 = i + 1,
            _ => out.push((i, i + 1)),
        }
    }
    out
}

pub(crate) fn list(r: &[(u64, u64)]) -> String {
    let mut s = String::new();
    for (i, (a, b)) in r.iter().take(8).enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&std::format!("[{a}, {b})"));
    }
    if r.len() > 8 {
        s.push_str(&std::format!(", ... ({} more ranges)", r.len() - 8));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::vec;

    #[test]
    fn only_a_change_no_hook_saw_is_in_doubt() {
        // Elements 0-1 written by core 0, 2-3 still the sentinel.
        assert!(!unseen_writes(&[1, 1, 0, 0], &[(2, 4)]));
        // Element 1 changed, no hook saw it.
        assert!(unseen_writes(&[1, 0, 0, 0], &[(2, 4)]));
        // A writer the sanitizer could not name.
        assert!(unseen_writes(&[1, 0x100, 0, 0], &[(1, 4)]));
        assert!(!unseen_writes(&[], &[]));
    }

    #[test]
    fn elements_a_hook_saw_written_are_not_unwritten() {
        assert_eq!(not_seen_written(&[(0, 4), (6, 8)], &[0, 2, 0, 0, 1, 1, 0, 3]), vec![(0, 1), (2, 4), (6, 7)]);
    }
}
