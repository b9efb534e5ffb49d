//! A test step's command run with its output kept: streamed to our stderr
//! as before and saved to a log file, so that a failed step's summary can
//! repeat what failed. A CI log is often shown cut in the middle, which
//! is where a long run's early steps print their failures.

use crate::Result;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// The most lines of a failure's excerpt in the summary.
const EXCERPT_LINES: usize = 60;

/// The last lines kept when the output has no test summary (a step that
/// failed before its tests ran, or a test process killed by a signal).
const TAIL_LINES: usize = 25;

/// Runs `cmd` with stdout and stderr merged, streamed to our stderr and
/// written to `log`; on failure, the error carries the lines that say what
/// failed (pytest's short summary, cargo test's failed tests and panics).
pub(crate) fn run_logged(cmd: &mut Command, log: &Path) -> Result {
    eprintln!("xtask: running {cmd:?} (output kept in {})", log.display());
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut file = std::fs::File::create(log).map_err(|e| format!("{}: {e}", log.display()))?;
    let (reader, writer) = std::io::pipe().map_err(|e| format!("pipe: {e}"))?;
    let writer2 = writer.try_clone().map_err(|e| format!("pipe: {e}"))?;
    let mut child = cmd.stdout(writer).stderr(writer2).spawn().map_err(|e| format!("{:?}: {e}", cmd.get_program()))?;
    // The command keeps its copies of the pipe's write end until they are
    // replaced: without this the read below never sees the end.
    cmd.stdout(Stdio::inherit()).stderr(Stdio::inherit());
    let mut lines = Vec::new();
    for line in BufReader::new(reader).split(b'\n') {
        let line = line.map_err(|e| format!("reading the output: {e}"))?;
        let text = String::from_utf8_lossy(&line).into_owned();
        eprintln!("{text}");
        let _ = writeln!(file, "{text}");
        lines.push(text);
    }
    let st = child.wait().map_err(|e| format!("{:?}: {e}", cmd.get_program()))?;
    if st.success() {
        return Ok(());
    }
    let excerpt = failure_excerpt(&lines);
    Err(format!(
        "{:?} failed: {st}; the whole output is in {}{}",
        cmd.get_program(),
        log.display(),
        if excerpt.is_empty() { String::new() } else { format!("\n{excerpt}") }
    ))
}

/// The lines of a test run's output that say what failed; its last lines
/// when nothing there looks like a test summary.
fn failure_excerpt(lines: &[String]) -> String {
    let mut keep: Vec<&str> = Vec::new();
    let mut i = 0;
    while i < lines.len() && keep.len() < EXCERPT_LINES {
        let l = lines[i].as_str();
        if l.contains("short test summary info") {
            // pytest's summary runs to its last line.
            keep.extend(lines[i..].iter().map(String::as_str));
            break;
        } else if l.starts_with("---- ") && l.ends_with(" stdout ----") {
            // cargo test: a failed test's captured output, to a blank line.
            let end = lines[i..].iter().position(String::is_empty).map_or(lines.len(), |n| i + n).min(i + 12);
            keep.extend(lines[i..end].iter().map(String::as_str));
            i = end;
            continue;
        } else if l.starts_with("test result: FAILED") || l.starts_with("error: test failed") || l.ends_with("... FAILED") {
            keep.push(l);
        }
        i += 1;
    }
    if keep.is_empty() {
        keep.extend(lines[lines.len().saturating_sub(TAIL_LINES)..].iter().map(String::as_str));
    }
    keep.truncate(EXCERPT_LINES);
    keep.iter().map(|l| format!("         | {l}")).collect::<Vec<_>>().join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(s: &str) -> Vec<String> {
        s.lines().map(String::from).collect()
    }

    #[test]
    fn pytest_summary_is_kept() {
        let out =
            v("...F..\n= FAILURES =\nlong traceback\n=== short test summary info ===\nFAILED tests/test_a.py::test_b - assert 1 == 2\n1 failed, 5 passed");
        let e = failure_excerpt(&out);
        assert!(e.contains("FAILED tests/test_a.py::test_b"), "{e}");
        assert!(!e.contains("long traceback"), "{e}");
    }

    #[test]
    fn cargo_failures_are_kept() {
        let out = v("test a ... ok\ntest b ... FAILED\n\nfailures:\n\n---- b stdout ----\nthread 'b' panicked at src/x.rs:3:5:\nboom\n\nfailures:\n    b\n\ntest result: FAILED. 1 passed; 1 failed");
        let e = failure_excerpt(&out);
        assert!(e.contains("test b ... FAILED") && e.contains("panicked at src/x.rs:3:5") && e.contains("test result: FAILED"), "{e}");
        assert!(!e.contains("test a ... ok"), "{e}");
    }

    #[test]
    fn a_failure_before_the_tests_shows_the_last_lines() {
        let out = v("Collecting torch\nERROR: No space left on device\nline3");
        let e = failure_excerpt(&out);
        assert!(e.contains("No space left on device") && e.contains("line3"), "{e}");
        let long: Vec<String> = (0..100).map(|n| format!("line {n}")).collect();
        let e = failure_excerpt(&long);
        assert!(e.contains("line 99") && !e.contains("line 74\n"), "{e}");
    }

    #[test]
    fn a_failing_command_reports_its_lines() {
        let tmp = tempfile::tempdir().unwrap();
        let log = tmp.path().join("step.log");
        let e = run_logged(Command::new("sh").args(["-c", "echo '---- t stdout ----'; echo 'it broke' >&2; echo; exit 3"]), &log).unwrap_err();
        assert!(e.contains("it broke") && e.contains("exit status: 3"), "{e}");
        assert!(std::fs::read_to_string(&log).unwrap().contains("it broke"));
        run_logged(&mut Command::new("true"), &log).unwrap();
        let _ = std::fs::remove_file(&log);
    }
}
