//! The one description of every memory layout an image can be linked for,
//! and the linker-script generator. Scripts are written under the target
//! directory (`target/xtensa/ld/<layout>.ld`), never into the source tree.
//!
//! Every layout has the same shape (mirroring the Q7 FLL scripts):
//! `iram0_0_seg` holds the vector table (VECBASE), `sram0_0_seg` holds code,
//! read-only data, data, bss and the no-init area; the QEMU layout adds
//! `reset_seg` for the reset stub at the emulator's reset vector.

use std::fmt::Write as _;

/// A memory region of a layout.
#[derive(Clone, Copy, Debug)]
pub struct Region {
    pub name: &'static str,
    pub origin: u32,
    pub length: u32,
}

/// A complete layout: the regions and the entry symbol (if any).
#[derive(Clone, Debug)]
pub struct Layout {
    pub name: String,
    pub what: String,
    /// Where the reset stub (`.reset.text`) goes; QEMU only.
    pub reset: Option<Region>,
    /// Vector table; its origin is VECBASE.
    pub iram: Region,
    /// Code and data.
    pub sram: Region,
    /// Default entry symbol (`None`: the caller must give `--entry`).
    pub entry: Option<&'static str>,
}

/// QEMU `sim` and `virt` (cpu de212) share this map, verified with
/// `info mtree`: sysrom 0x5000_0000 (64 MiB, RAM-backed, reset vector at
/// its start), sysram 0x6000_0000 (128 MiB = `-m` default), plus de212's
/// dataram0 0x3FFE_0000 and instram0 0x4000_0000 (128 KiB each, unused);
/// `virt` adds PCI windows at 0xF000_0000 and up.
pub const QEMU_ROM: u32 = 0x5000_0000;
pub const QEMU_RAM: u32 = 0x6000_0000;
pub const QEMU_RAM_SIZE: u32 = 128 << 20;
/// The part of RAM an image may use: the QEMU platform table
/// (`neuron_hal::platform::QEMU`) puts the cores' private slices and
/// hbm_scratch after it.
pub const QEMU_IMAGE_SIZE: u32 = neuron_hal::platform::qemu::IMAGE_SIZE;
const _: () = assert!(QEMU_RAM == neuron_hal::platform::qemu::RAM_NX && QEMU_RAM_SIZE == neuron_hal::platform::qemu::RAM_SIZE);

/// Q7 (SPEC §2): vectors in IRAM at 0 (0x1000, same on all cores); the
/// per-core code window in the hbm_scratch pinned window.
pub const Q7_IRAM: u32 = 0x0;
pub const Q7_IRAM_SIZE: u32 = 0x1000;
pub const Q7_SRAM: u32 = 0x8400_0000;
pub const Q7_SRAM_PER_CPU: u32 = 0x20_0000;
pub const Q7_SRAM_SINGLE: u32 = 32 << 20;
pub const Q7_CPUS: u32 = 8;

/// Size reserved for the vector table at the start of the QEMU RAM.
const VECTORS_SIZE: u32 = 0x1000;

/// Vector slots: (offset from VECBASE, input section). The board crate puts
/// each vector in the named section; `.vectors.tail*` (handler bodies that
/// must stay within `j` range) follows the last slot.
pub const VECTOR_SLOTS: &[(u32, &str)] = &[
    (0x000, ".vectors.window_overflow4"),
    (0x040, ".vectors.window_underflow4"),
    (0x080, ".vectors.window_overflow8"),
    (0x0C0, ".vectors.window_underflow8"),
    (0x100, ".vectors.window_overflow12"),
    (0x140, ".vectors.window_underflow12"),
    (0x300, ".vectors.kernel_exception"),
    (0x340, ".vectors.user_exception"),
    (0x3C0, ".vectors.double_exception"),
];
pub const VECTORS_END: u32 = 0x400;

/// DWARF and other non-allocated sections kept at address 0.
const DEBUG_SECTIONS: &[&str] = &[
    ".comment",
    ".xtensa.info",
    ".debug_abbrev",
    ".debug_info",
    ".debug_line",
    ".debug_line_str",
    ".debug_str",
    ".debug_str_offsets",
    ".debug_addr",
    ".debug_ranges",
    ".debug_rnglists",
    ".debug_loc",
    ".debug_loclists",
    ".debug_aranges",
    ".debug_frame",
    ".debug_pubnames",
    ".debug_pubtypes",
    ".debug_gnu_pubnames",
    ".debug_gnu_pubtypes",
];

/// All layouts, by name: `qemu`, `fll-cpu0` .. `fll-cpu7`, `fll-single`.
pub fn layouts() -> Vec<Layout> {
    let mut v = vec![Layout {
        name: "qemu".into(),
        what: "QEMU sim/virt, cpu de212: reset stub at the reset vector, everything else in sysram".into(),
        reset: Some(Region { name: "reset_seg", origin: QEMU_ROM, length: 0x1000 }),
        iram: Region { name: "iram0_0_seg", origin: QEMU_RAM, length: VECTORS_SIZE },
        sram: Region { name: "sram0_0_seg", origin: QEMU_RAM + VECTORS_SIZE, length: QEMU_IMAGE_SIZE - VECTORS_SIZE },
        entry: Some("_ResetVector"),
    }];
    for cpu in 0..Q7_CPUS {
        v.push(Layout {
            name: format!("fll-cpu{cpu}"),
            what: format!("Q7 FLL, core {cpu} of {Q7_CPUS}: 2 MiB code window (inspect only; does not run on QEMU)"),
            reset: None,
            iram: Region { name: "iram0_0_seg", origin: Q7_IRAM, length: Q7_IRAM_SIZE },
            sram: Region { name: "sram0_0_seg", origin: Q7_SRAM + cpu * Q7_SRAM_PER_CPU, length: Q7_SRAM_PER_CPU },
            entry: None,
        });
    }
    v.push(Layout {
        name: "fll-single".into(),
        what: "Q7 FLL, single-core build: the whole 32 MiB (inspect only; does not run on QEMU)".into(),
        reset: None,
        iram: Region { name: "iram0_0_seg", origin: Q7_IRAM, length: Q7_IRAM_SIZE },
        sram: Region { name: "sram0_0_seg", origin: Q7_SRAM, length: Q7_SRAM_SINGLE },
        entry: None,
    });
    v
}

/// Look a layout up by name.
pub fn layout(name: &str) -> Option<Layout> {
    layouts().into_iter().find(|l| l.name == name)
}

/// The GNU ld script for `l`.
pub fn script(l: &Layout) -> String {
    let mut s = String::new();
    let w = &mut s;
    let _ = writeln!(w, "/* Generated from image/src/layout.rs; do not edit. */");
    let _ = writeln!(w, "/* Layout `{}`: {} */", l.name, l.what);
    if let Some(e) = l.entry {
        let _ = writeln!(w, "ENTRY({e})");
    }
    let _ = writeln!(w, "\nMEMORY\n{{");
    for r in l.reset.iter().chain([&l.iram, &l.sram]) {
        let _ = writeln!(w, "  {:<12} (rwx) : ORIGIN = 0x{:08x}, LENGTH = 0x{:08x}", r.name, r.origin, r.length);
    }
    let _ = writeln!(w, "}}\n\nSECTIONS\n{{");
    if let Some(r) = &l.reset {
        let _ = writeln!(w, "  .reset : {{ KEEP(*(.reset.text)) }} > {}\n", r.name);
    }
    let _ = writeln!(w, "  .vectors : ALIGN(1024)\n  {{\n    _vector_table = ABSOLUTE(.);");
    for (off, sec) in VECTOR_SLOTS {
        let _ = writeln!(w, "    . = 0x{off:03x};\n    KEEP(*({sec}))");
    }
    // The fatal-exception tail: the reporter on QEMU; on the FLL layouts a
    // position-independent halt, so the vector page is the same bytes in
    // every core's image (the reporter's literals are per-image addresses).
    let (tail, fatal, drop_tail) = if l.reset.is_some() {
        ("KEEP(*(.vectors.tail .vectors.tail.*))", "_q7_board_fatal_report", ".vectors.fll_tail")
    } else {
        ("KEEP(*(.vectors.fll_tail))", "_q7_board_fatal_halt", ".vectors.tail .vectors.tail.*")
    };
    let _ = writeln!(w, "    . = 0x{VECTORS_END:03x};\n    {tail}\n  }} > {}\n  _q7_board_fatal = {fatal};\n", l.iram.name);
    let sram = l.sram.name;
    let _ = write!(
        w,
        r#"  .text : ALIGN(4)
  {{
    _text_start = ABSOLUTE(.);
    *(.literal .text .literal.* .text.* .stub)
    . = ALIGN(4);
    _text_end = ABSOLUTE(.);
  }} > {sram}

  .rodata : ALIGN(4)
  {{
    *(.rodata .rodata.* .srodata .srodata.*)
    . = ALIGN(4);
  }} > {sram}

  .data : ALIGN(4)
  {{
    _data_start = ABSOLUTE(.);
    *(.data .data.* .sdata .sdata.*)
    . = ALIGN(4);
    _data_end = ABSOLUTE(.);
  }} > {sram}

  .bss (NOLOAD) : ALIGN(4)
  {{
    _bss_start = ABSOLUTE(.);
    *(.bss .bss.* .sbss .sbss.* COMMON)
    . = ALIGN(4);
    _bss_end = ABSOLUTE(.);
  }} > {sram}

  .noinit (NOLOAD) : ALIGN(16)
  {{
    *(.noinit .noinit.*)
    . = ALIGN(16);
  }} > {sram}

  _end = ABSOLUTE(.);
  _heap_start = ABSOLUTE(.);
  _heap_end = ORIGIN({sram}) + LENGTH({sram});

"#
    );
    for d in DEBUG_SECTIONS {
        let _ = writeln!(w, "  {d} 0 : {{ *({d}) }}");
    }
    let _ = writeln!(w, "\n  /DISCARD/ : {{ *(.eh_frame .eh_frame_hdr .note.GNU-stack .gnu_debuglink {drop_tail}) }}\n}}");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fll_windows_follow_spec() {
        for cpu in 0..Q7_CPUS {
            let l = layout(&format!("fll-cpu{cpu}")).unwrap();
            assert_eq!(l.sram.origin, 0x8400_0000 + cpu * 0x20_0000);
            assert_eq!(l.sram.length, 2 << 20);
            assert_eq!((l.iram.origin, l.iram.length), (0, 0x1000));
        }
        let s = layout("fll-single").unwrap();
        assert_eq!((s.sram.origin, s.sram.length), (0x8400_0000, 32 << 20));
    }

    #[test]
    fn vector_slots_fit_and_increase() {
        let mut prev = None;
        for (off, _) in VECTOR_SLOTS {
            assert!(*off < VECTORS_END);
            assert!(prev.is_none_or(|p| p < *off));
            prev = Some(*off);
        }
        const { assert!(VECTORS_END <= Q7_IRAM_SIZE) };
    }

    #[test]
    fn qemu_script_has_reset_and_vecbase() {
        let s = script(&layout("qemu").unwrap());
        assert!(s.contains("ENTRY(_ResetVector)"));
        assert!(s.contains("ORIGIN = 0x50000000"));
        assert!(s.contains("iram0_0_seg  (rwx) : ORIGIN = 0x60000000"));
    }
}
