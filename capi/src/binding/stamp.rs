//! [`Stamp`]: "the binding this thread had then", for a handle that keeps
//! a pointer into its core's data RAM (a stream's buffer) and uses it
//! without entering the core. On the host the binding changes (every
//! `bind` and its end bump `BINDING_EPOCH`), so the pointer is used only
//! while the epoch still reads the stamp's: the core bound then is still
//! bound, so live. On the device it never changes: the stamp is empty and
//! the check folds to `true` (no instruction on the hot path).

/// The binding at the time it was taken.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Stamp {
    #[cfg(not(target_arch = "xtensa"))]
    epoch: u64,
}

impl Stamp {
    /// This thread's binding now. Taken before the entry point whose
    /// result it vouches for (a stamp never stands for a later binding).
    #[inline(always)]
    pub(crate) fn now() -> Self {
        Self {
            #[cfg(not(target_arch = "xtensa"))]
            epoch: super::host::BINDING_EPOCH.load(core::sync::atomic::Ordering::Relaxed),
        }
    }

    /// Whether this thread's binding is still the stamp's.
    #[cfg(not(target_arch = "xtensa"))]
    #[inline(always)]
    pub(crate) fn holds(&self) -> bool {
        super::host::BINDING_EPOCH.load(core::sync::atomic::Ordering::Relaxed) == self.epoch
    }

    /// Always: the device's binding never changes.
    #[cfg(target_arch = "xtensa")]
    #[inline(always)]
    pub(crate) fn holds(&self) -> bool {
        true
    }
}
