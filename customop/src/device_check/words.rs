//! The findings in the host sanitizer's codes and words, with the core,
//! the op, the buffer, the element and the kernel's line.

use super::findings::{Finding, Kind, What};
use customop_symbols::Lines;
use neuroncustomop::runtime::Error;

/// The buffer a finding hit, in words.
fn buffer(f: &Finding) -> String {
    let n = f.hi.saturating_sub(f.lo);
    match f.what {
        What::None => "no block".into(),
        What::Tcm => format!("a tcm_malloc block of {n} bytes"),
        What::Malloc => format!("a malloc/new block of {n} bytes"),
        What::Calloc => format!("a calloc block of {n} bytes"),
        What::Tensor => format!("a torch::empty tensor of {n} bytes"),
        What::Library => format!("a stream buffer of {n} bytes"),
        What::Input(i) => format!("input {i}"),
        What::Output => "the output".into(),
    }
}

/// The element an access hit: its offset in the block over the access's
/// width (the element's size for a typed load or store).
fn element(f: &Finding) -> u64 {
    f.addr.saturating_sub(f.lo) / f.size.max(1)
}

/// Where the access is in the kernel: its file:line; inside a library
/// function (a copy, an accessor compiled out of line), that function
/// and the kernel's line the core ran last before it (from `trail`).
pub fn site(lines: Option<&Lines>, pc: u64, trail: &[u64]) -> String {
    let Some(lines) = lines else { return format!("pc 0x{pc:x}") };
    match crate::device_fault::kernel_line(lines, pc as u32) {
        Some(l) => format!("at {l}"),
        None => {
            let inside = lines.frames(pc).first().map_or_else(String::new, |f| f.function.clone());
            match trail.iter().find_map(|&a| crate::device_fault::kernel_line(lines, a as u32)) {
                Some(l) => format!("in {inside}, called from {l}"),
                None => format!("in {inside} (pc 0x{pc:x})"),
            }
        }
    }
}

/// The code and sentence of one finding of op `op`.
pub fn sentence(op: &str, f: &Finding, lines: Option<&Lines>) -> (Error, String) {
    let (cpu, n, e, at) = (f.cpu, f.count, element(f), site(lines, f.pc, &f.trail));
    let access = if f.store { "write" } else { "read" };
    match f.kind {
        Kind::Uninitialised => (
            Error::UninitialisedRead,
            format!(
                "op `{op}`, core {cpu}: uninitialised read of {}: {n} read(s) of memory nothing wrote, the first at element {e} ({}-byte load at 0x{:x}) {at} \
                 (on the device tcm_malloc, malloc and torch::empty blocks and an output not yet written hold whatever was there)",
                buffer(f),
                f.size,
                f.addr
            ),
        ),
        Kind::Outside => {
            let near = match f.what {
                What::None => String::new(),
                _ if f.addr == f.hi => format!(", just past the end of {}", buffer(f)),
                _ if f.addr > f.hi => format!(", {} byte(s) past the end of {}", f.addr - f.hi, buffer(f)),
                _ => format!(", {} byte(s) before the start of {}", f.lo - f.addr, buffer(f)),
            };
            (
                Error::OutsideBlocks,
                format!("op `{op}`, core {cpu}: {}-byte {access} at 0x{:x}, outside every live block and tensor{near} ({n} such access(es)) {at}: keep the index within the block's size (an accessor checks it for you)", f.size, f.addr),
            )
        }
        Kind::Freed => (
            Error::UseAfterFree,
            format!("op `{op}`, core {cpu}: use after free: {access} of element {e} of {}, which was freed ({n} such access(es)) {at}: free it after its last use", buffer(f)),
        ),
        Kind::InputWritten => (
            Error::InputWritten,
            format!(
                "op `{op}`, core {cpu}: wrote into {} at element {e} ({n} element write(s)) {at}: inputs are const, and on the device this corrupts the caller's data; write into the output or a torch::empty tensor",
                buffer(f)
            ),
        ),
        Kind::CrossCoreRead => {
            let other = f.other.map_or_else(|| "another core".into(), |o| format!("core {o}"));
            let (reader, writer) = if f.store { (other.clone(), format!("core {cpu}")) } else { (format!("core {cpu}"), other) };
            (
                Error::CrossCoreRead,
                format!(
                    "op `{op}`: {reader} read element {e} of {}, which {writer} wrote in the same run ({n} such access(es)), {at}: \
                     there is no barrier between cores on the device, so what it reads depends on timing; read what this core wrote, or the inputs",
                    buffer(f)
                ),
            )
        }
        Kind::CrossCoreWrite => (
            Error::CoreWritesOverlap,
            format!(
                "op `{op}`: cores {} and {cpu} both wrote element {e} of {} ({n} such write(s)) {at}: each core should write a disjoint part",
                f.other.unwrap_or(cpu),
                buffer(f)
            ),
        ),
        Kind::Stack if f.hi > f.lo && f.lo > f.addr => {
            let (used, had) = (f.hi - f.addr, f.hi - f.lo);
            (
                Error::StackExceeded,
                format!(
                    "op `{op}`, core {cpu}: the kernel's stack reached {used} B, {} B past the {had} B it has on the device (first {at}): it would overflow there. \
                     Build with -DSTACK_SIZE={}",
                    f.size,
                    (used + used / 4).div_ceil(4096) * 4096
                ),
            )
        }
        Kind::Stack => (
            Error::StackExceeded,
            format!(
                "op `{op}`, core {cpu}: the kernel's stack went {} B below the limit of the stack it has (to 0x{:x}; first {at}): it would overflow on the device. \
                 Build with a larger -DSTACK_SIZE",
                f.size, f.addr
            ),
        ),
    }
}

/// The run's verdict from `findings` (none: `None`): the first finding's
/// code, and every finding's sentence.
pub fn verdict(op: &str, findings: &[Finding], lines: Option<&Lines>) -> Option<(i32, String)> {
    let said: Vec<(Error, String)> = findings.iter().map(|f| sentence(op, f, lines)).collect();
    let code = said.first()?.0.code();
    let text: Vec<String> = said.iter().map(|(e, s)| format!("emulated-core check: error {}: {s}", e.code())).collect();
    Some((code, text.join("\n")))
}
