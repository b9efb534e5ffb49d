//! `customop`: builds vendor-style custom-op kernels and runs them on the
//! host simulator — what the vendor's `build_custom_op.py` and
//! `custom_op.load` do, as a library (the `customop` binary is a thin
//! command line over it; a Python package can link the same code).
//!
//! - [`scan`]: the schema from the sources (`NEURON_LIBRARY` in the shape
//!   files, compute function signatures in the compute files);
//! - [`codegen`]: the generated wrapper source (kernel side) and shape
//!   entry (host side);
//! - [`compiler`], [`link`], [`staticlib`]: compiling with the cache, and
//!   linking the simulator's shared object against the host library;
//! - [`build`]: all of it, for `customop build`;
//! - [`xtensa`]: the device build (toolchain, FLL and QEMU images);
//! - [`npy`], [`dylib`], [`loaded`], [`sim`], [`shape`], [`run`]: `customop run`;
//!   [`qemu_blob`], [`qemu_run`], [`differential`]: its `--on qemu|both`.
//! - [`ops_list`]: `customop ops`; [`progress`]: what a build prints as it runs.
//! - [`owned_dir`]: which build directories and caches are trusted;
//!   [`cache_home`]: `load()`'s default cache; [`users`]: the user database.

pub mod atomic;
pub mod build;
mod byte_record;
pub mod cache;
pub mod cache_home;
pub mod cli;
pub mod codegen;
pub mod compile_commands;
pub mod compiler;
pub mod contained;
pub mod crash_site;
pub mod device_check;
pub mod device_fault;
pub mod differential;
pub mod dir_lock;
pub mod dylib;
pub mod environment;
pub mod error;
pub mod finding_site;
pub mod integrity;
pub mod isolate;
pub mod kernel_heap;
pub mod link;
pub mod loaded;
pub mod npy;
pub mod ops_list;
pub mod owned_dir;
pub mod profile;
pub mod progress;
pub mod qemu_blob;
pub mod qemu_run;
pub mod report_page;
pub mod run;
pub mod scan;
pub mod schema;
pub mod shape;
pub mod shape_cache;
pub mod sim;
pub mod staticlib;
pub mod stderr_log;
pub mod users;
pub mod workdir;
pub mod worker;
pub mod xtensa;

pub use error::{Error, ErrorKind, Result};
pub use schema::{ArgKind, Op, Param, Schema, Target};
