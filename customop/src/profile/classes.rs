//! What the plugin needs to know of an image: the memory class of each
//! data address range (from the QEMU platform table and the image's
//! stack symbols), the code it must not count (the software DMA
//! engine, hardware on the Q7) or must read as DMA (the engine's copy),
//! and the kernel's own code (DMA bytes go to its last line that ran).

use customop_symbols::{Lines, Origin};
use neuron_hal::platform::{qemu, CORE_COUNT, DATARAM_SIZE, DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE, QEMU};
use neuron_image::elf::Elf;

/// The prefix of the software DMA engine's symbols.
pub const ENGINE: &str = "neuron_hal::xtensa::emulated::";
/// The emulated board's runner (boot, copying the invocation in, printing
/// the output): not part of the op, not counted.
pub const RUNNER: &[&str] = &["cpp_qemu::runner", "q7_board_main", "q7_board_rust_start", "q7_qemu_board::"];
/// The engine's copy loop: its stores are the DMA's bytes.
pub const ENGINE_COPY: &str = "neuron_hal::xtensa::emulated::engine_copy";

/// The plugin's `classes=` file for `elf`: lines `CLASS lo hi` (hex),
/// first match wins. Classes: `k` stack, `t` data RAM (TCM), `r` the
/// register block, `h` HBM (hbm_scratch and the dynamic windows), `s`
/// SBUF, `i` the rest of the image; `x` skipped code, `c` the engine's
/// copy, `e` its first instruction; `K` the op's own functions (the
/// kernel's and its generated wrappers) and `L` the library's (its
/// headers, the runtime), told apart by the frames of each function's
/// first instruction (as the profile's lines).
pub fn file(elf: &Elf, lines: &Lines) -> String {
    let mut s = String::new();
    let mut line = |k: char, lo: u64, hi: u64| s.push_str(&format!("{k} {lo:x} {hi:x}\n"));
    let sym = |n: &str| elf.table.iter().find(|t| t.name == n).map(|t| (t.addr as u64, t.size as u64));
    if let (Some((lo, _)), Some((exc, _))) = (sym("q7_board_stacks"), sym("q7_board_exc_stacks")) {
        // The exception stacks follow the core stacks (board start code).
        line('k', lo, exc + (u64::from(CORE_COUNT) << 12));
    }
    for cpu in 0..CORE_COUNT {
        let base = u64::from(qemu::private_base(cpu));
        line('t', base, base + u64::from(DATARAM_SIZE));
        line('r', base + u64::from(DATARAM_SIZE), base + u64::from(qemu::PRIVATE_SIZE));
    }
    let scratch = u64::from(QEMU.scratch_window_nx);
    line('h', scratch, scratch + PINNED_WINDOW_SIZE);
    for w in QEMU.dynamic_windows {
        line('h', u64::from(w.nx_base), u64::from(w.nx_base) + DYNAMIC_WINDOW_SIZE);
    }
    line('s', u64::from(QEMU.sbuf_window_nx), u64::from(QEMU.sbuf_window_nx) + QEMU.sbuf_size);
    line('i', u64::from(qemu::RAM_NX), u64::from(qemu::RAM_NX + qemu::IMAGE_SIZE));
    for t in elf.table.iter().filter(|t| (t.name.starts_with(ENGINE) || RUNNER.iter().any(|r| t.name.starts_with(r))) && t.size > 0) {
        line('x', t.addr as u64, (t.addr + t.size) as u64);
    }
    if let Some((lo, size)) = sym(ENGINE_COPY) {
        line('c', lo, lo + size);
        line('e', lo, lo + 1);
    }
    for (lo, hi) in functions(elf) {
        let own = lines.frames(lo).iter().any(|f| f.origin() != Origin::Library);
        line(if own { 'K' } else { 'L' }, lo, hi);
    }
    s
}

/// The sized symbols in code sections, disjoint (an alias or a symbol
/// inside another's range is left out), sorted.
fn functions(elf: &Elf) -> Vec<(u64, u64)> {
    let code: Vec<(u64, u64)> =
        elf.sections.iter().filter(|s| s.name.starts_with(".text") || s.name == ".vectors").map(|s| (s.addr as u64, (s.addr + s.size) as u64)).collect();
    let mut v: Vec<(u64, u64)> = elf
        .table
        .iter()
        .filter(|t| t.size > 0 && !t.name.starts_with(ENGINE) && !RUNNER.iter().any(|r| t.name.starts_with(r)))
        .map(|t| (t.addr as u64, (t.addr + t.size) as u64))
        .filter(|(lo, _)| code.iter().any(|c| c.0 <= *lo && *lo < c.1))
        .collect();
    v.sort();
    let mut out: Vec<(u64, u64)> = Vec::new();
    for r in v {
        if out.last().is_none_or(|l| r.0 >= l.1) {
            out.push(r);
        }
    }
    out
}
