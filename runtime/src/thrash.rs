//! Thrash detection for the three dynamic translation windows
//! (diagnostics; updated with the `stats` feature).
//!
//! A miss that installs a region evicted among the last
//! [`THRASH_HISTORY`] evictions is a *re-miss*: the working set is larger
//! than the three windows. A kernel touching four regions round-robin
//! re-misses on every access after the first four; one touching three
//! never does. The regions re-missed most are kept to name them.

/// Evictions remembered (defined here).
pub const THRASH_HISTORY: usize = 8;
/// Regions whose re-misses are counted by name (defined here).
pub const THRASH_REGIONS: usize = 8;
/// Re-misses at which a run is reported as thrashing (defined here).
pub const THRASH_THRESHOLD: u64 = 16;

/// Re-miss counters of one core.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ThrashStats {
    evicted: [Option<u64>; THRASH_HISTORY],
    next: usize,
    /// Misses that re-installed a recently evicted region.
    pub remisses: u64,
    regions: [Option<(u64, u64)>; THRASH_REGIONS],
}

impl ThrashStats {
    /// Nothing seen.
    pub const fn new() -> Self {
        Self { evicted: [None; THRASH_HISTORY], next: 0, remisses: 0, regions: [None; THRASH_REGIONS] }
    }

    /// A miss installed `region`, evicting `evicted` (None: the window was
    /// empty).
    pub fn on_miss(&mut self, region: u64, evicted: Option<u64>) {
        if self.evicted.contains(&Some(region)) {
            self.remisses += 1;
            self.count(region);
        }
        if let Some(e) = evicted {
            if let Some(slot) = self.evicted.get_mut(self.next) {
                *slot = Some(e);
            }
            self.next = (self.next + 1) % THRASH_HISTORY;
        }
    }

    fn count(&mut self, region: u64) {
        if let Some((_, n)) = self.regions.iter_mut().flatten().find(|(r, _)| *r == region) {
            *n += 1;
            return;
        }
        // A free slot, else the least re-missed one.
        let mut victim = 0;
        for (i, s) in self.regions.iter().enumerate() {
            match s {
                None => {
                    victim = i;
                    break;
                }
                Some((_, n)) if self.regions.get(victim).copied().flatten().is_some_and(|(_, m)| *n < m) => victim = i,
                _ => {}
            }
        }
        if let Some(slot) = self.regions.get_mut(victim) {
            *slot = Some((region, 1));
        }
    }

    /// Whether the re-misses reach [`THRASH_THRESHOLD`].
    pub fn is_thrashing(&self) -> bool {
        self.remisses >= THRASH_THRESHOLD
    }

    /// The regions re-missed (SoC base, re-misses), most first.
    pub fn regions(&self) -> impl Iterator<Item = (u64, u64)> {
        let mut r = self.regions;
        // Most re-misses first, then by address: a bubble sort over the
        // 8 slots by iterators (core's sort carries an ordering-violation
        // panic); the order is total on the distinct regions, so the result
        // is the one `sort_unstable_by` gives.
        let after = |a: &Option<(u64, u64)>, b: &Option<(u64, u64)>| b.map(|x| x.1).cmp(&a.map(|x| x.1)).then(a.map(|x| x.0).cmp(&b.map(|x| x.0))).is_gt();
        for _ in 0..THRASH_REGIONS {
            let mut it = r.iter_mut();
            let Some(mut prev) = it.next() else { break };
            for x in it {
                if after(prev, x) {
                    core::mem::swap(prev, x);
                }
                prev = x;
            }
        }
        r.into_iter().flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round-robin over `n` regions through 3 windows with LRU-free
    /// round-robin eviction, as the translator does.
    fn run(n: u64, accesses: usize) -> ThrashStats {
        let mut t = ThrashStats::new();
        let mut windows: [Option<u64>; 3] = [None; 3];
        let mut victim = 0;
        for i in 0..accesses {
            let region = (i as u64 % n) << 24;
            if !windows.contains(&Some(region)) {
                t.on_miss(region, windows[victim]);
                windows[victim] = Some(region);
                victim = (victim + 1) % 3;
            }
        }
        t
    }

    #[test]
    fn four_regions_thrash_three_do_not() {
        let t = run(4, 400);
        assert!(t.is_thrashing());
        assert_eq!(t.remisses, 396);
        assert_eq!(t.regions().count(), 4);
        let t = run(3, 400);
        assert!(!t.is_thrashing());
        assert_eq!(t.remisses, 0);
    }
}
