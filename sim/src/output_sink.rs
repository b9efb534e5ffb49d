//! A file the output goes to as soon as a run's kernels end
//! ([`Simulator::set_output_sink`](super::simulator::Simulator::set_output_sink)):
//! written on a thread of its own while the verdict runs, so `customop run`
//! does not copy the output after the verdict, and its disk writes have
//! started by the time the caller flushes the file.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::thread::JoinHandle;

/// Where the output goes: `file` from byte `offset` (after its header).
#[derive(Debug)]
pub struct Sink {
    file: File,
    offset: u64,
}

/// A write in progress (or already over); finished (its thread joined)
/// when dropped.
pub enum Writing {
    /// On its thread.
    Running(Option<JoinHandle<io::Result<()>>>),
    /// Done where it started (no thread could be made, or no file).
    Done(Option<io::Result<()>>),
}

/// What is written at a time, and how much before its disk writes start.
const PIECE: usize = 1 << 20;
const WRITEBACK_STEP: usize = 8 << 20;

impl Sink {
    /// A sink writing into `file` from `offset`.
    pub fn new(file: File, offset: u64) -> Self {
        Self { file, offset }
    }

    /// Starts writing `len` bytes from `src` on a thread of its own (or
    /// here, when no thread can be made).
    ///
    /// # Safety
    /// `src` must be readable for `len` bytes, and nothing may write or
    /// unmap them, until the returned [`Writing`] is finished or dropped.
    pub unsafe fn start(&self, src: *const u8, len: usize) -> Writing {
        let file = match self.file.try_clone() {
            Ok(f) => f,
            Err(e) => return Writing::done(Err(e)),
        };
        let (at, offset) = (src as usize, self.offset);
        // SAFETY: the caller keeps the bytes readable and unchanged until
        // the Writing is finished, which joins this thread.
        let job = move || write_all(&file, unsafe { std::slice::from_raw_parts(at as *const u8, len) }, offset);
        match std::thread::Builder::new().name("output-sink".into()).spawn(job) {
            Ok(h) => Writing::Running(Some(h)),
            // SAFETY: as above, on this thread.
            Err(_) => Writing::done(write_all(&self.file, unsafe { std::slice::from_raw_parts(src, len) }, self.offset)),
        }
    }
}

impl Writing {
    /// A write that already ended with `r`.
    fn done(r: io::Result<()>) -> Self {
        Self::Done(Some(r))
    }

    /// Waits for the write; its result (a panicked writer is an error).
    pub fn finish(mut self) -> io::Result<()> {
        self.join()
    }

    fn join(&mut self) -> io::Result<()> {
        match self {
            Self::Running(h) => match h.take() {
                Some(h) => h.join().unwrap_or_else(|_| Err(io::Error::other("the output's writing thread panicked"))),
                None => Ok(()),
            },
            Self::Done(r) => r.take().unwrap_or(Ok(())),
        }
    }
}

impl Drop for Writing {
    fn drop(&mut self) {
        let _ = self.join();
    }
}

/// `bytes` into `file` at `offset`, a piece at a time, the disk writes of
/// each 8 MiB started as they are written.
fn write_all(file: &File, bytes: &[u8], offset: u64) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    let mut started = 0usize;
    for (i, piece) in bytes.chunks(PIECE).enumerate() {
        file.write_all_at(piece, offset + (i * PIECE) as u64)?;
        let end = i * PIECE + piece.len();
        if end - started >= WRITEBACK_STEP || end == bytes.len() {
            // SAFETY: sync_file_range on a descriptor this function's
            // caller owns; it only starts writeback (no pointer). Best
            // effort: the caller's flush reports any failure.
            let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), (offset + started as u64) as i64, (end - started) as i64, libc::SYNC_FILE_RANGE_WRITE) };
            started = end;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bytes_land_after_the_offset_in_pieces_and_a_failure_is_returned() {
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("sink");
        let f = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        let data: Vec<u8> = (0..3 * PIECE + 17).map(|i| (i % 251) as u8).collect();
        // SAFETY: `data` lives, unchanged, until the write is finished.
        let w = unsafe { Sink::new(f.try_clone().unwrap(), 128).start(data.as_ptr(), data.len()) };
        w.finish().unwrap();
        let back = std::fs::read(&path).unwrap();
        assert_eq!((back.len(), &back[128..]), (128 + data.len(), &data[..]));
        // A file open read-only cannot take it: the error comes back.
        let ro = File::open(&path).unwrap();
        // SAFETY: as above.
        assert!(unsafe { Sink::new(ro, 0).start(data.as_ptr(), 10) }.finish().is_err());
        let _ = std::fs::remove_file(&path);
    }
}
