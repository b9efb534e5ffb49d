//! The byte layout the tool's processes hand each other (a one-shot
//! child's result, the worker's requests): little-endian numbers and
//! length-prefixed byte strings, written with [`put_bytes`] and read back
//! by a [`Reader`] that answers `None` on a cut or foreign record instead
//! of panicking. Hand-written: two private formats of a few fields, where
//! a serialisation crate would add a dependency and a schema for nothing.

/// Appends `bytes` with its length (u64) in front.
pub(crate) fn put_bytes(b: &mut Vec<u8>, bytes: &[u8]) {
    b.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    b.extend_from_slice(bytes);
}

/// Reads a record front to back.
pub(crate) struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    pub(crate) fn new(b: &'a [u8]) -> Self {
        Self(b)
    }

    /// The next `n` bytes.
    pub(crate) fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (h, t) = self.0.split_at_checked(n)?;
        self.0 = t;
        Some(h)
    }

    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }

    pub(crate) fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }

    pub(crate) fn i32(&mut self) -> Option<i32> {
        Some(i32::from_le_bytes(self.array()?))
    }

    pub(crate) fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.array()?))
    }

    pub(crate) fn i64(&mut self) -> Option<i64> {
        Some(i64::from_le_bytes(self.array()?))
    }

    pub(crate) fn f64(&mut self) -> Option<f64> {
        Some(f64::from_le_bytes(self.array()?))
    }

    /// A byte string [`put_bytes`] wrote.
    pub(crate) fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = usize::try_from(self.u64()?).ok()?;
        self.take(n)
    }

    /// A byte string of u64s.
    pub(crate) fn u64s(&mut self) -> Option<Vec<u64>> {
        Some(self.bytes()?.as_chunks::<8>().0.iter().map(|c| u64::from_le_bytes(*c)).collect())
    }

    /// A byte string of u16s.
    pub(crate) fn u16s(&mut self) -> Option<Vec<u16>> {
        Some(self.bytes()?.as_chunks::<2>().0.iter().map(|c| u16::from_le_bytes(*c)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_put_reads_back_and_a_cut_record_reads_as_none() {
        let mut b = vec![7];
        b.extend_from_slice(&(-3i32).to_le_bytes());
        put_bytes(&mut b, &[1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0]);
        b.extend_from_slice(&1.5f64.to_le_bytes());
        let mut r = Reader::new(&b);
        assert_eq!((r.u8(), r.i32(), r.u64s(), r.f64()), (Some(7), Some(-3), Some(vec![1, 2]), Some(1.5)));
        assert_eq!(r.u8(), None, "past the end");
        for n in 0..b.len() {
            let mut r = Reader::new(&b[..n]);
            let whole = r.u8().is_some() && r.i32().is_some() && r.u64s().is_some() && r.f64().is_some();
            assert!(!whole, "a record cut at {n} bytes read whole");
        }
        // A length past the end is no string, not a panic.
        let mut huge = Vec::new();
        huge.extend_from_slice(&u64::MAX.to_le_bytes());
        assert_eq!(Reader::new(&huge).bytes(), None);
    }
}
