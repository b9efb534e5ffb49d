//! The coherency enforcer of SPEC §8: what accessors of one tensor may be
//! live at once, under the tensor's policy. Pure logic, no memory access.
//!
//! Rules: many buffered readers may coexist, or many unbuffered (per-
//! element) accessors; a buffered writer is exclusive; buffered and
//! unbuffered never mix. The TCM accessor is not tracked. A forbidden
//! combination is refused under `COHERENT`, admitted with a warning under
//! `INCOHERENT_VERBOSE`, admitted silently under `INCOHERENT_QUIET`.

use crate::error::{Error, Result};
use core::mem::{offset_of, size_of};
use static_assertions::const_assert_eq;

/// A tensor's coherence policy (C values).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CoherencePolicy {
    /// Forbidden combinations are refused (the default).
    #[default]
    Coherent = 0,
    /// Forbidden combinations are admitted with a warning.
    IncoherentVerbose = 1,
    /// Forbidden combinations are admitted silently.
    IncoherentQuiet = 2,
}

impl CoherencePolicy {
    /// Every policy, in code order.
    pub const ALL: [Self; 3] = [Self::Coherent, Self::IncoherentVerbose, Self::IncoherentQuiet];

    /// The policy numbered `v`.
    pub const fn from_u32(v: u32) -> Result<Self> {
        match v {
            0 => Ok(Self::Coherent),
            1 => Ok(Self::IncoherentVerbose),
            2 => Ok(Self::IncoherentQuiet),
            _ => Err(Error::BadCoherencyPolicy),
        }
    }
}

/// What kind of accessor registers (C values).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum AccessorKind {
    /// A read stream accessor (buffered).
    BufferedReader = 0,
    /// A write stream accessor (buffered).
    BufferedWriter = 1,
    /// A per-element accessor (`accessor<T, N>`, const or not).
    Unbuffered = 2,
    /// The TCM accessor: not tracked.
    Tcm = 3,
}

impl AccessorKind {
    /// Every kind, in code order.
    pub const ALL: [Self; 4] = [Self::BufferedReader, Self::BufferedWriter, Self::Unbuffered, Self::Tcm];

    /// The kind numbered `v`.
    pub const fn from_u32(v: u32) -> Result<Self> {
        match v {
            0 => Ok(Self::BufferedReader),
            1 => Ok(Self::BufferedWriter),
            2 => Ok(Self::Unbuffered),
            3 => Ok(Self::Tcm),
            _ => Err(Error::BadCoherencyPolicy),
        }
    }

    /// A short name (for warnings).
    pub const fn name(self) -> &'static str {
        match self {
            Self::BufferedReader => "read stream",
            Self::BufferedWriter => "write stream",
            Self::Unbuffered => "accessor",
            Self::Tcm => "tcm accessor",
        }
    }
}

/// The outcome of an admitted registration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Admission {
    /// The combination is allowed.
    Clean,
    /// The combination is forbidden but the policy is `INCOHERENT_VERBOSE`:
    /// the caller prints a warning.
    Warned,
}

/// One tensor's enforcer (16 bytes, C layout).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[repr(C)]
pub struct CoherencyEnforcer {
    /// Live buffered readers.
    pub readers: u32,
    /// Live buffered writers.
    pub writers: u32,
    /// Live unbuffered accessors.
    pub unbuffered: u32,
    /// [`CoherencePolicy`] code.
    pub policy: u8,
    /// 0.
    pub reserved: [u8; 3],
}

const_assert_eq!(size_of::<CoherencyEnforcer>(), 16);
const_assert_eq!(offset_of!(CoherencyEnforcer, writers), 4);
const_assert_eq!(offset_of!(CoherencyEnforcer, unbuffered), 8);
const_assert_eq!(offset_of!(CoherencyEnforcer, policy), 12);

impl CoherencyEnforcer {
    /// No accessors, policy `COHERENT`.
    pub const fn new() -> Self {
        Self { readers: 0, writers: 0, unbuffered: 0, policy: 0, reserved: [0; 3] }
    }

    /// The policy.
    #[inline]
    pub fn policy(&self) -> CoherencePolicy {
        CoherencePolicy::from_u32(self.policy as u32).unwrap_or_default()
    }

    /// Sets the policy (live accessors stay).
    pub fn set_policy(&mut self, p: CoherencePolicy) {
        self.policy = p as u8;
    }

    /// Whether no accessor is live.
    #[inline]
    pub fn is_idle(&self) -> bool {
        self.readers == 0 && self.writers == 0 && self.unbuffered == 0
    }

    /// Whether an accessor of `kind` would break the rules given the live
    /// ones.
    #[inline]
    pub fn conflicts(&self, kind: AccessorKind) -> bool {
        match kind {
            AccessorKind::BufferedReader => self.writers > 0 || self.unbuffered > 0,
            AccessorKind::BufferedWriter => !self.is_idle(),
            AccessorKind::Unbuffered => self.readers > 0 || self.writers > 0,
            AccessorKind::Tcm => false,
        }
    }

    fn counter(&mut self, kind: AccessorKind) -> Option<&mut u32> {
        match kind {
            AccessorKind::BufferedReader => Some(&mut self.readers),
            AccessorKind::BufferedWriter => Some(&mut self.writers),
            AccessorKind::Unbuffered => Some(&mut self.unbuffered),
            AccessorKind::Tcm => None,
        }
    }

    /// An accessor of `kind` is created. Refused (nothing changes) when it
    /// conflicts under `COHERENT`; otherwise counted.
    #[inline]
    pub fn register(&mut self, kind: AccessorKind) -> Result<Admission> {
        let verdict = match (self.conflicts(kind), self.policy()) {
            (false, _) => Admission::Clean,
            (true, CoherencePolicy::Coherent) => return Err(Error::CoherencyConflict),
            (true, CoherencePolicy::IncoherentVerbose) => Admission::Warned,
            (true, CoherencePolicy::IncoherentQuiet) => Admission::Clean,
        };
        if let Some(c) = self.counter(kind) {
            *c = c.checked_add(1).ok_or(Error::SizeOverflow)?;
        }
        Ok(verdict)
    }

    /// An accessor of `kind` is dropped.
    #[inline]
    pub fn release(&mut self, kind: AccessorKind) -> Result<()> {
        match self.counter(kind) {
            None => Ok(()),
            Some(c) if *c > 0 => {
                *c -= 1;
                Ok(())
            }
            Some(_) => Err(Error::AccessorNotRegistered),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use AccessorKind::*;
    use CoherencePolicy::*;

    /// The rule table: may a `second` coexist with a live `first`?
    fn allowed(first: AccessorKind, second: AccessorKind) -> bool {
        matches!((first, second), (Tcm, _) | (_, Tcm) | (BufferedReader, BufferedReader) | (Unbuffered, Unbuffered))
    }

    #[test]
    fn every_pair_under_every_policy() {
        for policy in CoherencePolicy::ALL {
            for first in AccessorKind::ALL {
                for second in AccessorKind::ALL {
                    let mut e = CoherencyEnforcer::new();
                    e.set_policy(policy);
                    assert_eq!(e.register(first), Ok(Admission::Clean), "first registration is always clean");
                    let before = e;
                    let r = e.register(second);
                    let ok = allowed(first, second);
                    match (ok, policy) {
                        (true, _) => assert_eq!(r, Ok(Admission::Clean), "{policy:?} {first:?}+{second:?}"),
                        (false, Coherent) => {
                            assert_eq!(r, Err(Error::CoherencyConflict), "{first:?}+{second:?}");
                            assert_eq!(e, before, "a refusal changes nothing");
                        }
                        (false, IncoherentVerbose) => assert_eq!(r, Ok(Admission::Warned), "{first:?}+{second:?}"),
                        (false, IncoherentQuiet) => assert_eq!(r, Ok(Admission::Clean), "{first:?}+{second:?}"),
                    }
                    // Drop in reverse; back to idle.
                    if r.is_ok() {
                        e.release(second).unwrap();
                    }
                    e.release(first).unwrap();
                    assert!(e.is_idle());
                    assert_eq!(e.policy(), policy);
                }
            }
        }
    }

    #[test]
    fn release_frees_the_slot_for_a_conflicting_kind() {
        let mut e = CoherencyEnforcer::new();
        e.register(BufferedWriter).unwrap();
        assert_eq!(e.register(BufferedReader), Err(Error::CoherencyConflict));
        e.release(BufferedWriter).unwrap();
        assert_eq!(e.register(BufferedReader), Ok(Admission::Clean));
        assert_eq!(e.register(BufferedReader), Ok(Admission::Clean), "many readers");
        assert_eq!(e.readers, 2);
    }

    #[test]
    fn unbalanced_release_is_an_error() {
        let mut e = CoherencyEnforcer::new();
        for k in [BufferedReader, BufferedWriter, Unbuffered] {
            assert_eq!(e.release(k), Err(Error::AccessorNotRegistered));
        }
        assert_eq!(e.release(Tcm), Ok(()), "not tracked");
        assert!(CoherencePolicy::from_u32(3).is_err());
        assert!(AccessorKind::from_u32(4).is_err());
    }
}
