//! A sanitizer finding's line: the simulator writes the return addresses
//! of the access that made a finding into its sentence (a
//! `FINDING_PCS_OPEN` token); the process that ran the kernel, which has
//! it mapped, replaces them with the first frame in the kernel author's
//! own source, " at k.cpp:27 (in my_op)".

use customop_symbols::{process::Objects, Frame};
use neuroncustomop::host::FINDING_PCS_OPEN;

/// `report` with every finding's addresses replaced by the kernel line
/// they came from (dropped when no frame is the kernel author's).
pub fn symbolize(report: &str) -> String {
    let mut out = String::with_capacity(report.len());
    let mut rest = report;
    while let Some(i) = rest.find(FINDING_PCS_OPEN) {
        out.push_str(&rest[..i]);
        let after = &rest[i + FINDING_PCS_OPEN.len()..];
        let Some(end) = after.find('>') else {
            out.push_str(&rest[i..]);
            return out;
        };
        let pcs = after[..end].split_whitespace().filter_map(|h| usize::from_str_radix(h.trim_start_matches("0x"), 16).ok());
        if let Some(f) = users_frame(pcs) {
            out.push_str(&format!(" at {}:{} (in {})", f.file.unwrap_or_default(), f.line.unwrap_or_default(), f.function));
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    out
}

/// The innermost frame of the kernel author's source (with a line) among
/// return addresses `pcs` (innermost first).
fn users_frame(pcs: impl Iterator<Item = usize>) -> Option<Frame> {
    // A return address is the instruction after the call: the call's line
    // is the byte before it.
    let mut objects = Objects::default();
    pcs.filter(|&pc| pc > 1).filter_map(|pc| objects.at(pc - 1)).flatten().find(|f| f.line.is_some() && f.is_authors())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_replaced_or_dropped_and_the_rest_stays() {
        // Addresses nothing maps: the token goes, the sentence stays.
        let r = format!("error 115: the first at element 3{FINDING_PCS_OPEN} 0x10 0x20> (on the device ...)\nnext line");
        assert_eq!(symbolize(&r), "error 115: the first at element 3 (on the device ...)\nnext line");
        assert_eq!(symbolize("no token"), "no token");
        let cut = format!("x{FINDING_PCS_OPEN} 0x10");
        assert_eq!(symbolize(&cut), cut);
    }
}
