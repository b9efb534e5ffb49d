//! The logic of libneuroncustomop: address translation, the three heaps,
//! the per-core state and its init prologue, written once against
//! [`neuron_hal::Hal`] so the same code runs on the Q7 and on the mock.
#![no_std]
// The hit table keeps LLVM from refolding its index (`hit_table::opaque`).
#![cfg_attr(target_arch = "xtensa", feature(asm_experimental_arch))]

#[cfg(test)]
extern crate std;

pub mod access;
pub mod bounce;
pub mod core_state;
pub mod dma;
pub mod error;
pub mod error_log;
pub mod facade;
pub mod heap;
pub mod hit_table;
pub mod marshal;
pub mod memcpy;
pub mod ops;
pub mod printf;
pub mod stack;
pub mod thrash;
mod trace;
pub mod translate;

pub use core_state::CoreState;
pub use error::{Error, Result};
pub use error_log::ErrorLog;
pub use half;
pub use memcpy::MemcpyMethod;
pub use translate::{MapRecord, Q7PtrType, TranslationCtx, Translator, TranslatorAbi};
