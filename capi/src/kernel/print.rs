//! `kprint!`: formatted text into the device printf ring.

use neuron_runtime::printf::LineBuf;

/// Formats `args` (up to 256 bytes, truncated) as one ring entry.
pub fn print_fmt(args: core::fmt::Arguments<'_>) {
    let mut line = LineBuf::<256>::new();
    let _ = core::fmt::Write::write_fmt(&mut line, args);
    // Straight into the runtime (no C export in between); printing fails
    // silently without a bound core, as `neuron_print` does.
    let _ = crate::binding::with_core(|b| {
        b.state.printf(line.as_bytes());
        Ok(())
    });
}

/// Prints one entry to the device printf ring (visible after the
/// invocation's cleanup; the simulator's report shows it).
#[macro_export]
macro_rules! kprint {
    ($($t:tt)*) => {
        $crate::kernel::print_fmt(::core::format_args!($($t)*))
    };
}
