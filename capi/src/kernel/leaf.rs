//! The per-element accessor's leaf: one element's pointer, translated at
//! the point of access. A tensor that one record of the context maps as
//! a whole keeps the pointer of its first element with the context's
//! mapping generation; while the generation is unchanged (no window was
//! reprogrammed) an element is that pointer plus its offset, checked
//! inline against the context in place. Anything else (first access,
//! after a miss anywhere, a tensor spanning regions, a foreign or held
//! context) takes the full translate, which reports the errors.
//!
//! On the host the check does not look the thread's core up: the fill
//! keeps a token of the binding it saw (`binding::HostToken`), and any
//! bind or unbind since, a held state or a changed generation sends the
//! access to the full translate.

use crate::translate::translate;
use core::cell::Cell;
#[cfg(target_arch = "xtensa")]
use core::ptr::NonNull;
use neuron_runtime::{Result, TranslationCtx};

/// A generation no translator has (they start at 1): an unfilled cache
/// never matches.
#[cfg(target_arch = "xtensa")]
const NONE: u32 = 0;

/// The translated base of one accessor's tensor.
#[derive(Debug)]
pub(crate) struct Leaf {
    ctx: *mut TranslationCtx,
    /// SoC address of the first element.
    base: u64,
    /// SoC address of the last byte, when the tensor has one.
    last: Option<u64>,
    /// The context the cache was filled through (never null, so the
    /// inline check needs no null test; dangling until filled, when the
    /// generation never matches).
    #[cfg(target_arch = "xtensa")]
    open: Cell<NonNull<TranslationCtx>>,
    #[cfg(target_arch = "xtensa")]
    generation: Cell<u32>,
    #[cfg(target_arch = "xtensa")]
    record: Cell<usize>,
    /// The binding, record and generation the cache was filled under
    /// (`NONE` until filled: never matches).
    #[cfg(not(target_arch = "xtensa"))]
    token: Cell<crate::binding::HostToken>,
    nx: Cell<*mut u8>,
}

impl Leaf {
    /// The leaf of a tensor at `base` (`ctx` its context) spanning
    /// `extent` bytes (`None`: no element).
    pub(crate) fn new(ctx: *mut TranslationCtx, base: u64, extent: Option<u64>) -> Self {
        let last = extent.and_then(|e| e.checked_sub(1)).and_then(|e| base.checked_add(e));
        Self {
            ctx,
            base,
            last,
            #[cfg(target_arch = "xtensa")]
            open: Cell::new(NonNull::dangling()),
            #[cfg(target_arch = "xtensa")]
            generation: Cell::new(NONE),
            #[cfg(target_arch = "xtensa")]
            record: Cell::new(0),
            #[cfg(not(target_arch = "xtensa"))]
            token: Cell::new(crate::binding::HostToken::NONE),
            nx: Cell::new(core::ptr::null_mut()),
        }
    }

    /// The pointer of the `T` element `off` bytes in (in bounds: the
    /// caller checked it against the layout) when the cached base still
    /// maps the tensor; valid until the next translate. `None`: take
    /// [`Leaf::translate`].
    #[inline(always)]
    // `T` picks the host's hit-counter lane; the device counts nothing here.
    #[cfg_attr(target_arch = "xtensa", allow(clippy::extra_unused_type_parameters))]
    pub(crate) fn cached<T>(&self, off: usize) -> Option<*mut u8> {
        #[cfg(target_arch = "xtensa")]
        let hit = crate::binding::still_mapped(self.open.get(), self.generation.get(), self.record.get());
        // The element's index picks the hit counter's lane (a shift).
        #[cfg(not(target_arch = "xtensa"))]
        let hit = crate::binding::token_hit(&self.token.get(), off / core::mem::size_of::<T>().max(1));
        if hit {
            Some(self.nx.get().wrapping_add(off))
        } else {
            None
        }
    }

    /// The full translate, then the cache refilled when one record maps
    /// the whole tensor.
    pub(crate) fn translate(&self, off: u64) -> Result<*mut u8> {
        // In bounds, so no overflow (the layout checked the extent).
        let p = translate(self.ctx, self.base.wrapping_add(off))?;
        self.refill();
        Ok(p)
    }

    /// Refills the cache when one record of the context maps the whole
    /// tensor now (no translate, no install, nothing counted); else leaves
    /// it as it was. Outside entry points only.
    #[inline]
    pub(crate) fn refill(&self) {
        if let Some(last) = self.last {
            #[cfg(target_arch = "xtensa")]
            if let Some((g, rec, p0)) = crate::binding::open_range(self.ctx, self.base, last) {
                if let Some(c) = NonNull::new(self.ctx) {
                    self.open.set(c);
                }
                self.generation.set(g);
                self.record.set(rec);
                self.nx.set(p0);
            }
            // (No `note_raw_pointer` here: a store through the cache
            // follows a `translate` of the same leaf, which noted it; a
            // bulk stream read only loads.)
            #[cfg(not(target_arch = "xtensa"))]
            crate::binding::open_token(self.ctx, self.base, last, &self.token, &self.nx);
        }
    }
}
