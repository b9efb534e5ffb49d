//! Fault injection for the tests of the abort path (host only).

use neuron_runtime::Error;

/// Panics inside the body of an entry point (inside `with_core`, where
/// every C entry point's body runs), as a runtime bug would: the caller
/// must see the abort report, never an unwind.
#[doc(hidden)]
pub fn panic_inside_an_entry_point(message: &'static str) -> i32 {
    crate::current::with_core(|_| -> Result<i32, Error> { panic!("{}", message) }).unwrap_or(-1)
}
