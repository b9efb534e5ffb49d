//! What a run's process writes to stderr, kept within a bound: a kernel
//! that prints without end (the host's own `fprintf(stderr)`, which no
//! device printf buffer limits) must not take the caller's memory with
//! it. The start is kept (what the kernel printed first) and the end (a
//! crash report is the last thing written), with a line saying how much
//! between them was left out.

/// Bytes kept from the start and from the end.
const HEAD: usize = 1 << 20;
const TAIL: usize = 1 << 20;

/// A run's stderr: its first [`HEAD`] bytes, its last [`TAIL`] bytes,
/// and how many between were left out.
#[derive(Debug, Default)]
pub struct StderrLog {
    head: Vec<u8>,
    /// The end, with up to TAIL bytes more than it keeps (cut back when
    /// it reaches twice the bound, so a byte is moved at most once).
    tail: Vec<u8>,
    left_out: u64,
}

impl StderrLog {
    /// Appends what the process wrote.
    pub fn push(&mut self, mut bytes: &[u8]) {
        if self.head.len() < HEAD {
            let n = bytes.len().min(HEAD - self.head.len());
            self.head.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
        }
        self.tail.extend_from_slice(bytes);
        if self.tail.len() >= 2 * TAIL {
            let cut = self.tail.len() - TAIL;
            self.tail.drain(..cut);
            self.left_out += cut as u64;
        }
    }

    /// The text: all of it, or its start, a line saying how many bytes
    /// were left out, and its end (invalid UTF-8 replaced).
    pub fn into_text(mut self) -> String {
        if self.tail.len() > TAIL {
            let cut = self.tail.len() - TAIL;
            self.tail.drain(..cut);
            self.left_out += cut as u64;
        }
        let mut s = String::from_utf8_lossy(&self.head).into_owned();
        if self.left_out > 0 {
            if !s.ends_with('\n') {
                s.push('\n');
            }
            s.push_str(&format!("[... {} bytes of the run's stderr left out here (the first and last {} MiB are kept) ...]\n", self.left_out, TAIL >> 20));
        }
        s.push_str(&String::from_utf8_lossy(&self.tail));
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_short_stderr_is_kept_whole() {
        let mut l = StderrLog::default();
        l.push(b"one\n");
        l.push(b"two\n");
        assert_eq!(l.into_text(), "one\ntwo\n");
    }

    #[test]
    fn a_long_stderr_keeps_its_start_and_its_end_and_says_what_is_left_out() {
        let mut l = StderrLog::default();
        l.push(b"first line\n");
        let line = [b'x'; 999];
        for _ in 0..10_000 {
            l.push(&line);
            l.push(b"\n");
        }
        l.push(b"crash report\n");
        let total = 11 + 10_000 * 1000 + 13;
        let t = l.into_text();
        assert!(t.starts_with("first line\nxxx"));
        assert!(t.ends_with("xxx\ncrash report\n"));
        let kept = HEAD + TAIL;
        assert!(t.contains(&format!("[... {} bytes of the run's stderr left out here", total - kept)), "{}", &t[HEAD - 10..HEAD + 120]);
        assert!(t.len() < kept + 200);
    }
}
