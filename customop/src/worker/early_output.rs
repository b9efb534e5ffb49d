//! A large output read while the verdict still runs (issue 28). The
//! staging simulator tells the worker the moment a run's output is final
//! should the run pass (`neuron_sim_set_output_ready`); the worker sends
//! the parent a frame saying where it lies, and the parent copies it out
//! of the shared file at once, while the worker's verdict (the checks
//! after the kernels, the report) goes on. The copy is kept only if the result then
//! says the run passed with its output at that place; otherwise it is
//! dropped and the output read as before.

use crate::isolate::Channel;
use std::ffi::c_void;
use std::os::fd::RawFd;

/// A frame of the worker's channel: the output's place (offset, bytes),
/// final should the run pass.
pub(super) const FRAME_OUTPUT: u8 = 3;

/// Outputs smaller than this are read after the result: the frame's
/// wake-up of the parent would cost more than the overlap saves.
const EARLY_BYTES: u64 = 256 << 10;

/// The worker's side: the channel the notice goes to. It must outlive the
/// simulator it is given to.
pub(super) struct Notice {
    pub(super) ctl: RawFd,
}

/// The simulator's callback (`neuron_sim_set_output_ready`): a frame with
/// the output's place, for a large output.
///
/// # Safety
/// `ctx` must point to a live [`Notice`].
pub(super) unsafe extern "C" fn output_ready(ctx: *mut c_void, offset: u64, len: u64) {
    if len < EARLY_BYTES {
        return;
    }
    // SAFETY: the caller's contract: a live Notice.
    let n = unsafe { &*ctx.cast::<Notice>() };
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&offset.to_le_bytes());
    b[8..].copy_from_slice(&len.to_le_bytes());
    Channel { fd: n.ctl }.frame(FRAME_OUTPUT, &b);
}

/// The parent's side: the output's place, from a frame's payload.
pub(super) fn place(payload: &[u8]) -> Option<(usize, usize)> {
    let word = |i: usize| payload.get(i * 8..i * 8 + 8).map(|w| u64::from_le_bytes(w.try_into().expect("8 bytes")) as usize);
    Some((word(0)?, word(1)?))
}

/// An output copied before the result came: its place and bytes.
pub(super) struct Early {
    pub(super) at: usize,
    pub(super) data: Vec<u8>,
}

impl Early {
    /// A copy of the output's `bytes`, which lie at `at` of the call memory.
    pub(super) fn copy(bytes: &[u8], at: usize) -> Self {
        // No zero fill first: the copy writes every byte.
        let mut data = Vec::with_capacity(bytes.len());
        data.extend_from_slice(bytes);
        Self { at, data }
    }

    /// The bytes, if they are the output the result places at `at`, `len`.
    pub(super) fn take_if(self, at: usize, len: usize) -> Option<Vec<u8>> {
        (self.at == at && self.data.len() == len).then_some(self.data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_copy_is_kept_only_for_the_place_the_result_names() {
        let region: Vec<u8> = (0..=255).collect();
        let e = Early::copy(&region[16..24], 16);
        assert_eq!(e.take_if(16, 8).unwrap(), (16..24).collect::<Vec<u8>>());
        assert!(Early::copy(&region[16..24], 16).take_if(24, 8).is_none());
        assert!(Early::copy(&region[16..24], 16).take_if(16, 9).is_none());
    }

    #[test]
    fn the_place_decodes_from_the_frame() {
        let mut b = 7u64.to_le_bytes().to_vec();
        b.extend_from_slice(&9u64.to_le_bytes());
        assert_eq!(place(&b), Some((7, 9)));
        assert_eq!(place(&b[..12]), None);
    }
}
