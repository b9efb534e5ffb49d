//! The tool's errors: a kind (which fixes the process exit status, stable
//! and documented in `docs/kernel-guide.md`) and a message that names the
//! file and op concerned.

use std::fmt;

/// What went wrong, by the exit status it gives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Bad command line (2).
    Usage,
    /// The sources declare something the tool refuses: too many ops or
    /// arguments, an unsupported argument kind or return type, a missing
    /// compute or shape function, a malformed `NEURON_LIBRARY` (3).
    Refused,
    /// The compiler or linker failed; its diagnostics follow (4).
    Compile,
    /// A file could not be read or written (5).
    Io,
    /// `run` was given inputs that do not fit the op: a bad `.npy`, the
    /// wrong number or kind of arguments, a build directory that is not
    /// one (6).
    BadInput,
    /// The kernel ran and failed; the reason and report follow (7).
    RunFailed,
    /// The op's shape function failed on the host (8).
    ShapeFailed,
    /// The environment lacks something: the host staticlib, the
    /// compiler, the simulator entry points in the built library, the
    /// Xtensa toolchain, QEMU (10).
    Environment,
    /// `run --on both`: the simulator and the emulated device disagree
    /// (output bits or run status) (11).
    Mismatch,
    /// The kernel or the shape function crashed (a fatal signal: a bad
    /// pointer, `abort()`, a stack overflow, an integer division by
    /// zero); its crash report follows (12).
    Crashed,
    /// The kernel or the shape function did not finish within the time
    /// bound (`--timeout`, `timeout=`) and was stopped (13).
    TimedOut,
    /// A directory the tool would read code or cached results from (a
    /// build directory, its `customop-build/`, the cache) belongs to
    /// another user or can be written by others; the message names it,
    /// its owner and how to trust it (14).
    Untrusted,
    /// The run was interrupted (Ctrl-C) and stopped (130).
    Interrupted,
}

impl ErrorKind {
    /// The process exit status for this kind.
    pub fn exit_code(self) -> i32 {
        match self {
            Self::Usage => 2,
            Self::Refused => 3,
            Self::Compile => 4,
            Self::Io => 5,
            Self::BadInput => 6,
            Self::RunFailed => 7,
            Self::ShapeFailed => 8,
            Self::Environment => 10,
            Self::Mismatch => 11,
            Self::Crashed => 12,
            Self::TimedOut => 13,
            Self::Untrusted => 14,
            Self::Interrupted => 130,
        }
    }

    /// A stable name for this kind (the Python package's `Error.kind`).
    pub fn name(self) -> &'static str {
        match self {
            Self::Usage => "usage",
            Self::Refused => "refused",
            Self::Compile => "compile",
            Self::Io => "io",
            Self::BadInput => "bad_input",
            Self::RunFailed => "run_failed",
            Self::ShapeFailed => "shape_failed",
            Self::Environment => "environment",
            Self::Mismatch => "mismatch",
            Self::Crashed => "crashed",
            Self::TimedOut => "timed_out",
            Self::Untrusted => "untrusted",
            Self::Interrupted => "interrupted",
        }
    }

    /// Every kind.
    pub const ALL: [Self; 13] = [
        Self::Usage,
        Self::Refused,
        Self::Compile,
        Self::Io,
        Self::BadInput,
        Self::RunFailed,
        Self::ShapeFailed,
        Self::Environment,
        Self::Mismatch,
        Self::Crashed,
        Self::TimedOut,
        Self::Untrusted,
        Self::Interrupted,
    ];

    /// The kind whose exit status is `code`.
    pub fn from_exit_code(code: i32) -> Option<Self> {
        Self::ALL.into_iter().find(|k| k.exit_code() == code)
    }
}

/// An error of the tool.
#[derive(Clone, Debug)]
pub struct Error {
    /// Its kind.
    pub kind: ErrorKind,
    /// What to tell the user.
    pub message: String,
    /// A failed kernel run: the runtime's error code (`docs/errors.md`),
    /// which is not the exit status (both are numbers, from different
    /// tables).
    pub runtime_error: Option<i32>,
}

impl Error {
    /// An error of `kind`.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Self { kind, message: message.into(), runtime_error: None }
    }

    /// This error, for a run that failed with the runtime's error `code`.
    pub fn with_runtime_error(mut self, code: i32) -> Self {
        self.runtime_error = Some(code);
        self
    }

    /// An I/O error on `path`.
    pub fn io(what: &str, path: &std::path::Path, e: std::io::Error) -> Self {
        Self::new(ErrorKind::Io, format!("cannot {what} {}: {e}", path.display()))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// The tool's result.
pub type Result<T> = std::result::Result<T, Error>;
