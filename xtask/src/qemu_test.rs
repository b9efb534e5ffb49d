//! `cargo xtask qemu-test`: the board's self-test, the fault tests and the
//! FLL layouts on the emulated cores.

use crate::*;

struct Check {
    name: String,
    ok: bool,
    why: String,
}

pub(crate) fn qemu_test() -> Result {
    build_xtensa(&[])?;
    let lib = artifact_dir(true).join(SELFTEST_LIB);
    let images = xtensa_dir().join("images");
    let mut checks = Vec::new();
    let mut check = |name: &str, ok: bool, why: String| {
        eprintln!("xtask: [{}] {name}{}", if ok { "PASS" } else { "FAIL" }, if ok { String::new() } else { format!(": {why}") });
        checks.push(Check { name: name.into(), ok, why });
    };

    // --- the QEMU image
    let elf = images.join("selftest-qemu.elf");
    let img = link("qemu", &elf, None, &[], std::slice::from_ref(&lib))?;
    let sym = |n: &str| img.symbols.get(n).copied();
    check(
        "qemu image: reset stub at 0x5000_0000, VECBASE 0x6000_0000",
        sym("_ResetVector") == Some(layout::QEMU_ROM) && sym("_vector_table") == Some(layout::QEMU_RAM),
        format!("_ResetVector {:x?}, _vector_table {:x?}", sym("_ResetVector"), sym("_vector_table")),
    );
    let slots_ok = [
        ("_WindowOverflow4", 0x0),
        ("_WindowUnderflow12", 0x140),
        ("_KernelExceptionVector", 0x300),
        ("_UserExceptionVector", 0x340),
        ("_DoubleExceptionVector", 0x3c0),
    ]
    .iter()
    .all(|(n, off)| sym(n) == Some(layout::QEMU_RAM + off));
    check("qemu image: vectors at their VECBASE offsets", slots_ok, "see the .map file".into());
    match windowed_code_check(&elf) {
        Ok(()) => check("qemu image: ELF32 Xtensa, windowed code (entry/callx8/retw)", true, String::new()),
        Err(e) => check("qemu image: ELF32 Xtensa, windowed code (entry/callx8/retw)", false, e),
    }

    // --- positive runs
    let t = Duration::from_secs(20);
    for (machine, smp) in [("sim", 1u32), ("sim", 4), ("virt", 8)] {
        let name = format!("{machine} -smp {smp}: every core prints PRID, deep recursion ok, exit 0");
        let o = qemu_run(&elf, machine, smp, t, &[])?;
        let mut why = Vec::new();
        if o.status != Some(0) {
            why.push(format!("exit status {:?}{}", o.status, if o.timed_out { " (timeout)" } else { "" }));
        }
        for c in 0..smp {
            if !o.stdout.contains(&format!("selftest: cpu {c} PRID={c} of {smp}\n")) {
                why.push(format!("no PRID line for cpu {c}"));
            }
            if !o.stdout.contains(&format!("selftest: cpu {c} ok fib(20)=6765")) {
                why.push(format!("no ok line for cpu {c}"));
            }
        }
        if !o.stdout.contains(&format!("q7-qemu-board: {smp} core(s) done, 0 failed, exit 0")) {
            why.push("no summary line".into());
        }
        check(&name, why.is_empty(), why.join("; "));
    }

    // --- negative runs: (machine, smp, args, expected status, expected stderr text)
    type Negative<'a> = (&'a str, u32, &'a [&'a str], Option<i32>, &'a str);
    let neg: &[Negative] = &[
        ("sim", 1, &["fault=load"], Some(102), "user exception on cpu 0: EXCCAUSE="),
        ("sim", 1, &["fault=ill"], Some(102), "EXCCAUSE=0 (IllegalInstruction)"),
        ("virt", 8, &["fault=ill", "fault_cpu=5"], Some(102), "exception on cpu 5: EXCCAUSE=0 (IllegalInstruction) EPC1=0x6"),
        ("virt", 8, &["fault=load", "fault_cpu=7"], Some(102), "exception on cpu 7: EXCCAUSE="),
        ("sim", 1, &["fault=stack"], Some(102), "double exception on cpu 0: EXCCAUSE=15 (LoadStorePIFAddrError) DEPC=0x6000"),
        ("sim", 1, &["fault=panic"], Some(101), "panic on cpu 0: "),
        ("sim", 1, &["fault=abort"], Some(103), "abort() on cpu 0"),
        ("virt", 8, &["fault=fail", "fault_cpu=3"], Some(1), "cpu 3 returned 1"),
        ("sim", 1, &["fault=hang"], None, ""),
    ];
    for (machine, smp, args, want, text) in neg {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let name = format!("{machine} -smp {smp} {}: expect {}", args.join(" "), want.map_or("timeout".to_string(), |s| format!("exit {s}")));
        let timeout = if want.is_none() { Duration::from_secs(3) } else { t };
        let o = qemu_run(&elf, machine, *smp, timeout, &args)?;
        let ok_status = match want {
            Some(s) => o.status == Some(*s),
            None => o.timed_out,
        };
        let ok_text = o.stdout.contains(text) || o.stderr.contains(text);
        check(&name, ok_status && ok_text, format!("status {:?}, timed out {}, output has {text:?}: {ok_text}", o.status, o.timed_out));
    }

    // --- Q7 FLL layouts: link and inspect only (they cannot run on QEMU).
    for (lname, lo, hi) in [
        ("fll-cpu0", 0x8400_0000u32, 0x8420_0000u32),
        ("fll-cpu3", 0x8460_0000, 0x8480_0000),
        ("fll-cpu7", 0x84e0_0000, 0x8500_0000),
        ("fll-single", 0x8400_0000, 0x8600_0000),
    ] {
        let out = images.join(format!("selftest-{lname}.elf"));
        let name = format!("{lname}: code/data in [0x{lo:08x}, 0x{hi:08x}), vectors at 0");
        match link(lname, &out, Some("q7_board_main"), &[], std::slice::from_ref(&lib)) {
            Ok(img) => {
                let mut why = Vec::new();
                for s in img.sections.iter().filter(|s| s.alloc && s.size > 0) {
                    let inside =
                        if s.name == ".vectors" { s.addr == 0 && s.size <= 0x1000 } else { s.addr >= lo && (s.addr as u64 + s.size as u64) <= hi as u64 };
                    if !inside {
                        why.push(format!("{} at 0x{:08x}+0x{:x}", s.name, s.addr, s.size));
                    }
                }
                if img.section(".text").is_none_or(|s| s.addr != lo) {
                    why.push(".text does not start the code window".into());
                }
                check(&name, why.is_empty(), why.join("; "));
            }
            Err(e) => check(&name, false, e),
        }
    }

    let failed: Vec<&Check> = checks.iter().filter(|c| !c.ok).collect();
    eprintln!("\nxtask: qemu-test summary: {} checks, {} failed", checks.len(), failed.len());
    for c in &failed {
        eprintln!("  FAIL {}: {}", c.name, c.why);
    }
    if failed.is_empty() {
        Ok(())
    } else {
        Err(format!("{} qemu-test check(s) failed", failed.len()))
    }
}

/// Disassemble with the nightly's llvm-objdump and look for the windowed
/// ABI's `entry`, `callx8`/`call8` and `retw`. Its text is read by hand:
/// no maintained crate disassembles Xtensa.
pub(crate) fn windowed_code_check(elf: &Path) -> Result {
    let objdump = llvm_bin("llvm-objdump")?;
    let out = Command::new(&objdump).args(["--mattr=+windowed,+density", "-d"]).arg(elf).output().map_err(|e| format!("{}: {e}", objdump.display()))?;
    if !out.status.success() {
        return Err(format!("llvm-objdump failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let text = String::from_utf8_lossy(&out.stdout);
    if !text.contains("file format elf32-xtensa") {
        return Err("llvm-objdump does not report elf32-xtensa".into());
    }
    let has = |ms: &[&str]| text.lines().any(|l| l.split_whitespace().any(|w| ms.contains(&w)));
    for ms in [&["entry"][..], &["retw", "retw.n"], &["call8", "callx8"]] {
        if !has(ms) {
            return Err(format!("no {} instruction in the image", ms.join("/")));
        }
    }
    Ok(())
}
