//! The plugin's findings file: one line per core and kind of finding,
//! `F kind vcpu pc addr size store what lo hi arg count other` (numbers
//! in hex where they are addresses), each followed by lines `T pc`: the
//! core's last distinct access instructions before it, latest first;
//! then `end`.

use crate::error::{Error, ErrorKind, Result};
use std::path::Path;

/// What was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    /// A stack access beyond the stack's limit (first: an overflowing
    /// stack tramples what lies below it, which explains the rest).
    Stack,
    /// A load of bytes nothing wrote.
    Uninitialised,
    /// An access outside every live block and tensor.
    Outside,
    /// An access to a freed block.
    Freed,
    /// A store into an input.
    InputWritten,
    /// A core read output bytes another core wrote (or the other way).
    CrossCoreRead,
    /// Two cores wrote the same output bytes.
    CrossCoreWrite,
}

impl Kind {
    fn from_code(c: u32) -> Option<Self> {
        Some(match c {
            1 => Self::Uninitialised,
            2 => Self::Outside,
            3 => Self::Freed,
            4 => Self::InputWritten,
            5 => Self::CrossCoreRead,
            6 => Self::CrossCoreWrite,
            7 => Self::Stack,
            _ => return None,
        })
    }
}

/// Who handed the block out (the trace port's codes, the plugin's for
/// the tensors the host placed).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum What {
    /// No block (a stack finding, or none near).
    None,
    /// `tcm_malloc`.
    Tcm,
    /// `malloc`, `realloc` or `new`.
    Malloc,
    /// `calloc`.
    Calloc,
    /// `torch::empty` (or another tensor the library made).
    Tensor,
    /// A buffer of the library's own (a stream's).
    Library,
    /// An input (its argument index).
    Input(u32),
    /// The output.
    Output,
}

/// One finding: the first access of its kind on its core, and how many.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// What.
    pub kind: Kind,
    /// The core.
    pub cpu: u32,
    /// The instruction.
    pub pc: u64,
    /// The address (for the stack: the lowest reached).
    pub addr: u64,
    /// The access's bytes (for the stack: how far below its limit).
    pub size: u64,
    /// A store (else a load).
    pub store: bool,
    /// The block it hit (or is nearest).
    pub what: What,
    /// The block's bounds.
    pub lo: u64,
    /// The block's end.
    pub hi: u64,
    /// How many such accesses.
    pub count: u64,
    /// The other core (cross-core findings).
    pub other: Option<u32>,
    /// The core's access instructions before this one, latest first.
    pub trail: Vec<u64>,
}

fn bad(l: &str) -> Error {
    Error::new(ErrorKind::Environment, format!("the emulated run's check wrote a malformed line `{l}`"))
}

/// Parses the findings text.
pub fn parse(text: &str) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    let mut ended = false;
    for l in text.lines() {
        if l == "end" {
            ended = true;
            break;
        }
        if let (Some(pc), Some(last)) = (l.strip_prefix("T "), out.last_mut()) {
            let last: &mut Finding = last;
            last.trail.push(u64::from_str_radix(pc, 16).map_err(|_| bad(l))?);
            continue;
        }
        let w: Vec<&str> = l.split_whitespace().collect();
        if w.len() != 13 || w[0] != "F" {
            return Err(bad(l));
        }
        let dec = |i: usize| w[i].parse::<i64>().map_err(|_| bad(l));
        let hex = |i: usize| u64::from_str_radix(w[i], 16).map_err(|_| bad(l));
        let what = match dec(7)? {
            0 => What::None,
            1 => What::Tcm,
            2 => What::Malloc,
            3 => What::Calloc,
            4 | 5 => What::Tensor,
            6 => What::Library,
            100 => What::Input(dec(10)? as u32),
            101 => What::Output,
            _ => return Err(bad(l)),
        };
        out.push(Finding {
            kind: Kind::from_code(dec(1)? as u32).ok_or_else(|| bad(l))?,
            cpu: dec(2)? as u32,
            pc: hex(3)?,
            addr: hex(4)?,
            size: dec(5)? as u64,
            store: dec(6)? != 0,
            what,
            lo: hex(8)?,
            hi: hex(9)?,
            count: dec(11)? as u64,
            other: u32::try_from(dec(12)?).ok(),
            trail: Vec::new(),
        });
    }
    if !ended {
        return Err(Error::new(ErrorKind::Environment, "the emulated run's check ended early (no `end` line in its findings)".to_owned()));
    }
    out.sort_by_key(|f| (f.kind, f.cpu));
    Ok(out)
}

/// Reads the findings file.
pub fn read(path: &Path) -> Result<Vec<Finding>> {
    parse(&std::fs::read_to_string(path).map_err(|e| Error::io("read", path, e))?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_stack_first_then_by_kind_and_core_and_an_early_end_is_an_error() {
        let t = "F 7 1 60001000 67000010 66000 1 0 0 0 0 12 -1\nF 1 0 60000abc 60800040 4 0 1 60800040 60800080 0 16 -1\nT 60000ab0\nT 60000aa0\nend\n";
        let f = parse(t).unwrap();
        assert_eq!((f[1].kind, f[1].what, f[1].count, f[1].other), (Kind::Uninitialised, What::Tcm, 16, None));
        assert_eq!((f[0].kind, f[0].cpu, f[0].size), (Kind::Stack, 1, 66000));
        assert_eq!(f[1].trail, [0x6000_0ab0, 0x6000_0aa0]);
        assert!(parse("F 1 0\nend\n").is_err());
        assert!(parse("").is_err());
    }
}
