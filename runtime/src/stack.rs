//! The stack-switch decision and the HBM stack (SPEC §7), as logic. The
//! switch itself is architecture code in the library crate (Xtensa
//! assembly on the device, a coroutine stack on the host).

use crate::core_state::CoreState;
use crate::error::{Error, Result};
use neuron_hal::Hal;

/// Stack a wrapper asks for when the kernel did not say (reference: 4196).
pub const DEFAULT_STACK_SIZE: u32 = 4196;
/// Largest HBM stack (reference: `MAX_STACK_SIZE` 0x40_0000).
pub const MAX_STACK_SIZE: u32 = 0x40_0000;
/// Alignment of an HBM stack's ends.
pub const STACK_ALIGN: usize = 64;

/// Where a wrapper runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackPlan {
    /// Enough room below SP: call the wrapper on the current stack.
    Current,
    /// Not enough room: switch to an HBM stack of this many bytes.
    Switch { bytes: u32 },
}

/// The decision of SPEC §7: room is `sp - isl`; a wrapper that needs
/// `need` bytes runs in place when the room is at least that. The HBM
/// stack is as large as allowed (`MAX_STACK_SIZE`), since the wrapper's
/// real depth is unknown; a request above the maximum is an error.
pub fn plan(sp: usize, isl: usize, need: u32) -> Result<StackPlan> {
    if need > MAX_STACK_SIZE {
        return Err(Error::StackTooLarge);
    }
    let room = sp.saturating_sub(isl);
    if room >= need as usize {
        Ok(StackPlan::Current)
    } else {
        Ok(StackPlan::Switch { bytes: MAX_STACK_SIZE })
    }
}

/// An HBM stack, reached through the pinned hbm_scratch window (the HBM
/// heap lives there), so it never depends on a dynamic window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HbmStack {
    /// SoC address of the block (its lowest byte).
    pub soc: u64,
    /// Bytes in the block.
    pub bytes: u32,
    /// Lowest address the core uses (the new ISL).
    pub limit: usize,
    /// Highest address, exclusive, aligned: the new SP.
    pub top: usize,
}

impl<H: Hal> CoreState<H> {
    /// Allocates an HBM stack of `bytes`, or failing that the largest power
    /// of two down to `floor` that fits; `NoHbmStack` if none does.
    pub fn alloc_hbm_stack(&mut self, bytes: u32, floor: u32) -> Result<HbmStack> {
        let mut size = bytes.min(MAX_STACK_SIZE);
        // `clamp(1, size)` without its `min > max` panic (size 0 gives 1).
        let floor = floor.min(size).max(1);
        loop {
            if let Ok(soc) = self.hbm.allocate(size as u64, STACK_ALIGN) {
                // The kernel's frames there are plain stores no hook sees.
                self.hal.note_raw_pointer();
                let Ok(p) = self.translate(soc) else {
                    let _ = self.hbm.free(soc);
                    return Err(Error::NoHbmStack);
                };
                let limit = p as usize;
                return Ok(HbmStack { soc, bytes: size, limit, top: limit + size as usize });
            }
            if size <= floor {
                return Err(Error::NoHbmStack);
            }
            size = (size / 2).max(floor);
        }
    }

    /// Frees an HBM stack (`deallocate_hbm_stack`).
    pub fn free_hbm_stack(&mut self, s: HbmStack) -> Result<()> {
        self.hbm.free(s.soc)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_compares_room_with_need() {
        assert_eq!(plan(10_000, 5_000, DEFAULT_STACK_SIZE), Ok(StackPlan::Current));
        assert_eq!(plan(10_000, 10_000 - 4196, DEFAULT_STACK_SIZE), Ok(StackPlan::Current));
        assert_eq!(plan(10_000, 10_000 - 4195, DEFAULT_STACK_SIZE), Ok(StackPlan::Switch { bytes: MAX_STACK_SIZE }));
        assert_eq!(plan(100, 200, 1), Ok(StackPlan::Switch { bytes: MAX_STACK_SIZE }), "SP below ISL");
        assert_eq!(plan(usize::MAX, 0, MAX_STACK_SIZE + 1), Err(Error::StackTooLarge));
    }
}
