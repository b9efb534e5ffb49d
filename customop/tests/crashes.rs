//! Every way a kernel or a shape function can die ends in a crash report
//! naming the core, the op and the signal, and a documented exit status
//! (12); a run that does not end is stopped by `--timeout` (13); a
//! simulator that cannot reserve its address space says so (10). The
//! kernels are `tests/kernels/crashes` (vendor-style C++, a
//! `NEURON_LIBRARY` shape file); `copy_through` is their correct twin.

mod common;
use common::*;
use std::process::Command;
use std::time::{Duration, Instant};

/// Runs `op` of the crash kernels on zeros with `extra` options; the exit
/// status and the text.
fn run(op: &str, build_extra: &[&str], extra: &[&str]) -> (i32, String) {
    run_of("crashes", op, build_extra, extra)
}

/// [`run`] of `op` of the test kernel set `kernels`.
fn run_of(kernels: &str, op: &str, build_extra: &[&str], extra: &[&str]) -> (i32, String) {
    let dir = built(kernels, build_extra).display().to_string();
    // One input file per run: the tests run in parallel.
    let tag = format!("{op}-{}-{}", build_extra.join(""), extra.join("")).replace(['-', ' ', '.'], "_");
    let x = npy_file(&format!("zeros-{tag}.npy"), &f32s(&[4], &[0.0; 4])).display().to_string();
    let out = scratch("out").join(format!("{tag}.npy")).display().to_string();
    let mut args = vec!["run", dir.as_str(), op, x.as_str(), "-o", out.as_str()];
    args.extend_from_slice(extra);
    let o = customop(&args);
    (o.status.code().unwrap_or(-1), text(&o))
}

#[test]
fn each_way_a_kernel_dies_is_reported_with_its_core_op_and_signal() {
    let cases = [
        ("recurse_forever", "SIGSEGV", "stack overflow (SIGSEGV at address"),
        ("call_abort", "SIGABRT", "SIGABRT (abort() was called"),
        ("divide_by_zero", "SIGFPE", "SIGFPE (an integer division by zero or overflow) at address 0x"),
        ("store_through_null", "SIGSEGV", "SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer) at address 0x0"),
        ("illegal_instruction", "SIGILL", "SIGILL (an illegal instruction) at address 0x"),
    ];
    for (op, sig, says) in cases {
        let (rc, t) = run(op, &[], &[]);
        assert_eq!(rc, 12, "{op}: {t}");
        assert!(t.contains(&format!("customop: op `{op}`: the kernel on 1 core(s) crashed ({sig}):")), "{op}: {t}");
        assert!(t.contains(&format!("neuroncustomop: abort on core 0: the kernel crashed in op {op}: {says}")), "{op}: {t}");
    }
    // The faulting instruction's function and line, from the kernel's
    // debug information.
    let src = std::fs::read_to_string(kernels().join("crashes/crashes.cpp")).unwrap();
    let from = src.find("torch::Tensor store_through_null").unwrap();
    let n = 1 + src[..from].lines().count() + src[from..].lines().position(|l| l.contains("*p = ")).unwrap();
    let (_, t) = run("store_through_null", &[], &[]);
    let want = format!("neuroncustomop: the crash is in store_through_null(at::Tensor const&) at {}:{n}", kernels().join("crashes/crashes.cpp").display());
    assert!(t.contains(&want), "no {want:?} in:\n{t}");
    let (_, t) = run("recurse_forever", &[], &[]);
    let hw: u64 = t.split("the op's stack high water is ").nth(1).and_then(|r| r.split(' ').next()).and_then(|n| n.parse().ok()).expect(&t);
    assert!(hw > 1 << 20, "the recursion used the thread's stack: {t}");
    let (rc, t) = run("copy_through", &[], &[]);
    assert_eq!(rc, 0, "the correct twin passes: {t}");
}

#[test]
fn a_kernel_that_floods_stderr_keeps_its_start_and_its_crash_report() {
    let (rc, t) = run_of("chatter", "chatter_then_crash", &[], &[]);
    assert_eq!(rc, 12, "{}", &t[t.len().saturating_sub(2000)..]);
    assert!(t.contains("progress 000000: "), "the start is kept");
    assert!(t.contains("bytes of the run's stderr left out here"), "the middle is left out, and said so");
    assert!(t.contains("progress 099999: "), "the end is kept");
    assert!(t.contains("neuroncustomop: abort on core 0: the kernel crashed in op chatter_then_crash: SIGSEGV"), "{}", &t[t.len().saturating_sub(2000)..]);
    assert!(t.len() < 3 << 20, "the report is bounded: {} bytes", t.len());
    assert_eq!(run_of("chatter", "quiet_copy", &[], &[]).0, 0);
}

#[test]
fn a_crash_on_any_of_eight_cores_names_that_core() {
    for (op, says) in [("store_through_null", "a null or wild pointer"), ("recurse_forever", "stack overflow")] {
        let (rc, t) = run(op, &["--multicore"], &[]);
        assert_eq!(rc, 12, "{op}: {t}");
        assert!(t.contains("the kernel on 8 core(s) crashed"), "{op}: {t}");
        let line = t.lines().find(|l| l.starts_with("neuroncustomop: abort on core ")).expect(&t);
        let core: u32 = line["neuroncustomop: abort on core ".len()..].split(':').next().unwrap().parse().unwrap();
        assert!(core < 8 && line.contains(&format!("in op {op}: ")) && line.contains(says), "{line}");
    }
    let (rc, t) = run("copy_through", &["--multicore"], &["--cores", "1"]);
    assert_eq!(rc, 0, "{t}");
}

#[test]
fn a_shape_function_that_crashes_is_reported() {
    let (rc, t) = run("shape_null_store", &[], &[]);
    assert_eq!(rc, 12, "{t}");
    assert!(t.contains("customop: op `shape_null_store`: the shape function `null_store_shape` crashed (SIGSEGV):"), "{t}");
    assert!(t.contains("abort on core 0: the shape function crashed (neuron_sim_call): SIGSEGV (a load or store at an address nothing is mapped at: a null or wild pointer) at address 0x0"), "{t}");
    let (rc, t) = run("shape_recurses", &[], &[]);
    assert_eq!(rc, 12, "{t}");
    assert!(t.contains("customop: op `shape_recurses`: the shape function `recurse_shape` crashed (SIG"), "{t}");
    assert!(t.contains("abort on core 0: the shape function crashed (neuron_sim_call): stack overflow (SIGSEGV at address"), "{t}");
}

#[test]
fn a_timeout_stops_a_kernel_or_a_shape_function_that_never_ends() {
    for (op, what, secs) in [("spin_forever", "the kernel on 1 core(s)", "1"), ("shape_spins", "the shape function `spin_shape`", "0.5")] {
        let t0 = Instant::now();
        let (rc, t) = run(op, &[], &["--timeout", secs]);
        assert_eq!(rc, 13, "{op}: {t}");
        assert!(t.contains(&format!("customop: op `{op}`: {what} did not finish within {secs} s (--timeout); the run was stopped")), "{t}");
        assert!(t0.elapsed() < Duration::from_secs(20), "{op} was stopped late: {:?}", t0.elapsed());
    }
    let (rc, t) = run("copy_through", &[], &["--timeout", "60"]);
    assert_eq!(rc, 0, "{t}");
    let (rc, t) = run("copy_through", &[], &["--timeout", "0"]);
    assert_eq!(rc, 2, "{t}");
    assert!(t.contains("--timeout 0: give a number of seconds above 0"), "{t}");
}

/// Runs `op` under `ulimit -v kib` with `env`.
fn under_ulimit(kib: u64, env: &[(&str, &str)]) -> (i32, String) {
    let dir = built("crashes", &[]).display().to_string();
    let tag = format!("ulimit-{kib}-{}", env.len());
    let x = npy_file(&format!("{tag}.npy"), &f32s(&[4], &[0.0; 4])).display().to_string();
    let out = scratch("out").join(format!("{tag}-out.npy")).display().to_string();
    let script = format!("ulimit -v {kib} && exec \"$0\" run \"$1\" copy_through \"$2\" -o \"$3\"");
    let o = Command::new("bash").args(["-c", &script, env!("CARGO_BIN_EXE_customop"), &dir, &x, &out]).envs(env.iter().copied()).output().unwrap();
    (o.status.code().unwrap_or(-1), text(&o))
}

#[test]
fn an_address_space_limit_names_the_hbm_it_refuses_and_how_to_ask_for_less() {
    // 20 GiB: less than the 64 GiB of simulated HBM.
    let (rc, t) = under_ulimit(20 << 20, &[]);
    assert_eq!(rc, 10, "{t}");
    assert!(t.contains("cannot reserve 64 GiB of address space for the simulated HBM"), "{t}");
    assert!(t.contains("set NEURON_SIM_HBM_GIB to fewer GiB"), "{t}");
    // 56 GiB holds 2 GiB of HBM and the cores' 32 GiB of NX space.
    let (rc, t) = under_ulimit(56 << 20, &[("NEURON_SIM_HBM_GIB", "2")]);
    assert_eq!(rc, 0, "{t}");
    let (rc, t) = under_ulimit(56 << 20, &[]);
    assert_eq!(rc, 10, "{t}");
    let (rc, t) = under_ulimit(56 << 20, &[("NEURON_SIM_HBM_GIB", "1")]);
    assert_eq!(rc, 10, "{t}");
    assert!(t.contains("NEURON_SIM_HBM_GIB=1: give a whole number of GiB from 2 to 64"), "{t}");
}
