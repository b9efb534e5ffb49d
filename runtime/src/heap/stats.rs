//! Use counters every heap keeps.

/// Current use and high-water mark of one heap, in bytes as handed out
/// (rounded to the heap's granule), plus call counts.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct HeapStats {
    /// Bytes the heap manages.
    pub capacity: u64,
    /// Bytes allocated now.
    pub in_use: u64,
    /// Largest `in_use` ever seen.
    pub high_water: u64,
    /// Successful allocations.
    pub allocs: u64,
    /// Successful frees.
    pub frees: u64,
    /// Refused requests (out of memory, table full, bad arguments).
    pub failures: u64,
}

impl HeapStats {
    /// Starts a new measuring period (a simulator run): the high-water
    /// mark restarts from the current use, the call counts from zero.
    pub fn restart(&mut self) {
        self.high_water = self.in_use;
        self.allocs = 0;
        self.frees = 0;
        self.failures = 0;
    }

    pub(crate) fn on_alloc(&mut self, bytes: u64) {
        self.in_use += bytes;
        self.allocs += 1;
        self.high_water = self.high_water.max(self.in_use);
    }

    pub(crate) fn on_free(&mut self, bytes: u64) {
        self.in_use -= bytes;
        self.frees += 1;
    }

    pub(crate) fn on_failure<T>(&mut self, e: crate::Error) -> crate::Result<T> {
        self.failures += 1;
        Err(e)
    }
}
