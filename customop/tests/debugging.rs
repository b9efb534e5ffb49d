//! Debugging a kernel: `customop run --keep-output PATH` keeps what a
//! failed run produced (never at the `-o` path), and `--no-fork` runs the
//! kernel in the tool's own process, so gdb stops at a line of it.

mod common;
use common::*;
use customop::npy;

/// The line of `kernels/error_sites/sums.cpp` marked with `marker`.
fn line_of(marker: &str) -> usize {
    let src = std::fs::read_to_string(kernels().join("error_sites/sums.cpp")).unwrap();
    1 + src.lines().position(|l| l.contains(marker)).unwrap_or_else(|| panic!("no {marker:?} in sums.cpp"))
}

fn input(name: &str) -> String {
    npy_file(name, &f32s(&[8], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])).display().to_string()
}

const PREFIX: [f32; 8] = [1.0, 3.0, 6.0, 10.0, 15.0, 21.0, 28.0, 36.0];

/// Fresh paths for a run's -o and --keep-output files.
fn outs(tag: &str) -> (String, String) {
    let d = scratch("keep");
    let (o, k) = (d.join(format!("{tag}-out.npy")), d.join(format!("{tag}-kept.npy")));
    let _ = std::fs::remove_file(&o);
    let _ = std::fs::remove_file(&k);
    (o.display().to_string(), k.display().to_string())
}

#[test]
fn a_failed_run_keeps_what_the_kernel_wrote_and_leaves_no_output() {
    let dir = built("error_sites", &[]).display().to_string();
    let x = input("keep_x.npy");
    let (o, k) = outs("failed");
    // The kernel writes every prefix sum, then reads past its input.
    let r = customop(&["run", &dir, "prefix_past", &x, "-o", &o, "--keep-output", &k]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    assert!(
        t.contains("error 83") && t.contains(&format!("the output as the kernel left it (elements it never wrote hold the simulator's fill) is in {k}")),
        "{t}"
    );
    assert_eq!(npy::read(std::path::Path::new(&k)).unwrap().to_f32(), PREFIX);
    assert!(!std::path::Path::new(&o).exists(), "a failed run wrote -o");

    // Without the flag nothing is kept.
    let (o, k) = outs("plain");
    let r = customop(&["run", &dir, "prefix_past", &x, "-o", &o]);
    assert_eq!(r.status.code(), Some(7), "{}", text(&r));
    assert!(!std::path::Path::new(&k).exists() && !std::path::Path::new(&o).exists());
}

#[test]
fn a_passing_run_keeps_its_output_too_and_the_kept_path_is_not_the_output() {
    let dir = built("error_sites", &[]).display().to_string();
    let x = input("keep_pass_x.npy");
    let (o, k) = outs("pass");
    customop_ok(&["run", &dir, "prefix", &x, "-o", &o, "--keep-output", &k]);
    assert_eq!(npy::read(std::path::Path::new(&o)).unwrap().to_f32(), PREFIX);
    assert_eq!(std::fs::read(&k).unwrap(), std::fs::read(&o).unwrap());

    let r = customop(&["run", &dir, "prefix", &x, "-o", &o, "--keep-output", &o]);
    let t = text(&r);
    assert!(!r.status.success() && t.contains("name a file other than the -o output"), "{t}");
    assert_eq!(npy::read(std::path::Path::new(&o)).unwrap().to_f32(), PREFIX, "the refused run left -o as it was");
}

#[test]
fn no_fork_runs_the_kernel_in_the_tools_process_with_the_same_verdicts() {
    let dir = built("error_sites", &[]).display().to_string();
    let x = input("nofork_x.npy");
    let (o, _) = outs("nofork");
    customop_ok(&["run", &dir, "prefix", &x, "-o", &o, "--no-fork"]);
    assert_eq!(npy::read(std::path::Path::new(&o)).unwrap().to_f32(), PREFIX);
    let r = customop(&["run", &dir, "prefix_past", &x, "-o", &o, "--no-fork"]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    assert!(t.contains(&format!("sums.cpp:{}", line_of("// PAST:"))), "{t}");
    let r = customop(&["run", &dir, "prefix", &x, "-o", &o, "--no-fork", "--timeout", "5"]);
    assert!(!r.status.success() && text(&r).contains("drop --timeout"), "{}", text(&r));
}

#[test]
fn gdb_stops_at_a_kernel_line_under_no_fork() {
    // Unoptimised, as docs/debugging.md says to build for a debugger.
    let dir = built("error_sites", &["--cflags", "-O0"]).display().to_string();
    let x = input("gdb_x.npy");
    let (o, _) = outs("gdb");
    let n = line_of("// BREAK");
    let bp = format!("break sums.cpp:{n}");
    let r = std::process::Command::new("gdb")
        .args(["-nx", "-batch", "-ex", "set breakpoint pending on", "-ex", &bp, "-ex", "run", "-ex", "bt", "--args", env!("CARGO_BIN_EXE_customop")])
        .args(["run", &dir, "prefix", &x, "-o", &o, "--no-fork"])
        .output()
        .expect("gdb (apt-get install gdb; cargo xtask setup installs it)");
    let t = text(&r);
    assert!(t.contains("hit Breakpoint 1, prefix (") && t.contains(&format!("sums.cpp:{n}")), "{t}");
    // The backtrace's first frame is the kernel's line.
    let top = t.lines().find(|l| l.starts_with("#0 ")).unwrap_or_else(|| panic!("no backtrace in:\n{t}"));
    assert!(top.contains("prefix (") && top.ends_with(&format!("sums.cpp:{n}")), "{top}");
}

#[test]
fn gdb_names_the_line_of_a_null_store_under_no_fork() {
    // The default build (-O2 -g): the crash's line is still known.
    let dir = built("crashes", &[]).display().to_string();
    let x = input("null_x.npy");
    let (o, _) = outs("null");
    let src = std::fs::read_to_string(kernels().join("crashes/crashes.cpp")).unwrap();
    let from = src.find("torch::Tensor store_through_null").unwrap();
    let n = 1 + src[..from].lines().count() + src[from..].lines().position(|l| l.contains("*p = ")).unwrap();
    let r = std::process::Command::new("gdb")
        .args(["-nx", "-batch", "-ex", "run", "-ex", "bt", "--args", env!("CARGO_BIN_EXE_customop")])
        .args(["run", &dir, "store_through_null", &x, "-o", &o, "--no-fork"])
        .output()
        .expect("gdb (apt-get install gdb; cargo xtask setup installs it)");
    let t = text(&r);
    assert!(t.contains("received signal SIGSEGV"), "{t}");
    let top = t.lines().find(|l| l.starts_with("#0 ")).unwrap_or_else(|| panic!("no backtrace in:\n{t}"));
    assert!(top.contains("store_through_null (") && top.ends_with(&format!("crashes.cpp:{n}")), "line {n}: {top}");
}
