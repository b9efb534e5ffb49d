//! One live core per cpu of a SoC: what `unsafe impl Hal for MockCore`
//! relies on (the `Hal` contract's "one handle per core": two `MockCore`s
//! for one cpu would program one core's windows and DMA from two places).

use crate::soc::MockSoc;
use std::io;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Core `cpu`'s claim on its SoC, held by its `MockCore` and given back
/// when that drops.
#[derive(Debug)]
pub(crate) struct CoreClaim {
    soc: Arc<MockSoc>,
    bit: u64,
}

impl CoreClaim {
    /// Claims `cpu` of `soc`: refused while another core for it is live.
    pub(crate) fn take(soc: &Arc<MockSoc>, cpu: u32) -> io::Result<Self> {
        let bit = 1u64.checked_shl(cpu).ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, format!("no core {cpu} on the mock SoC")))?;
        if soc.live_cores().fetch_or(bit, Ordering::AcqRel) & bit != 0 {
            return Err(io::Error::new(io::ErrorKind::AlreadyExists, format!("core {cpu} of this SoC is live already (one MockCore per cpu)")));
        }
        Ok(Self { soc: Arc::clone(soc), bit })
    }
}

impl Drop for CoreClaim {
    fn drop(&mut self) {
        self.soc.live_cores().fetch_and(!self.bit, Ordering::AcqRel);
    }
}
