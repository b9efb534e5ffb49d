//! The library's `#[panic_handler]` (feature `panic-handler`, default): a
//! panic in the runtime or in a Rust kernel is the abort report with
//! `Error::Panic`. Turn the feature off to use a board's own handler.

use core::panic::PanicInfo;
use neuron_runtime::Error;

#[panic_handler]
fn panic(info: &PanicInfo<'_>) -> ! {
    #[cfg(feature = "qemu")]
    super::semihosting::report_panic(info);
    let here = core::panic::Location::caller();
    let loc = info.location().unwrap_or(here);
    crate::abort::abort_with(Error::Panic, "panic", loc)
}
