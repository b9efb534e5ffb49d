//! The sanitizer's findings (`neuron_hal_mock::sanitizer`) as run
//! failures: a stable code and a sentence naming the op, the core, the
//! tensor and the first element.

use super::simulator::RunFailure;
use neuron_hal_mock::sanitizer::{Finding, FindingKind};
use neuron_runtime::Error;
use std::string::String;
use std::vec::Vec;

/// How the return addresses of a finding's first access start in its
/// sentence: `" <at-pcs 0x1 0x2>"`, which the tools (that have the
/// kernel's debug information) replace with the kernel's file and line.
pub const FINDING_PCS_OPEN: &str = " <at-pcs";

/// `f`'s addresses as a [`FINDING_PCS_OPEN`] token ("" when it has none).
fn site(f: &Finding) -> String {
    if f.pcs.is_empty() {
        return String::new();
    }
    let pcs: Vec<String> = f.pcs.iter().map(|p| std::format!("{p:#x}")).collect();
    std::format!("{FINDING_PCS_OPEN} {}>", pcs.join(" "))
}

/// The run failure for `f`, found while op `op` ran.
pub fn failure(op: &str, f: &Finding) -> RunFailure {
    let (cpu, region, first, n) = (f.cpu, &f.region, f.first, f.count);
    let at = site(f);
    let other = f.other.map_or_else(|| "another core".into(), |o| std::format!("core {o}"));
    let (e, reason) = match f.kind {
        FindingKind::UninitialisedRead => (
            Error::UninitialisedRead,
            std::format!(
                "op `{op}`, core {cpu}: uninitialised read of {region}: {n} element read(s) of memory nothing wrote, the first at element {first}{at} \
                 (on the device torch::empty tensors and an output not yet written hold whatever was there)"
            ),
        ),
        FindingKind::CrossCoreRead => (
            Error::CrossCoreRead,
            std::format!(
                "op `{op}`, core {cpu}: read element {first} of {region}, which {other} wrote in the same run ({n} such read(s)){at}: \
                 there is no barrier between cores on the device, so what it reads depends on timing"
            ),
        ),
        FindingKind::CrossCoreWrite => (
            Error::CoreWritesOverlap,
            std::format!("op `{op}`: cores {} and {cpu} both wrote element {first} of {region} ({n} such write(s)): each core should write a disjoint part", f.other.unwrap_or(cpu)),
        ),
        FindingKind::InputWritten => (
            Error::InputWritten,
            std::format!("op `{op}`, core {cpu}: wrote into {region} at element {first}{at} ({n} element write(s)): inputs are const, and on the device this corrupts the caller's data"),
        ),
    };
    RunFailure { code: e.code(), cpu: Some(cpu), reason }
}

/// A cross-core write finding in the words of the overlap check: "cores
/// 6 and 7 both wrote output bytes [3500, 3528)" (`elem` bytes per
/// element).
pub fn overlap(f: &Finding, elem: u64) -> String {
    let bytes: Vec<(u64, u64)> = f.ranges.iter().map(|&(a, b)| (a * elem, b * elem)).collect();
    std::format!("cores {} and {} both wrote output bytes {}", f.cpu, f.other.unwrap_or(f.cpu), super::writes::list(&bytes))
}

/// An input whose bytes `[a, b)` (whole pages) changed during the run
/// though no hook saw a store into it.
pub fn input_changed(op: &str, arg: &str, a: u64, b: u64) -> RunFailure {
    RunFailure {
        code: Error::InputWritten.code(),
        cpu: None,
        reason: std::format!(
            "op `{op}`: {arg} changed during the run, in its bytes [{a}, {b}) (a store no accessor made, e.g. through a raw pointer): \
             inputs are const, and on the device this corrupts the caller's data"
        ),
    }
}
