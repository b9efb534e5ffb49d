//! Finding the host `libneuroncustomop.a` that belongs to the running
//! binary: the `customop-staticlib` crate (`customop/staticlib/`), shared
//! with the root crate's C++ tests.

pub use customop_staticlib::{find, find_for, ENV_OVERRIDE};
