//! The emulated device's plumbing that the kernel author's tool
//! (`customop`) and the maintainers' tool (`xtask`) both need, owned here
//! once so the two can never disagree:
//!
//! - [`command`]: the QEMU command line (the emulator, its core, its
//!   machines, semihosting, the loader, the plugin);
//! - [`plugin`]: the build of the TCG plugin (`perf/profile.c`) that
//!   `--profile`, the device check and `cargo xtask perf` load;
//! - [`sandbox`]: what QEMU may touch on the host while a kernel runs;
//! - [`target_dir`]: where cargo puts a build's output, the device
//!   runtimes' and images' included.
//!
//! A test (`tests/one_place.rs`) fails when another crate of the
//! repository spells one of these out itself.

pub mod command;
pub mod plugin;
pub mod sandbox;
pub mod target_dir;
