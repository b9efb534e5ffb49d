//! Per-run diagnostics the simulator adds to each core's report: the
//! stack high-water mark (by painting part of the run thread's stack), the printf
//! ring's flushed output, and the thrash warning.

use neuron_runtime::thrash::ThrashStats;
use std::string::String;
use std::vec::Vec;

/// Bytes of the run thread's stack painted below the launcher's frame:
/// far past the device's 8 KiB local stack and the usual `-DSTACK_SIZE`,
/// but bounded, because the paint and its scan are paid on every run (a
/// whole MiB cost a 16-element Python op call ~30 µs, issue 28). A
/// kernel that goes deeper is reported as "more than" this. The stack
/// rule (error 112) takes the deeper of the stack pointer at the kernel's
/// library calls (any depth) and the paint's lowest touched byte when the
/// library's frames cannot explain it (`device_limits::kernel_stack`).
pub const STACK_PAINT_BYTES: usize = 128 << 10;
/// Stack size of a run thread (room for the paint and the kernel).
pub const RUN_THREAD_STACK: usize = 8 << 20;
/// Bytes just below the painter's frame left unpainted (its own frame).
const PAINT_GAP: usize = 4096;
const PAINT: u8 = 0xA5;
/// [`PAINT`] in every byte of a word.
const PAINT_WORD: u64 = 0xA5A5_A5A5_A5A5_A5A5;

/// A painted span of the current thread's stack.
#[derive(Clone, Copy, Debug)]
pub struct StackPaint {
    top: usize,
    low: usize,
}

/// Paints [`STACK_PAINT_BYTES`] of the calling thread's stack below the
/// caller's frame. Must be called on a thread with at least
/// [`RUN_THREAD_STACK`] of stack.
#[inline(never)]
pub fn paint_stack() -> StackPaint {
    let marker = 0u8;
    // Word aligned, painted with one memset (a byte at a time cost a
    // Python op call hundreds of microseconds).
    let top = (core::ptr::addr_of!(marker) as usize - PAINT_GAP) & !7;
    let low = top - STACK_PAINT_BYTES;
    // SAFETY: [low, top) lies in this thread's stack mapping (the thread
    // has RUN_THREAD_STACK > STACK_PAINT_BYTES + PAINT_GAP of stack and
    // we are near its top), below every live frame (memset's own frame
    // fits in the gap); no Rust object lives there, and frames later
    // pushed there initialise their memory before use. The address goes
    // through black_box: the compiler cannot drop the fill as unread.
    unsafe { core::ptr::write_bytes(core::hint::black_box(low as *mut u8), PAINT, STACK_PAINT_BYTES) };
    StackPaint { top, low }
}

impl StackPaint {
    /// Bytes below the painted top that something overwrote: the deepest
    /// stack use since the paint (plus the gap), and whether the paint's
    /// lowest word was overwritten too (the use may go deeper: the bytes
    /// are then a lower bound, the whole painted span).
    pub fn high_water(&self) -> (u64, bool) {
        let (lowest, beyond) = self.lowest_touched();
        ((self.top - lowest + PAINT_GAP) as u64, beyond)
    }

    /// The lowest address something overwrote since the paint (the
    /// painted top when nothing did), and whether the paint's lowest word
    /// was overwritten too (the use may then go deeper).
    pub fn lowest_touched(&self) -> (usize, bool) {
        // SAFETY: as in `paint_stack`: [low, top) is this thread's mapped
        // stack, 8-aligned, below every live frame (we are called from
        // the painter's caller, above `top`); the kernel that used it has
        // returned. Read as plain words, so the search vectorises.
        let words = unsafe { core::slice::from_raw_parts(core::hint::black_box(self.low as *const u64), (self.top - self.low) / 8) };
        // Blocks of 64 words folded without an early exit (which the
        // compiler vectorises), then the block that differs word by word.
        let block = words.chunks(64).position(|c| c.iter().fold(0, |acc, &w| acc | (w ^ PAINT_WORD)) != 0);
        if let Some(i) = block.and_then(|b| words[b * 64..].iter().position(|&w| w != PAINT_WORD).map(|i| b * 64 + i)) {
            // The first overwritten byte of the first overwritten word.
            let lead = words[i].to_ne_bytes().iter().take_while(|&&b| b == PAINT).count();
            return (self.low + i * 8 + lead, i == 0);
        }
        (self.top, false)
    }
}

/// The flushed printf entries of a core, one line each, and bytes lost.
pub fn drain_printf(ring: &mut neuron_runtime::printf::PrintfRing) -> (String, u64) {
    let mut out = String::new();
    let d = ring.drain(|e| {
        out.push_str(&String::from_utf8_lossy(e));
        if !e.ends_with(b"\n") {
            out.push('\n');
        }
    });
    (out, d.lost)
}

/// The thrash warning for a core, if it thrashed: names the regions.
pub fn thrash_warning(cpu: u32, t: &ThrashStats) -> Option<String> {
    if !t.is_thrashing() {
        return None;
    }
    let regions: Vec<String> = t.regions().map(|(r, n)| std::format!("0x{r:x} ({n})")).collect();
    Some(std::format!(
        "warning: core {cpu} thrashes the 3 dynamic translation windows: {} misses re-installed a region evicted shortly before; \
         the working set has more than 3 distinct 16 MiB regions. Regions (SoC base, re-misses): {}. \
         Stage through TCM (tcm_accessor / neuron_memcpy) or touch at most 3 regions at a time.",
        t.remisses,
        regions.join(", ")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Puts `N` bytes on the stack and writes them all.
    #[inline(never)]
    fn use_stack<const N: usize>() {
        let a = core::hint::black_box([1u8; N]);
        core::hint::black_box(&a);
    }

    #[test]
    fn a_use_within_the_paint_is_measured_and_one_past_it_is_a_lower_bound() {
        let p = paint_stack();
        use_stack::<{ 16 << 10 }>();
        let (bytes, beyond) = p.high_water();
        assert!(!beyond && (16 << 10..64 << 10).contains(&bytes), "{bytes} {beyond}");
        let p = paint_stack();
        use_stack::<{ 256 << 10 }>();
        assert_eq!(p.high_water(), ((STACK_PAINT_BYTES + PAINT_GAP) as u64, true), "deeper than the paint: its whole depth, marked");
    }
}
