//! A simulator whose HBM is its caller's file (issue 28: one copy each
//! way). The caller, a Python op's parent process, maps the tensor area of
//! that file, writes each tensor argument where the simulator places it
//! ([`place_span`](super::place_span) apart, from the area's start), and
//! reads a passed run's output where the simulator placed it. Between runs
//! the tensor area is the caller's: a reset leaves its bytes; a run zeroes
//! the stale bytes past its own tensors before its kernels start, so they
//! see what they would see on a fresh simulator. A caller may also be
//! told, during a run, the moment its output is final should the run pass
//! ([`set_output_ready`](Simulator::set_output_ready)): it copies the
//! output out while the verdict still runs. Between calls it may have the
//! next run's output filled with the sentinel ahead
//! ([`prefill_output`](Simulator::prefill_output)): a caller that calls
//! again with the same shapes then has that fill done while it copies in.

use super::{Simulator, TENSOR_AREA_OFFSET};
use neuron_runtime::marshal::descriptor::RawTensorDesc;
use neuron_runtime::marshal::dtype::Dtype;
use neuron_runtime::marshal::invocation::ArgKind;
use neuron_runtime::Error;

/// What a staging simulator knows of its tensor area.
pub(super) struct Staging {
    /// SoC address up to which the tensor area may hold bytes of earlier
    /// runs (or of the caller's staging for them).
    stale_hi: u64,
    /// Told when a run's output is final should the run pass, and its
    /// context (an address, kept as a number so the simulator stays Send).
    ready: Option<(OutputReady, usize)>,
    /// Bytes filled ahead with a sentinel: SoC address, length, byte.
    prefilled: Option<(u64, u64, u8)>,
}

/// A caller's notice that a run's output is final should the run pass:
/// `ctx` as given to [`set_output_ready`](Simulator::set_output_ready),
/// the output's byte offset in the tensor area, its bytes.
pub type OutputReady = unsafe extern "C" fn(ctx: *mut core::ffi::c_void, offset: u64, len: u64);

impl Simulator {
    /// A fresh simulator whose HBM is the file `hbm_fd` (a memfd; a
    /// duplicate is kept, and the file lengthened to the HBM's size).
    /// HBM outside the tensor area is zeroed; the area keeps its bytes:
    /// arguments the caller staged there before it made this simulator
    /// (a new worker taking over a call) are placed as staged.
    pub fn new_staged(hbm_fd: libc::c_int) -> std::io::Result<Self> {
        let mut s = Self::on(super::super::reserve::soc_on(Some(hbm_fd))?)?;
        s.staging = Some(Staging { stale_hi: 0, ready: None, prefilled: None });
        s.forget_stale()?;
        Ok(s)
    }

    /// Where the tensor area starts in the HBM file: the first argument's
    /// bytes go there.
    pub const fn staging_offset() -> u64 {
        TENSOR_AREA_OFFSET
    }

    /// Appends the tensor argument whose bytes the caller wrote at byte
    /// `offset` of the tensor area: where the next argument is placed
    /// (`StagedOutOfPlace` elsewhere; `NotStaged` on a simulator not made
    /// with [`new_staged`](Self::new_staged)). `pages`: the hashes of its
    /// pages ([`page_hashes`](crate::input_pages::page_hashes)) the caller
    /// took as it wrote them, while they were in its cache; without them
    /// the pages are hashed where they lie at the run's first raw pointer
    /// (a run that makes none compares nothing). (Hashes
    /// that are not those of the bytes only make the run report the input
    /// changed: the caller misleads no one but itself.)
    pub fn arg_tensor_staged(&mut self, dtype: Dtype, shape: &[u64], offset: u64, pages: Option<Vec<u64>>) -> Result<RawTensorDesc, Error> {
        if self.staging.is_none() {
            return Err(Error::NotStaged);
        }
        let mut d = self.contiguous(dtype, shape)?;
        if Some(self.next) != self.area_base().checked_add(offset) {
            return Err(Error::StagedOutOfPlace);
        }
        if pages.as_ref().is_some_and(|p| p.len() as u64 != d.buffer_bytes.div_ceil(crate::input_pages::PAGE)) {
            return Err(Error::BufferTooSmall);
        }
        let name = std::format!("argument {}", self.args.len());
        d.storage = self.alloc_guarded(d.buffer_bytes, name)?;
        if let Some(p) = pages {
            self.placed_pages.push((d.storage, d.buffer_bytes, p));
        }
        self.push_placed(ArgKind::Tensor, d);
        Ok(d)
    }

    /// Has `ready(ctx, offset, len)` called during each later run (resets
    /// keep it; None stops it) on the thread that runs it, once its kernels
    /// have ended and nothing of the run can write its output again: the
    /// hooks saw every element written, no guard was overwritten, every
    /// core's thread came back. The verdict is still to come; a run that
    /// then fails has no output (`output_offset` says so). `NotStaged` on
    /// a simulator not made with [`new_staged`](Self::new_staged).
    ///
    /// # Safety
    /// Until it is replaced or the simulator dropped, `ready` must be safe
    /// to call with `ctx` (and any offset and length) on any thread that
    /// runs this simulator.
    pub unsafe fn set_output_ready(&mut self, ready: Option<OutputReady>, ctx: *mut core::ffi::c_void) -> Result<(), Error> {
        let s = self.staging.as_mut().ok_or(Error::NotStaged)?;
        s.ready = ready.map(|f| (f, ctx.expose_provenance()));
        Ok(())
    }

    /// Tells the caller that output `o` is final should this run pass
    /// (see [`set_output_ready`](Self::set_output_ready)).
    pub(super) fn announce_output(&self, o: &RawTensorDesc) {
        if let Some((f, ctx)) = self.staging.as_ref().and_then(|s| s.ready) {
            // SAFETY: `set_output_ready`'s caller made `f` safe to call
            // with `ctx` on this thread until it is replaced.
            unsafe { f(core::ptr::with_exposed_provenance_mut(ctx), o.storage - self.area_base(), o.buffer_bytes) };
        }
    }

    /// Fills `len` bytes at byte `offset` of the tensor area with the
    /// sentinel now, for the next run: one whose output is placed exactly
    /// there (the same shapes as the last call's) finds it filled and does
    /// not fill it again. The caller must not write those bytes before the
    /// run (it stages arguments below them: the output is placed after
    /// every argument); a reset or another sentinel undoes it.
    /// `NotStaged` on a simulator not made with
    /// [`new_staged`](Self::new_staged); `AddressUnmapped` outside HBM.
    pub fn prefill_output(&mut self, offset: u64, len: u64) -> Result<(), Error> {
        let at = self.area_base().checked_add(offset).ok_or(Error::AddressUnmapped)?;
        let byte = self.sentinel;
        let s = self.staging.as_mut().ok_or(Error::NotStaged)?;
        s.prefilled = None;
        if self.soc.resolve(at, len).is_none() {
            return Err(Error::AddressUnmapped);
        }
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { super::coverage::fill(&self.soc, at, len, byte) }.map_err(|_| Error::AddressUnmapped)?;
        if let Some(s) = self.staging.as_mut() {
            s.prefilled = Some((at, len, byte));
        }
        Ok(())
    }

    /// Whether output `o` was filled ahead with the current sentinel; a
    /// fill ahead is used up by the next run, whatever its output.
    pub(super) fn take_prefilled(&mut self, o: Option<RawTensorDesc>) -> bool {
        let byte = self.sentinel;
        let ahead = self.staging.as_mut().and_then(|s| s.prefilled.take());
        o.is_some_and(|o| ahead == Some((o.storage, o.buffer_bytes, byte)))
    }

    /// Forgets a fill made ahead (a reset).
    pub(super) fn forget_prefilled(&mut self) {
        if let Some(s) = self.staging.as_mut() {
            s.prefilled = None;
        }
    }

    /// Where the output the last run produced lies, as a byte offset in
    /// the tensor area: only after a run that passed (`NoRunResult`), of
    /// an output the simulator placed (`NoOutput`).
    pub fn output_offset(&self) -> Result<u64, Error> {
        let o = self.placed_output.ok_or(Error::NoOutput)?;
        if !self.last_ok {
            return Err(Error::NoRunResult);
        }
        Ok(o.storage - self.area_base())
    }

    /// HBM outside the tensor area back to zeros, and how far stale
    /// bytes lie in it noted (a reset of a staging simulator).
    pub(super) fn forget_stale(&mut self) -> std::io::Result<()> {
        let hbm = self.soc.hbm();
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        let last = unsafe { hbm.zero_outside(TENSOR_AREA_OFFSET, hbm.size()) }?;
        let base = self.soc.platform().hbm_soc_base;
        if let Some(s) = self.staging.as_mut() {
            s.stale_hi = base + last;
        }
        Ok(())
    }

    /// Zeroes the tensor area past the tensors placed so far, up to where
    /// stale bytes may lie (before a run's kernels: its invocation block
    /// and what they allocate go there).
    pub(super) fn zero_stale_tail(&mut self) -> Result<(), Error> {
        let next = self.next;
        let base = self.soc.platform().hbm_soc_base;
        let Some(s) = self.staging.as_mut() else { return Ok(()) };
        if s.stale_hi > next {
            // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
            unsafe { self.soc.hbm().zero_range(next - base, s.stale_hi - next) }.map_err(|_| Error::AddressUnmapped)?;
        }
        s.stale_hi = next;
        Ok(())
    }
}
