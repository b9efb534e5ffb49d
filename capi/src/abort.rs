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
    abort_at(error, what, loc.file(), loc.line())
}

/// [`abort_with`] for a place known by file and line only (a panic caught
/// on the host: its `Location` does not outlive the panic hook).
#[cold]
pub fn abort_at(error: Error, what: &str, file: &str, line: u32) -> ! {
    // The PRID from the hardware, not through `with_core`: an abort often
    // comes from inside an entry point, where entering again would be
    // refused (and recorded over the real reason).
    let cpu = crate::binding::abort_cpu();
    imp::abort(AbortReport { code: error.code(), cpu, line }, error, what, file)
}

/// A panic caught on its way to the C ABI: its message and place.
#[cfg(not(target_arch = "xtensa"))]
#[derive(Debug)]
pub struct Caught {
    /// The panic message.
    pub message: std::string::String,
    /// Where it panicked.
    pub file: std::string::String,
    /// The line.
    pub line: u32,
}

#[cfg(not(target_arch = "xtensa"))]
mod host_panic {
    use super::Caught;
    use core::cell::{Cell, RefCell};
    use std::string::{String, ToString};

    std::thread_local! {
        /// Depth of `catch_panic` regions on this thread.
        static DEPTH: Cell<u32> = const { Cell::new(0) };
        /// Where the last panic inside a region happened (set by the hook).
        static PLACE: RefCell<Option<(String, u32)>> = const { RefCell::new(None) };
    }

    #[inline]
    fn install_hook() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let previous = std::panic::take_hook();
            std::panic::set_hook(std::boxed::Box::new(move |info| {
                if DEPTH.with(Cell::get) > 0 {
                    // Inside the runtime or a kernel: the abort report
                    // tells it, once, with the place recorded here.
                    let place = info.location().map(|l| (l.file().to_string(), l.line()));
                    PLACE.with(|p| *p.borrow_mut() = place);
                } else {
                    previous(info);
                }
            }));
        });
    }

    /// Runs `f`; a panic in it comes back as `Err` with its message and place.
    pub fn catch_panic<R>(f: impl FnOnce() -> R) -> Result<R, Caught> {
        install_hook();
        DEPTH.with(|d| d.set(d.get() + 1));
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f));
        DEPTH.with(|d| d.set(d.get() - 1));
        r.map_err(|payload| {
            let message = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".into());
            let (file, line) = PLACE.with(|p| p.borrow_mut().take()).unwrap_or_else(|| ("<unknown>".into(), 0));
            Caught { message, file, line }
        })
    }
}

#[cfg(not(target_arch = "xtensa"))]
pub use host_panic::catch_panic;

/// Stops the core for a caught panic: the abort report with
/// `Error::Panic`, its message and place.
#[cfg(not(target_arch = "xtensa"))]
#[cold]
pub fn abort_panic(c: Caught) -> ! {
    abort_at(Error::Panic, &std::format!("panic: {}", c.message), &c.file, c.line)
}

/// Runs `f` so that no panic leaves it: on the host a panic becomes the
/// abort report (the C ABI cannot unwind); on the device the build
/// aborts on panic and the `#[panic_handler]` reports.
#[inline]
pub fn no_unwind<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(not(target_arch = "xtensa"))]
    {
        match catch_panic(f) {
            Ok(r) => r,
            Err(c) => abort_panic(c),
        }
    }
    #[cfg(target_arch = "xtensa")]
    {
        f()
    }
}

/// Host: set once the process's fatal report is written, by this abort
/// or by the simulator's crash handler (a fatal signal): the other adds none.
#[cfg(not(target_arch = "xtensa"))]
pub static REPORTED: core::sync::atomic::AtomicBool = core::sync::atomic::AtomicBool::new(false);

#[cfg(not(target_arch = "xtensa"))]
mod imp {
    use super::*;

    pub fn abort(r: AbortReport, e: Error, what: &str, file: &str) -> ! {
        std::eprintln!("neuroncustomop: abort on core {}: error {} ({}): {} at {}:{}", r.cpu, r.code, e.message(), what, file, r.line);
        // This line is the report: the crash handler's SIGABRT line would
        // only repeat it less precisely.
        REPORTED.store(true, core::sync::atomic::Ordering::SeqCst);
        std::process::abort()
    }
}

#[cfg(target_arch = "xtensa")]
mod imp {
    use super::*;

    /// The last abort report's place (an `UnsafeCell`, so no `static
    /// mut`): the symbol a debugger or the host reads; `repr(transparent)`
    /// keeps its layout the report's.
    #[repr(transparent)]
    struct ReportCell(core::cell::UnsafeCell<AbortReport>);

    // SAFETY: only `abort` writes it, once, on the way down of the calling
    // core (a core is one thread of control; under QEMU the cores share
    // it and the last report wins), with a volatile store; Rust never
    // reads it.
    unsafe impl Sync for ReportCell {}

    /// The last abort report, for a debugger or the host to read.
    #[unsafe(no_mangle)]
    static NEURON_ABORT_REPORT: ReportCell = ReportCell(core::cell::UnsafeCell::new(AbortReport { code: 0, cpu: -1, line: 0 }));

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
            NEURON_ABORT_REPORT.0.get().write_volatile(r);
            firmware_abort()
        }
    }
}
