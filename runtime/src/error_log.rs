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
    /// Entries (and dropped ones) before these counts were acknowledged by
    /// the kernel (`neuron_clear_error`: it saw and handled them).
    acked: usize,
    acked_dropped: u32,
}

impl ErrorLog {
    /// An empty log.
    pub const fn new() -> Self {
        Self { entries: heapless::Vec::new(), dropped: 0, acked: 0, acked_dropped: 0 }
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
        self.acked = 0;
        self.acked_dropped = 0;
    }

    /// Marks every error so far as handled by the kernel (it called
    /// `neuron_clear_error` after seeing them); they stay in the log.
    pub fn acknowledge(&mut self) {
        self.acked = self.entries.len();
        self.acked_dropped = self.dropped;
    }

    /// How many of [`entries`](Self::entries) were acknowledged.
    pub fn acknowledged(&self) -> usize {
        self.acked
    }

    /// The first error not acknowledged, if any (a dropped one counts as
    /// one, but is not known: `None` then means only that none is kept).
    pub fn first_unacknowledged(&self) -> Option<Error> {
        self.entries.get(self.acked).copied()
    }

    /// Whether an error came after the last acknowledgement.
    pub fn has_unacknowledged(&self) -> bool {
        self.entries.len() > self.acked || self.dropped > self.acked_dropped
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
    fn acknowledged_errors_stay_but_later_ones_count() {
        let mut l = ErrorLog::new();
        l.record(Error::IndexOutOfBounds);
        l.acknowledge();
        l.record(Error::DmaFault);
        assert_eq!(l.entries(), &[Error::IndexOutOfBounds, Error::DmaFault]);
        assert_eq!((l.acknowledged(), l.first_unacknowledged()), (1, Some(Error::DmaFault)));
    }

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
        assert!(l.has_unacknowledged());
        l.acknowledge();
        assert!(!l.has_unacknowledged() && l.first_unacknowledged().is_none());
        l.clear();
        assert!(l.entries().is_empty() && l.dropped() == 0);
    }
}
