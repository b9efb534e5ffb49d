//! The house rules as steps of `cargo xtask test`: formatting, and clippy
//! on the host and on the Xtensa build (the workspace lints in the root
//! `Cargo.toml` — unsafe hygiene among them — are enforced by both). All
//! run with the pinned nightly, so a newer toolchain on a new machine
//! cannot change the verdict.

use crate::{nightly_cargo, root, run, xtask_target_base, xtensa_cargo, Result};

/// `cargo fmt --check` over the workspace and the three separate ones
/// (`kernels/`, `fuzz/`, `python/`), with the root `rustfmt.toml`.
pub(crate) fn fmt() -> Result {
    for manifest in ["Cargo.toml", "kernels/Cargo.toml", "fuzz/Cargo.toml", "python/Cargo.toml"] {
        run(nightly_cargo().current_dir(root()).args(["fmt", "--all", "--check", "--manifest-path", manifest]))?;
    }
    Ok(())
}

/// Host clippy over every crate and target, warnings denied: the
/// workspace, the fuzz harnesses and the Python package (a workspace of
/// its own, so that maturin builds it alone).
pub(crate) fn clippy_host() -> Result {
    run(nightly_cargo()
        .current_dir(root())
        .args(["clippy", "--workspace", "--all-targets", "--target-dir"])
        .arg(xtask_target_base().join("clippy"))
        .args(["--", "-D", "warnings"]))?;
    // The fuzz harnesses (a crate of the fuzz workspace, which the root one
    // excludes), in the same target directory: their dependencies are the
    // workspace's, already checked.
    run(nightly_cargo()
        .current_dir(root())
        .args(["clippy", "--manifest-path", "fuzz/Cargo.toml", "-p", "neuron-fuzz-harness", "--all-features", "--all-targets", "--target-dir"])
        .arg(xtask_target_base().join("clippy"))
        .args(["--", "-D", "warnings"]))?;
    run(nightly_cargo()
        .current_dir(root())
        .args(["clippy", "--manifest-path", "python/Cargo.toml", "--all-targets", "--target-dir"])
        .arg(xtask_target_base().join("clippy-python"))
        .args(["--", "-D", "warnings"]))
}

/// Clippy on the shipped crates as the device builds them: for the Q7, and
/// with `qemu` (the HAL's model of the emulated core is only built then).
pub(crate) fn clippy_xtensa() -> Result {
    for features in [&[][..], &["--features", "neuroncustomop/qemu"]] {
        let args: Vec<String> = ["--release", "-p", "neuron-hal", "-p", "neuron-runtime", "-p", "neuron-capi", "-p", "neuron-libm", "-p", "neuroncustomop"]
            .iter()
            .chain(features)
            .chain(&["--", "-D", "warnings"])
            .map(|s| s.to_string())
            .collect();
        run(&mut xtensa_cargo("clippy", &args))?;
    }
    Ok(())
}
