//! The library's one way to stop a core: the abort report.
//!
//! SPEC §7 keeps exactly one abort (no HBM stack for the switch); a panic
//! inside the runtime or a Rust kernel ends here too. The report names the
//! reason (an error code and its message), where, and the core.

use neuron_runtime::Error;

/// What an abort says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(C)]
pub struct AbortReport {
    /// Error code of the reason.
    pub code: i32,
    /// The core (PRID), or -1 if unknown.
    pub cpu: i32,
    /// Source line of the abort site.
    pub line: u32,
}

/// Stops the calling core with a report: `error` is the reason, `what`
/// adds detail, `loc` the place.
#[cold]
pub fn abort_with(error: Error, what: &str, loc: &core::panic::Location<'_>) -> ! {
    let cpu = crate::current::with_core(|b| Ok(b.state.cpu_id() as i32)).unwrap_or(-1);
    imp::abort(AbortReport { code: error.code(), cpu, line: loc.line() }, error, what, loc.file())
}

#[cfg(not(target_arch = "xtensa"))]
mod imp {
    use super::*;

    pub fn abort(r: AbortReport, e: Error, what: &str, file: &str) -> ! {
        std::eprintln!(
            "neuroncustomop: abort on core {}: error {} ({}): {} at {}:{}",
            r.cpu,
            r.code,
            e.message(),
            what,
            file,
            r.line
        );
        std::process::abort()
    }
}

#[cfg(target_arch = "xtensa")]
mod imp {
    use super::*;

    /// The last abort report, for a debugger or the host to read.
    #[unsafe(no_mangle)]
    static mut NEURON_ABORT_REPORT: AbortReport = AbortReport { code: 0, cpu: -1, line: 0 };


    pub fn abort(r: AbortReport, _e: Error, _what: &str, _file: &str) -> ! {
        // In the body, so the header generator does not export it.
        unsafe extern "C" {
            /// Provided by the firmware (or the test board).
            #[link_name = "abort"]
            fn firmware_abort() -> !;
        }
        #[cfg(feature = "qemu")]
        crate::device::semihosting::report_abort(r.cpu, r.code, _e.message(), _what, _file, r.line);
        // SAFETY: single-threaded core (under QEMU the cores share this
        // static: the last report wins); written once on the way down.
        unsafe {
            core::ptr::addr_of_mut!(NEURON_ABORT_REPORT).write_volatile(r);
            firmware_abort()
        }
    }
}
