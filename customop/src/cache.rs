//! The rebuild cache: an object is recompiled only when its source, a
//! header it includes (the compiler's `-MMD` list), the compiler or the
//! flags changed. Each object has a stamp file beside it holding the
//! command's key and each input's content hash.
//!
//! The hash is 64-bit FNV-1a: a change detector, not a defence against
//! crafted collisions (the inputs are the user's own files).

use std::path::{Path, PathBuf};

/// 64-bit FNV-1a of `bytes`, continuing from `h`.
pub fn fnv1a(mut h: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// FNV-1a's offset basis.
pub const FNV_BASIS: u64 = 0xcbf2_9ce4_8422_2325;

/// The hash of a string.
pub fn hash_str(s: &str) -> u64 {
    fnv1a(FNV_BASIS, s.as_bytes())
}

/// The content hash of a regular file; None if it is unreadable or not a
/// regular file (then a stamp listing it is never current, and a build
/// does not list it). Opened without blocking (a FIFO's open would wait
/// for a writer) and checked before it is read: a device such as
/// `/dev/zero` is never read, which would never end.
pub fn hash_file(p: &Path) -> Option<u64> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let mut f = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK | libc::O_CLOEXEC).open(p).ok()?;
    let m = f.metadata().ok()?;
    if !m.is_file() {
        return None;
    }
    let mut h = FNV_BASIS;
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Some(h),
            Ok(n) => h = fnv1a(h, &buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => return None,
        }
    }
}

/// What an object (or a linked library) was built from, and what it is.
#[derive(Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Hash of the compiler, flags and source path.
    pub command: u64,
    /// The content hash of the output this stamp was written for: a stamp
    /// never vouches for a file some other build put there.
    pub output: u64,
    /// Every input (source and headers) with its content hash.
    pub inputs: Vec<(PathBuf, u64)>,
}

impl Stamp {
    /// Parses a stamp file's text. Lines end at `\n` only: a carriage
    /// return is a legal byte of a Linux path (`str::lines` would drop it
    /// and vouch for a different file).
    pub fn parse(text: &str) -> Option<Self> {
        let mut lines = text.split_terminator('\n');
        let command = u64::from_str_radix(lines.next()?.strip_prefix("command ")?, 16).ok()?;
        let output = u64::from_str_radix(lines.next()?.strip_prefix("output ")?, 16).ok()?;
        let mut inputs = Vec::new();
        for l in lines {
            let (h, p) = l.split_once(' ')?;
            if h.len() != 16 || p.is_empty() {
                return None;
            }
            inputs.push((PathBuf::from(p), u64::from_str_radix(h, 16).ok()?));
        }
        Some(Self { command, output, inputs })
    }

    /// The stamp file's text.
    pub fn render(&self) -> String {
        let mut s = format!("command {:016x}\noutput {:016x}\n", self.command, self.output);
        for (p, h) in &self.inputs {
            s.push_str(&format!("{h:016x} {}\n", p.display()));
        }
        s
    }

    /// Whether `stamp_file` says `output` is current for `command` made
    /// from `sources`: same command, `output` the very file it was written
    /// for, every one of `sources` among its inputs (a stamp someone else
    /// put beside an object, listing some stable file, vouches for nothing
    /// made from this build's sources), every input unchanged.
    pub fn is_current(stamp_file: &Path, command: u64, output: &Path, sources: &[PathBuf]) -> bool {
        let Some(s) = std::fs::read_to_string(stamp_file).ok().and_then(|t| Self::parse(&t)) else { return false };
        s.command == command
            && !s.inputs.is_empty()
            && sources.iter().all(|src| s.inputs.iter().any(|(p, _)| p == src))
            && hash_file(output) == Some(s.output)
            && s.inputs.iter().all(|(p, h)| hash_file(p) == Some(*h))
    }
}

/// The inputs listed in a make-style dependency file (`-MMD -MF`).
pub fn depfile_inputs(text: &str) -> Vec<PathBuf> {
    let joined = text.replace("\\\n", " ");
    let Some((_, deps)) = joined.split_once(": ") else { return Vec::new() };
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = deps.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            // `\ ` is an escaped space inside a path.
            '\\' if chars.peek() == Some(&' ') => {
                cur.push(' ');
                chars.next();
            }
            ' ' | '\n' | '\t' | '\r' => {
                if !cur.is_empty() {
                    out.push(PathBuf::from(std::mem::take(&mut cur)));
                }
            }
            c => cur.push(c),
        }
    }
    if !cur.is_empty() {
        out.push(PathBuf::from(cur));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn depfiles_and_stamps_round_trip() {
        let d = depfile_inputs("obj/a.o: src/a.cpp \\\n include/torch/torch.h my\\ dir/x.h\n");
        assert_eq!(d, [PathBuf::from("src/a.cpp"), "include/torch/torch.h".into(), "my dir/x.h".into()]);
        let s = Stamp { command: 0xabc, output: 5, inputs: vec![("a b.cpp".into(), 7)] };
        assert_eq!(Stamp::parse(&s.render()), Some(s));
        assert_eq!(Stamp::parse("command 1\n"), None);
        // A path ending in a carriage return is kept (found by the fuzzer).
        let cr = Stamp { command: 1, output: 2, inputs: vec![("src\r".into(), 3)] };
        assert_eq!(Stamp::parse(&cr.render()), Some(cr));
        assert_eq!(hash_str("a"), 0xaf63dc4c8601ec8c);
    }

    #[test]
    fn only_regular_files_are_hashed() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.h");
        std::fs::write(&f, b"abc").unwrap();
        assert_eq!(hash_file(&f), Some(fnv1a(FNV_BASIS, b"abc")));
        // A device and a FIFO: never read (one would never end, the other
        // never open), so never current.
        assert_eq!(hash_file(Path::new("/dev/zero")), None);
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert_eq!(hash_file(&fifo), None);
        assert_eq!(hash_file(d.path()), None);
        let stamp = d.path().join("o.stamp");
        let out = d.path().join("o");
        std::fs::write(&out, b"obj").unwrap();
        let s = Stamp { command: 1, output: hash_file(&out).unwrap(), inputs: vec![("/dev/zero".into(), 0)] };
        std::fs::write(&stamp, s.render()).unwrap();
        assert!(!Stamp::is_current(&stamp, 1, &out, &[]));
    }

    #[test]
    fn a_stamp_vouches_only_for_what_was_made_from_the_sources_it_lists() {
        let d = tempfile::tempdir().unwrap();
        let (src, other, out, stamp) = (d.path().join("k.cpp"), d.path().join("stable.h"), d.path().join("k.o"), d.path().join("k.stamp"));
        for (p, b) in [(&src, b"int k;".as_slice()), (&other, b"// h"), (&out, b"obj")] {
            std::fs::write(p, b).unwrap();
        }
        let stamp_of = |inputs: &[&PathBuf]| Stamp {
            command: 7,
            output: hash_file(&out).unwrap(),
            inputs: inputs.iter().map(|p| ((*p).clone(), hash_file(p).unwrap())).collect(),
        };
        // A planted stamp that lists only some stable file: not current for k.cpp.
        std::fs::write(&stamp, stamp_of(&[&other]).render()).unwrap();
        assert!(!Stamp::is_current(&stamp, 7, &out, std::slice::from_ref(&src)));
        // The build's own stamp, which lists the source: current.
        std::fs::write(&stamp, stamp_of(&[&src, &other]).render()).unwrap();
        assert!(Stamp::is_current(&stamp, 7, &out, std::slice::from_ref(&src)));
    }
}
