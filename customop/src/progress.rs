//! What a build tells its user while it runs: the steps of long ones (the
//! first device build's cargo run), each tool's command line and output
//! with `-v`, and the warnings of tools that succeeded, kept so the caller
//! can show them afterwards (a warning of a compile that passed would
//! otherwise be lost with its output).
//!
//! Per thread, and set for one call by [`scoped`]: a build runs on its
//! caller's thread, so concurrent builds (Python threads, tests) keep their
//! own settings and warnings. Outside [`scoped`] nothing is printed.

use std::cell::RefCell;

/// How much a build prints on stderr.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    /// Nothing.
    #[default]
    Quiet,
    /// The steps of long operations.
    Steps,
    /// Also every tool's command line and its output (`-v`, `verbose=True`).
    Verbose,
}

/// A tool that succeeded but printed something (a compiler's warnings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Warning {
    /// What ran (`compiling relu.cpp`).
    pub what: String,
    /// What it printed.
    pub output: String,
}

impl Warning {
    /// The lines that name a diagnostic (`file:line:col: warning: ...`),
    /// for a summary; every non-empty line when none does.
    pub fn headlines(&self) -> Vec<&str> {
        let marked: Vec<&str> = self.output.lines().filter(|l| l.contains("warning:") || l.contains("error:")).collect();
        if marked.is_empty() {
            self.output.lines().filter(|l| !l.trim().is_empty()).collect()
        } else {
            marked
        }
    }
}

#[derive(Default)]
struct State {
    level: Level,
    warnings: Vec<Warning>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

/// Runs `f` with `level` on this thread; returns its result and the
/// warnings of the tools it ran.
pub fn scoped<T>(level: Level, f: impl FnOnce() -> T) -> (T, Vec<Warning>) {
    let saved = STATE.with(|s| std::mem::replace(&mut *s.borrow_mut(), State { level, warnings: Vec::new() }));
    let out = f();
    let State { warnings, .. } = STATE.with(|s| std::mem::replace(&mut *s.borrow_mut(), saved));
    (out, warnings)
}

/// The current level.
pub fn level() -> Level {
    STATE.with(|s| s.borrow().level)
}

/// Prints a step (at [`Level::Steps`] and above).
pub fn step(msg: &str) {
    if level() >= Level::Steps {
        eprintln!("customop: {msg}");
    }
}

/// Prints a detail (at [`Level::Verbose`]).
pub fn detail(msg: &str) {
    if level() >= Level::Verbose {
        eprintln!("{msg}");
    }
}

/// Keeps what a tool that succeeded printed (nothing if it printed nothing).
pub fn warned(what: &str, output: &str) {
    if output.trim().is_empty() {
        return;
    }
    STATE.with(|s| s.borrow_mut().warnings.push(Warning { what: what.to_owned(), output: output.to_owned() }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_are_kept_per_scope_and_summarised_by_their_diagnostic_lines() {
        warned("outside", "ignored? no: kept in the thread's default state");
        let ((), w) = scoped(Level::Quiet, || {
            warned("compiling a.cpp", "a.cpp: In function 'f':\na.cpp:3:9: warning: unused variable 'x' [-Wunused-variable]\n    3 |   int x;\n");
            warned("compiling b.cpp", "  \n");
            let ((), inner) = scoped(Level::Verbose, || {
                assert_eq!(level(), Level::Verbose);
                warned("linking", "note: something\n");
            });
            assert_eq!(inner.len(), 1);
            assert_eq!(level(), Level::Quiet);
        });
        assert_eq!(w.len(), 1, "{w:?}");
        assert_eq!(w[0].headlines(), ["a.cpp:3:9: warning: unused variable 'x' [-Wunused-variable]"]);
        assert_eq!(Warning { what: "x".into(), output: "note: a\n\nb\n".into() }.headlines(), ["note: a", "b"]);
    }
}
