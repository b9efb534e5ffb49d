//! One core's errors in the order they happened, bounded: what the
//! simulator's verdict and report read after a run, so an error a kernel
//! ignored is not lost behind a later one (or behind no error at all).

use crate::Error;

/// How many errors one run keeps per core; later ones are only counted.
pub const ERROR_LOG_CAPACITY: usize = 16;

/// The errors recorded on one core since the log was last cleared.
#[derive(Clone, Debug, Default)]
pub struct ErrorLog {
    entries: heapless::Vec<Error, ERROR_LOG_CAPACITY>,
    dropped: u32,
}

impl ErrorLog {
    /// An empty log.
    pub const fn new() -> Self {
        Self { entries: heapless::Vec::new(), dropped: 0 }
    }

    /// Appends `e` (counted only, once the log is full).
    pub fn record(&mut self, e: Error) {
        if self.entries.push(e).is_err() {
            self.dropped = self.dropped.saturating_add(1);
        }
    }

    /// Empties the log (at the start of a run).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.dropped = 0;
    }

    /// The kept errors, oldest first.
    pub fn entries(&self) -> &[Error] {
        &self.entries
    }

    /// How many errors came after the log was full.
    pub fn dropped(&self) -> u32 {
        self.dropped
    }

    /// The first error recorded, if any.
    pub fn first(&self) -> Option<Error> {
        self.entries.first().copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_order_counts_overflow_and_clears() {
        let mut l = ErrorLog::new();
        assert_eq!(l.first(), None);
        l.record(Error::DmaFault);
        l.record(Error::ElementTypeMismatch);
        assert_eq!(l.entries(), &[Error::DmaFault, Error::ElementTypeMismatch]);
        for _ in 0..ERROR_LOG_CAPACITY {
            l.record(Error::OutOfMemory);
        }
        assert_eq!(l.entries().len(), ERROR_LOG_CAPACITY);
        assert_eq!(l.dropped(), 2);
        assert_eq!(l.first(), Some(Error::DmaFault));
        l.clear();
        assert!(l.entries().is_empty() && l.dropped() == 0);
    }
}
