//! The exported C entry points, under the names of the original library.
//!
//! Conventions: functions that can fail return `0` on success and `-1` on
//! failure (pointer-returning ones return null), and record an error code
//! the caller reads with [`neuron_last_error`]; [`neuron_error_message`]
//! turns a code into a sentence.

pub mod access;
pub mod cpu;
pub mod customop;
pub mod error;
pub mod heap;
pub mod init;
pub mod launch;
pub mod memcpy;
pub mod op_failure;
pub mod ops;
pub mod pow;
pub mod printf;
pub mod stream;
#[cfg(not(target_arch = "xtensa"))]
pub mod tcm_watch;
pub mod translate;
pub mod version;

use neuron_runtime::Error;

/// Maps a result onto the C convention (0 / -1).
pub(crate) fn status(r: Result<(), Error>) -> i32 {
    match r {
        Ok(()) => 0,
        Err(_) => -1,
    }
}
