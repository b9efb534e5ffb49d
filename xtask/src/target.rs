//! The device side of `cargo xtask`: the shipped staticlib (`build-lib`),
//! the per-core FLL images and their check, the QEMU image with the
//! example op and the on-target suite (`run-example`), and the one test
//! command (`test`).

use crate::{artifact_dir, build_xtensa, elf, fll_check, layout, link, qemu_run, root, windowed_code_check, xtensa_dir, Result};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const KERNELS_MANIFEST: &str = "kernels/Cargo.toml";
const LIB: &str = "libneuroncustomop.a";
const QEMU_IMAGE_LIB: &str = "libqemu_image.a";
const FLL_IMAGE_LIB: &str = "libfll_image.a";
/// The entry of an FLL image: the loader calls it first, and through the
/// op table it reaches every launcher, wrapper and library function the
/// op needs (`--gc-sections` drops the rest).
const FLL_ENTRY: &str = "register_funcs";

/// C symbols of SPEC that the shipped archive must define.
pub const SPEC_SYMBOLS: &[&str] = &[
    "neuron_translate",
    "neuron_hbm_allocate",
    "neuron_dataram_allocate",
    "tcm_malloc",
    "tcm_free",
    "register_funcs",
    "switch_stack_or_call_wrapper",
    "switchBack",
    "get_cpu_id",
    "get_cpu_count",
    "customop_setup",
    "customop_next_tensor",
    "customop_return_tensor",
    "customop_cleanup",
    "malloc",
    "free",
];

/// `cargo xtask build-lib`: builds and checks `libneuroncustomop.a`.
pub fn build_lib() -> Result<PathBuf> {
    build_xtensa(&["--release".into(), "-p".into(), "neuroncustomop".into()])?;
    let lib = artifact_dir(true).join(LIB);
    check_lib(&lib)?;
    Ok(lib)
}

/// The archive holds ELF32 Xtensa objects with windowed code and defines
/// every C symbol of SPEC.
pub fn check_lib(lib: &Path) -> Result {
    let bytes = std::fs::read(lib).map_err(|e| format!("{}: {e}", lib.display()))?;
    let members = elf::Elf::parse_archive(&bytes).map_err(|e| format!("{}: {e}", lib.display()))?;
    let objects = members.len();
    let xt = members.iter().filter(|(_, o)| o.machine == elf::EM_XTENSA).count();
    if objects == 0 || xt != objects {
        return Err(format!("{}: {objects} ELF32 objects, {xt} Xtensa", lib.display()));
    }
    windowed_code_check(lib)?;
    let defined: std::collections::HashSet<&str> =
        members.iter().flat_map(|(_, o)| o.table.iter().filter(|s| s.global_text).map(|s| s.name.as_str())).collect();
    let missing: Vec<&&str> = SPEC_SYMBOLS.iter().filter(|s| !defined.contains(**s)).collect();
    if !missing.is_empty() {
        return Err(format!("{}: missing C symbols {missing:?}", lib.display()));
    }
    // The C math library is neuron-libm's, the code the simulator binds a
    // kernel's calls to (compiler_builtins' weak copies of some names give way).
    let math: std::collections::HashSet<&str> = members
        .iter()
        .filter(|(name, _)| name.starts_with("neuron_libm-"))
        .flat_map(|(_, o)| o.table.iter().filter(|s| s.global_text).map(|s| s.name.as_str()))
        .collect();
    let missing: Vec<&str> = neuron_libm::device_names().filter(|n| !math.contains(n)).collect();
    if !missing.is_empty() {
        return Err(format!(
            "{}: {} C math functions are not neuron-libm's (the first: {:?}): is the crate still linked by neuroncustomop (src/lib.rs)?",
            lib.display(),
            missing.len(),
            &missing[..missing.len().min(8)]
        ));
    }
    println!(
        "xtask: {}: {objects} ELF32 Xtensa objects, windowed code, {} SPEC symbols and {} C math functions (neuron-libm) defined",
        lib.display(),
        SPEC_SYMBOLS.len(),
        neuron_libm::device_names().count()
    );
    Ok(())
}

/// Builds the two kernel images' staticlibs (separately: the QEMU one
/// turns on the library's `qemu` feature, the FLL one must not).
pub fn build_images() -> Result {
    let manifest = root().join(KERNELS_MANIFEST).display().to_string();
    for p in ["qemu-image", "fll-image"] {
        build_xtensa(&["--release".into(), "--manifest-path".into(), manifest.clone(), "-p".into(), p.into()])?;
    }
    Ok(())
}

fn images_dir() -> PathBuf {
    xtensa_dir().join("images")
}

/// Links the example op into the nine FLL images (`fll-cpu0..7`,
/// `fll-single`) and checks them: every section inside its window, no
/// overlap between the cores' images, the vector pages byte-identical.
/// Returns one line per finding; empty means all good.
pub fn fll_images() -> Result<Vec<String>> {
    let lib = artifact_dir(true).join(FLL_IMAGE_LIB);
    let mut names: Vec<String> = (0..layout::Q7_CPUS).map(|c| format!("fll-cpu{c}")).collect();
    names.push("fll-single".into());
    let mut linked = Vec::new();
    for name in &names {
        let l = layout::layout(name).ok_or("layout")?;
        let out = images_dir().join(format!("axpy-{name}.elf"));
        let img = link(name, &out, Some(FLL_ENTRY), &["axpy_stack_switch".into(), "axpy_single_stack_switch".into()], std::slice::from_ref(&lib))?;
        let bytes = std::fs::read(&out).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("xtask: {name}: {} (code window 0x{:08x}..0x{:08x})", out.display(), l.sram.origin, l.sram.origin as u64 + l.sram.length as u64);
        linked.push((l, img, bytes));
    }
    let images: Vec<fll_check::Image> = linked.iter().map(|(layout, elf, bytes)| fll_check::Image { layout, elf, bytes }).collect();
    Ok(fll_check::check(&images, &["axpy_stack_switch", "customop_setup", "switch_stack_or_call_wrapper", "neuron_stack_switch_call"]))
}

/// Links the QEMU image (all cores run it; one runtime state per PRID).
pub fn qemu_image() -> Result<PathBuf> {
    let out = images_dir().join("qemu-image.elf");
    link("qemu", &out, None, &[], &[artifact_dir(true).join(QEMU_IMAGE_LIB)])?;
    Ok(out)
}

/// `cargo xtask run-example`.
pub fn run_example() -> Result<u8> {
    crate::preflight::check(crate::preflight::For::MainJob)?;
    let lib = build_lib()?;
    println!("xtask: shipped library: {}", lib.display());
    build_images()?;
    let problems = fll_images()?;
    for p in &problems {
        println!("xtask: FLL check: {p}");
    }
    if !problems.is_empty() {
        return Err(format!("{} FLL image problem(s)", problems.len()));
    }
    println!("xtask: FLL images: 9 linked, every section in its window, no overlap, vector pages identical");
    let elf = qemu_image()?;
    println!("xtask: running the example op on the emulated 8-core cluster (qemu-system-xtensa -M virt -smp 8 -cpu de212)");
    let o = qemu_run(&elf, "virt", 8, Duration::from_secs(60), &["run=example".into()])?;
    let matched = o.stdout.contains("example: output matches the reference");
    match o.status {
        Some(0) if matched => {
            println!("xtask: run-example: PASS (8 cores, output matches the reference)");
            Ok(0)
        }
        s => {
            println!("xtask: run-example: FAIL (exit status {s:?}, timed out {}, match line {})", o.timed_out, matched);
            Ok(1)
        }
    }
}

struct Step {
    name: String,
    ok: bool,
    secs: f32,
    why: String,
}

/// `cargo xtask test`: everything, with a summary; Err if anything failed.
pub fn test() -> Result {
    crate::preflight::ensure(crate::preflight::For::Tests)?;
    let t0 = Instant::now();
    let mut steps: Vec<Step> = Vec::new();
    let mut step = |name: &str, f: &mut dyn FnMut() -> Result| {
        eprintln!("\nxtask: ==== {name}");
        let t = Instant::now();
        let r = f();
        let secs = t.elapsed().as_secs_f32();
        eprintln!("xtask: ==== {name}: {} ({secs:.1} s)", if r.is_ok() { "PASS" } else { "FAIL" });
        steps.push(Step { name: name.into(), ok: r.is_ok(), secs, why: r.err().unwrap_or_default() });
    };

    step("rustfmt: cargo fmt --all --check (workspace, kernels, fuzz, python)", &mut crate::lints::fmt);
    step("clippy, host: --workspace --all-targets, and python/ -D warnings", &mut crate::lints::clippy_host);
    step("clippy, xtensa: neuron-hal, neuron-runtime, neuron-capi, neuron-libm, neuroncustomop -D warnings", &mut crate::lints::clippy_xtensa);
    step("host: cargo test --workspace", &mut || {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
        crate::step_log::run_logged(
            Command::new(cargo).current_dir(root()).args(["test", "--workspace"]),
            &crate::xtask_target_base().join("logs/host-tests.log"),
        )
    });
    step("qemu 10.0: the emulated check, profile and confinement tests on bookworm-backports' QEMU", &mut crate::second_qemu::test);
    step("python: the neuroncustomop package in a fresh virtualenv, pytest (bash python/ci.sh)", &mut || {
        crate::step_log::run_logged(Command::new("bash").current_dir(root()).arg("python/ci.sh"), &crate::xtask_target_base().join("logs/python-tests.log"))
    });
    step("miri: the runtime's pure-logic tests (cargo xtask miri)", &mut crate::reliability::miri);
    step("fuzz: each target for 10 s on the committed corpus (cargo xtask fuzz-smoke)", &mut crate::reliability::fuzz_smoke);
    step("xtensa: build neuron-hal, neuron-runtime, neuroncustomop", &mut || {
        build_xtensa(&["--release".into(), "-p".into(), "neuron-hal".into(), "-p".into(), "neuron-runtime".into(), "-p".into(), "neuroncustomop".into()])
    });
    step("xtensa: libneuroncustomop.a is ELF32 Xtensa, windowed, has the SPEC symbols", &mut || build_lib().map(|_| ()));
    step("qemu-test: board self-test, fault tests, FLL layouts", &mut || crate::qemu_test());
    step("xtensa: build the kernel images (qemu-image, fll-image)", &mut build_images);
    step("FLL: example op linked 8x + 1x; windows, no overlap, identical vector pages", &mut || {
        let p = fll_images()?;
        if p.is_empty() {
            Ok(())
        } else {
            Err(p.join("; "))
        }
    });
    let elf = qemu_image();
    type Run<'a> = (&'a str, &'a str, u32, &'a [&'a str], &'a [&'a str]);
    let runs: &[Run] = &[
        ("on-target suite, sim, 1 core", "sim", 1, &["run=suite"], &["suite: core 0: 0 failed"]),
        ("on-target suite, virt, 8 cores (each core runs it)", "virt", 8, &["run=suite"], &["suite: core 7: 0 failed", "suite: core 0: 0 failed"]),
        ("custom-op flow, 1 core (axpy_single)", "sim", 1, &["run=example", "n=1001"], &["example: output matches the reference: 1001 elements"]),
        (
            "custom-op flow, 8 cores (axpy, slice by PRID)",
            "virt",
            8,
            &["run=example"],
            &["example: output matches the reference: 4099 elements of a*2.5+b on 8 core(s)"],
        ),
    ];
    for (name, machine, smp, args, want) in runs {
        step(name, &mut || {
            let elf = elf.as_ref().map_err(|e| e.clone())?;
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            let o = qemu_run(elf, machine, *smp, Duration::from_secs(60), &args)?;
            let mut why = Vec::new();
            if o.status != Some(0) {
                why.push(format!("exit status {:?}{}", o.status, if o.timed_out { " (timeout)" } else { "" }));
            }
            for w in *want {
                if !o.stdout.contains(w) {
                    why.push(format!("no {w:?} in the output"));
                }
            }
            if o.stdout.contains("FAIL") {
                why.push("a test reported FAIL".into());
            }
            if why.is_empty() {
                Ok(())
            } else {
                Err(why.join("; "))
            }
        });
    }
    step(
        "main job: vendor-style C++ relu on 8 emulated cores vs the host simulator (cargo xtask run-example)",
        &mut || match crate::main_job::run_example()? {
            0 => Ok(()),
            c => Err(format!("run-example exit {c}")),
        },
    );
    step("perf: instruction counts, footprint, stack use vs perf/budgets.toml", &mut crate::perf::check);
    step("on-target: a failing test fails the run (exit status checked)", &mut || {
        let elf = elf.as_ref().map_err(|e| e.clone())?;
        let o = qemu_run(elf, "sim", 1, Duration::from_secs(20), &["run=no-such-test".into()])?;
        if o.status == Some(1) {
            Ok(())
        } else {
            Err(format!("exit status {:?}, want 1", o.status))
        }
    });

    let failed = steps.iter().filter(|s| !s.ok).count();
    eprintln!("\nxtask: test summary ({:.0} s total)", t0.elapsed().as_secs_f32());
    for s in &steps {
        eprintln!(
            "  [{}] {:<80} {:>6.1} s{}",
            if s.ok { "PASS" } else { "FAIL" },
            s.name,
            s.secs,
            if s.ok { String::new() } else { format!("\n         {}", s.why) }
        );
    }
    eprintln!("xtask: {} step(s), {failed} failed", steps.len());
    if failed == 0 {
        Ok(())
    } else {
        Err(format!("{failed} test step(s) failed"))
    }
}
