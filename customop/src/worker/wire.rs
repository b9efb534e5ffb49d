//! What crosses the worker's socket: the request (op, cores, arguments
//! staged in the shared memory, labels), and `isolate`'s tagged frames.

use super::Staged;
use crate::byte_record::{put_bytes, Reader};
use crate::npy::Dtype;
use crate::schema::ArgKind;
use crate::shape::Value;
use crate::stderr_log::StderrLog;
use std::io;
use std::os::fd::RawFd;

/// What a read gave.
#[derive(PartialEq, Eq)]
pub(super) enum Read {
    /// Bytes.
    Data,
    /// The end of file, or an error.
    End,
    /// Nothing now (a non-blocking descriptor, or a signal).
    Nothing,
}

/// Appends what `fd` has now to `buf`, reading into its spare room (not
/// a zeroed buffer).
pub(super) fn read_some(fd: RawFd, buf: &mut Vec<u8>) -> Read {
    buf.reserve(1 << 16);
    let room = buf.spare_capacity_mut();
    // SAFETY: reading into the vector's spare capacity, of its length.
    let n = unsafe { libc::read(fd, room.as_mut_ptr().cast(), room.len()) };
    if n > 0 {
        // SAFETY: `read` initialised the first n bytes of the spare room.
        unsafe { buf.set_len(buf.len() + n as usize) };
        return Read::Data;
    }
    match io::Error::last_os_error().kind() {
        _ if n == 0 => Read::End,
        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock => Read::Nothing,
        _ => Read::End,
    }
}

/// [`read_some`] into a run's stderr log (kept within its bound).
pub(super) fn read_log(fd: RawFd, log: &mut StderrLog) -> Read {
    let mut chunk = Vec::with_capacity(1 << 16);
    let r = read_some(fd, &mut chunk);
    log.push(&chunk);
    r
}

/// The first whole frame of `b`: tag, payload, bytes it spans.
pub(super) fn next_frame(b: &[u8]) -> Option<(u8, &[u8], usize)> {
    let len = usize::try_from(u64::from_le_bytes(b.get(1..9)?.try_into().ok()?)).ok()?;
    let payload = b.get(9..9usize.checked_add(len)?)?;
    Some((b[0], payload, 9 + len))
}

pub(super) fn write_all(fd: RawFd, mut b: &[u8]) -> io::Result<()> {
    while !b.is_empty() {
        // SAFETY: writing initialised bytes to our own socket.
        let n = unsafe { libc::send(fd, b.as_ptr().cast(), b.len(), libc::MSG_NOSIGNAL) };
        if n < 0 {
            let e = io::Error::last_os_error();
            if e.kind() == io::ErrorKind::Interrupted {
                continue;
            }
            return Err(e);
        }
        b = &b[n as usize..];
    }
    Ok(())
}

/// Reads exactly `buf.len()` bytes; false at end of file.
pub(super) fn read_exact(fd: RawFd, buf: &mut [u8]) -> bool {
    let mut got = 0;
    while got < buf.len() {
        // SAFETY: reading into the unfilled part of a live buffer.
        let n = unsafe { libc::read(fd, buf[got..].as_mut_ptr().cast(), buf.len() - got) };
        if n < 0 && io::Error::last_os_error().kind() == io::ErrorKind::Interrupted {
            continue;
        }
        if n <= 0 {
            return false;
        }
        got += n as usize;
    }
    true
}

/// A request as bytes (read back by [`decode_request`]).
pub(super) fn encode_request(op: usize, cores: u32, writer_map: bool, region: usize, staged: &[Staged], labels: &[String]) -> Vec<u8> {
    let mut b = Vec::new();
    // Bit 32 of the cores word: the run keeps its output's writer map.
    for v in [op as u64, u64::from(cores) | (u64::from(writer_map) << 32), region as u64, staged.len() as u64] {
        b.extend_from_slice(&v.to_le_bytes());
    }
    for (s, label) in staged.iter().zip(labels) {
        match s {
            Staged::Tensor { dtype, shape, at, len } => {
                b.push(0);
                b.push(dtype.code());
                put_bytes(&mut b, &shape.iter().flat_map(|d| d.to_le_bytes()).collect::<Vec<_>>());
                b.extend_from_slice(&(*at as u64).to_le_bytes());
                b.extend_from_slice(&(*len as u64).to_le_bytes());
            }
            Staged::Value { kind, dtype, bytes, value } => {
                b.push(1);
                b.push(kind.code());
                b.push(dtype.code());
                put_bytes(&mut b, bytes);
                match value {
                    Value::Int(i) => {
                        b.push(0);
                        b.extend_from_slice(&i.to_le_bytes());
                    }
                    Value::Float(f) => {
                        b.push(1);
                        b.extend_from_slice(&f.to_le_bytes());
                    }
                    Value::Tensor(..) => b.push(2),
                }
            }
        }
        put_bytes(&mut b, label.as_bytes());
    }
    b
}

/// A decoded request: op index, cores, whether the run keeps its
/// output's writer map, region size, arguments, labels.
pub(super) type Request = (usize, u32, bool, usize, Vec<Staged>, Vec<String>);

pub(super) fn decode_request(b: &[u8]) -> Option<Request> {
    let mut r = Reader::new(b);
    let kind_of =
        |c: u8| [ArgKind::Tensor, ArgKind::Scalar, ArgKind::Int, ArgKind::Float, ArgKind::LongLong, ArgKind::Double].into_iter().find(|k| k.code() == c);
    let (op, cores_word, region, n) = (r.u64()? as usize, r.u64()?, r.u64()? as usize, r.u64()? as usize);
    let (cores, writer_map) = (cores_word as u32, cores_word >> 32 & 1 == 1);
    let (mut staged, mut labels) = (Vec::new(), Vec::new());
    for _ in 0..n {
        let s = match r.u8()? {
            0 => {
                let dtype = Dtype::marshallable(r.u8()?)?;
                let shape = r.u64s()?;
                let (at, len) = (r.u64()? as usize, r.u64()? as usize);
                Staged::Tensor { dtype, shape, at, len }
            }
            _ => {
                let kind = kind_of(r.u8()?)?;
                let dtype = Dtype::marshallable(r.u8()?)?;
                let v = r.bytes()?.to_vec();
                let value = match r.u8()? {
                    0 => Value::Int(r.i64()?),
                    1 => Value::Float(r.f64()?),
                    _ => return None,
                };
                Staged::Value { kind, dtype, bytes: v, value }
            }
        };
        staged.push(s);
        labels.push(String::from_utf8_lossy(r.bytes()?).into_owned());
    }
    Some((op, cores, writer_map, region, staged, labels))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::isolate::FRAME_PHASE;

    #[test]
    fn a_request_crosses_the_socket_whole() {
        let staged = vec![
            Staged::Tensor { dtype: Dtype::Fp32, shape: vec![2, 3], at: 64, len: 24 },
            Staged::Value { kind: ArgKind::Scalar, dtype: Dtype::Int64, bytes: 7i64.to_le_bytes().to_vec(), value: Value::Int(7) },
            Staged::Value { kind: ArgKind::Float, dtype: Dtype::Fp32, bytes: 0.5f32.to_le_bytes().to_vec(), value: Value::Float(0.5) },
        ];
        let labels = vec!["a <f4 array of shape [2, 3]".to_owned(), "7".to_owned(), "0.5".to_owned()];
        let req = encode_request(3, 8, true, 88, &staged, &labels);
        let (op, cores, writer_map, region, back, names) = decode_request(&req).unwrap();
        assert_eq!((op, cores, writer_map, region, &names), (3, 8, true, 88, &labels));
        assert!(!decode_request(&encode_request(3, 8, false, 88, &staged, &labels)).unwrap().2);
        assert_eq!(format!("{back:?}"), format!("{staged:?}"));
        // A cut request does not decode (and does not panic).
        for n in 0..req.len() {
            assert!(decode_request(&req[..n]).is_none(), "{n}");
        }
    }

    #[test]
    fn frames_are_read_whole_or_not_at_all() {
        let mut b = vec![FRAME_PHASE];
        b.extend_from_slice(&1u64.to_le_bytes());
        b.push(2);
        assert_eq!(next_frame(&b), Some((FRAME_PHASE, &[2u8][..], 10)));
        assert_eq!(next_frame(&b[..9]), None);
    }
}
