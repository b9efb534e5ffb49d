//! Device builds: the pinned nightly's cargo, with nothing of the outer
//! cargo's environment, for the Xtensa target.

use crate::*;

/// A `cargo` of the pinned nightly, with nothing of the outer (host)
/// cargo's environment (whatever the outer cargo set must not leak into a
/// nested nightly build).
pub(crate) fn nightly_cargo() -> Command {
    let mut cmd = Command::new("rustup");
    cmd.args(["run", TOOLCHAIN, "cargo"]);
    // cargo finds `cargo-miri`, `cargo-clippy` and `cargo-fmt` on PATH;
    // rustup's proxies for them are not on every machine (a hand-made or
    // minimal rustup install lacks them), the toolchain's own bin is.
    if let Some(bin) = preflight::toolchain_bin() {
        let path = std::env::var_os("PATH").unwrap_or_default();
        let joined = std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&path)));
        if let Ok(p) = joined {
            cmd.env("PATH", p);
        }
    }
    for v in [
        "RUSTC",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "RUSTDOC",
        "RUSTUP_TOOLCHAIN",
        "CARGO",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
    ] {
        cmd.env_remove(v);
    }
    cmd
}

pub(crate) fn build_xtensa(args: &[String]) -> Result {
    let root = root();
    let default = ["--release".to_string(), "--manifest-path".into(), root.join(SELFTEST_MANIFEST).display().to_string()];
    let mut args: Vec<String> = if args.is_empty() { default.to_vec() } else { args.to_vec() };
    // At opt-level 0 this LLVM crashes on compiler_builtins for Xtensa
    // ("Cannot scavenge register without an emergency spill slot"), so
    // an unoptimised build is never attempted.
    if !args.iter().any(|a| a == "--release" || a == "-r" || a.starts_with("--profile")) {
        eprintln!("xtask: note: adding --release (opt-level 0 crashes LLVM's Xtensa backend on compiler_builtins)");
        args.push("--release".into());
    }
    run(&mut xtensa_cargo("build", &args))
}

/// Device builds' optimisation: for size (the runtime footprint budget).
const DEVICE_OPT_LEVEL: &str = "s";

/// `cargo +nightly SUB` for the Xtensa target (`build`, `clippy`), with
/// `args` after the target selection.
pub(crate) fn xtensa_cargo(sub: &str, args: &[String]) -> Command {
    let root = root();
    let mut cmd = nightly_cargo();
    cmd.current_dir(&root)
        .arg(sub)
        .args(["-Zbuild-std=core,alloc", "-Zbuild-std-features=compiler-builtins-mem", "-Zjson-target-spec"])
        .arg("--target")
        .arg(root.join("xtensa-target.json"))
        .arg("--target-dir")
        .arg(xtensa_dir())
        // The device image is sized, not the host's (Cargo.toml's release
        // profile is the host's, opt-level 3).
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", DEVICE_OPT_LEVEL)
        .args(args);
    if let Ok(f) = std::env::var("XTASK_XTENSA_RUSTFLAGS") {
        cmd.env("RUSTFLAGS", f);
    }
    cmd
}
