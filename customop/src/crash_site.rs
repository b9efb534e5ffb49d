//! A host crash's faulting instruction named: the run's crash handler
//! prints the address (it may look nothing up in a signal handler); this
//! process, which has the kernel's library mapped at the same address
//! (the run's child is a fork of it), finds the library and reads its
//! debug information (kernels are built with `-g`): the function and
//! file:line, with the frames inlined there.

use neuroncustomop::host::CRASH_PC_LINE_PREFIX;

/// `report` with each faulting-address line replaced by where that is in
/// the kernel's source (kept as it is when it cannot be found).
pub fn symbolize(report: &str) -> String {
    let mut out = String::with_capacity(report.len());
    for line in report.lines() {
        let pc = line.strip_prefix(CRASH_PC_LINE_PREFIX).and_then(|h| usize::from_str_radix(h.trim().trim_start_matches("0x"), 16).ok());
        match pc.and_then(where_is) {
            Some(w) => out.push_str(&w),
            None => {
                out.push_str(line);
                out.push('\n');
            }
        }
    }
    if !report.ends_with('\n') {
        out.pop();
    }
    out
}

/// The source frames at `pc`, innermost first, as report lines.
fn where_is(pc: usize) -> Option<String> {
    let lines: Vec<String> = customop_symbols::process::at(pc)?.iter().map(|f| f.to_string()).collect();
    let (first, inlined) = lines.split_first()?;
    let mut s = format!("neuroncustomop: the crash is in {first}\n");
    for l in inlined {
        s.push_str(&format!("  inlined into {l}\n"));
    }
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn here() -> usize {
        here as fn() -> usize as usize
    }

    #[test]
    fn an_address_in_this_program_is_named_and_other_lines_stay() {
        let r = format!("neuroncustomop: abort on core 0: boom\n{CRASH_PC_LINE_PREFIX}{:#x}\nafter", here());
        let s = symbolize(&r);
        assert!(s.starts_with("neuroncustomop: abort on core 0: boom\nneuroncustomop: the crash is in "), "{s}");
        assert!(s.contains("crash_site.rs:") && s.ends_with("\nafter"), "{s}");
        // An address nothing is mapped at stays as printed.
        let r = format!("{CRASH_PC_LINE_PREFIX}0x10\n");
        assert_eq!(symbolize(&r), r);
    }
}
