//! The per-core table of coherency enforcers, keyed by a tensor's storage
//! address. Kernels receive tensors by value in C, so the enforcer cannot
//! live in the tensor; every copy of a tensor shares the entry of its
//! storage. Fixed size, no allocation.

use super::coherency::{AccessorKind, Admission, CoherencePolicy, CoherencyEnforcer};
use crate::error::{Error, Result};

/// Tensors tracked at once per core (defined here).
pub const DEFAULT_TRACKED_TENSORS: usize = 32;

/// The enforcers of one core. An entry exists while its tensor has live
/// accessors or a policy other than `COHERENT`.
#[derive(Clone, Debug)]
pub struct CoherencyTable<const N: usize = DEFAULT_TRACKED_TENSORS> {
    keys: [u64; N],
    entries: [CoherencyEnforcer; N],
    /// Keys at and past this index are all empty: a kernel tracks a few
    /// tensors, so lookups scan those, not all `N`.
    used: usize,
}

impl<const N: usize> Default for CoherencyTable<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<const N: usize> CoherencyTable<N> {
    /// Empty.
    pub const fn new() -> Self {
        Self { keys: [0; N], entries: [CoherencyEnforcer::new(); N], used: 0 }
    }

    /// The keys that may be in use.
    fn live_keys(&self) -> &[u64] {
        self.keys.get(..self.used).unwrap_or(&self.keys)
    }

    fn find(&self, addr: u64) -> Option<usize> {
        if addr == 0 {
            return None;
        }
        self.live_keys().iter().position(|k| *k == addr)
    }

    /// One pass: the key's slot, else the first empty one (taken).
    fn find_or_insert(&mut self, addr: u64) -> Result<usize> {
        if addr == 0 {
            return Err(Error::NullStorage);
        }
        let mut free = None;
        for (i, k) in self.live_keys().iter().enumerate() {
            if *k == addr {
                return Ok(i);
            }
            if *k == 0 && free.is_none() {
                free = Some(i);
            }
        }
        let i = match free {
            Some(i) => i,
            None if self.used < N => self.used,
            None => return Err(Error::CoherencyTableFull),
        };
        // `i` is below `N`, and `entries` has as many slots as `keys`.
        if let (Some(k), Some(e)) = (self.keys.get_mut(i), self.entries.get_mut(i)) {
            *k = addr;
            *e = CoherencyEnforcer::new();
        }
        self.used = self.used.max(i + 1);
        Ok(i)
    }

    fn reclaim(&mut self, i: usize) {
        let (Some(e), Some(k)) = (self.entries.get(i), self.keys.get_mut(i)) else { return };
        if e.is_idle() && e.policy() == CoherencePolicy::Coherent {
            *k = 0;
            while self.used > 0 && self.keys.get(self.used - 1) == Some(&0) {
                self.used -= 1;
            }
        }
    }

    /// The enforcer of the tensor at `addr`, if it has one.
    pub fn get(&self, addr: u64) -> Option<&CoherencyEnforcer> {
        self.find(addr).and_then(|i| self.entries.get(i))
    }

    /// The policy of the tensor at `addr` (`COHERENT` unless set).
    pub fn policy(&self, addr: u64) -> CoherencePolicy {
        self.get(addr).map_or(CoherencePolicy::Coherent, |e| e.policy())
    }

    /// `set_accessor_coherence_policy`.
    pub fn set_policy(&mut self, addr: u64, p: CoherencePolicy) -> Result<()> {
        if p == CoherencePolicy::Coherent && self.find(addr).is_none() {
            return if addr == 0 { Err(Error::NullStorage) } else { Ok(()) };
        }
        let i = self.find_or_insert(addr)?;
        if let Some(e) = self.entries.get_mut(i) {
            e.set_policy(p);
        }
        self.reclaim(i);
        Ok(())
    }

    /// An accessor of `kind` is created on the tensor at `addr`.
    pub fn register(&mut self, addr: u64, kind: AccessorKind) -> Result<Admission> {
        if kind == AccessorKind::Tcm {
            return Ok(Admission::Clean);
        }
        let i = self.find_or_insert(addr)?;
        // `i` is a slot of the table (found or inserted).
        let r = self.entries.get_mut(i).ok_or(Error::CoherencyTableFull)?.register(kind);
        self.reclaim(i);
        r
    }

    /// An accessor of `kind` on the tensor at `addr` is dropped.
    pub fn release(&mut self, addr: u64, kind: AccessorKind) -> Result<()> {
        if kind == AccessorKind::Tcm {
            return Ok(());
        }
        let i = self.find(addr).ok_or(Error::AccessorNotRegistered)?;
        let r = self.entries.get_mut(i).ok_or(Error::AccessorNotRegistered)?.release(kind);
        self.reclaim(i);
        r
    }

    /// Entries in use.
    pub fn len(&self) -> usize {
        self.live_keys().iter().filter(|k| **k != 0).count()
    }

    /// Whether no entry is in use.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessorKind::*;

    #[test]
    fn entries_come_and_go_with_accessors_and_policies() {
        let mut t = CoherencyTable::<2>::new();
        assert_eq!(t.register(0x1000, BufferedWriter), Ok(Admission::Clean));
        assert_eq!(t.register(0x1000, Unbuffered), Err(Error::CoherencyConflict));
        assert_eq!(t.register(0x2000, Unbuffered), Ok(Admission::Clean), "other tensor, other entry");
        assert_eq!(t.register(0x3000, Unbuffered), Err(Error::CoherencyTableFull));
        assert_eq!(t.register(0x3000, Tcm), Ok(Admission::Clean), "tcm is not tracked");
        t.release(0x2000, Unbuffered).unwrap();
        assert_eq!(t.len(), 1);
        t.set_policy(0x2000, CoherencePolicy::IncoherentVerbose).unwrap();
        assert_eq!(t.len(), 2, "a policy keeps its entry");
        assert_eq!(t.policy(0x2000), CoherencePolicy::IncoherentVerbose);
        t.set_policy(0x2000, CoherencePolicy::Coherent).unwrap();
        t.release(0x1000, BufferedWriter).unwrap();
        assert!(t.is_empty());
        assert_eq!(t.release(0x1000, BufferedWriter), Err(Error::AccessorNotRegistered));
        assert_eq!(t.register(0, Unbuffered), Err(Error::NullStorage));
    }

    #[test]
    fn verbose_and_quiet_policies_admit() {
        let mut t = CoherencyTable::<4>::new();
        t.set_policy(0x40, CoherencePolicy::IncoherentVerbose).unwrap();
        t.set_policy(0x80, CoherencePolicy::IncoherentQuiet).unwrap();
        for a in [0x40, 0x80] {
            t.register(a, BufferedReader).unwrap();
        }
        assert_eq!(t.register(0x40, BufferedWriter), Ok(Admission::Warned));
        assert_eq!(t.register(0x80, BufferedWriter), Ok(Admission::Clean));
    }
}
