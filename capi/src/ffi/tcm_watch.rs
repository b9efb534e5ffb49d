//! Host: a `tcm_to_tensor` copy of `tcm_malloc` memory the kernel never
//! wrote. Raw loads and stores of TCM are plain host memory accesses no
//! hook sees, but a fresh `tcm_malloc` block holds the run's fill (0xFF:
//! a NaN whose bits float arithmetic keeps), so a floating-point element
//! that still has every byte 0xFF when it is copied out was never written,
//! or was computed from memory that never was. Integer elements are not
//! judged: -1 is an ordinary value.

use crate::binding::{Bound, CoreHal};
use neuron_hal_mock::sanitizer::FindingKind;
use neuron_runtime::marshal::dtype::Dtype;

/// The fill this check knows: only a run filled with it is checked.
const FILL: u8 = 0xFF;

/// Checks the `n` elements of dtype `dtype` at `tcm` that core `b` is
/// about to copy into a tensor; records an uninitialised read of the
/// `tcm_malloc` buffer when some still hold the fill.
///
/// # Safety
/// `tcm` is valid for reads of `n` elements of `dtype` (the export's
/// contract).
pub unsafe fn check_copy_out(b: &mut Bound<CoreHal>, dtype: u8, tcm: *const u8, n: u64) {
    let soc = b.state.hal().soc();
    if b.empty_fill != FILL || !soc.sanitizer().is_on() {
        return;
    }
    let Some(d) = Dtype::from_code(dtype).filter(|d| matches!(d, Dtype::Fp32 | Dtype::Fp16 | Dtype::Bfloat16)) else {
        return;
    };
    let es = d.elem_size() as usize;
    let Some(bytes) = usize::try_from(n).ok().and_then(|n| n.checked_mul(es)) else {
        return;
    };
    // Only memory of the TCM pool holds the fill.
    let Some((pool, len)) = b.state.tcm_pool_span() else {
        return;
    };
    let (start, end) = (tcm.addr(), tcm.addr().saturating_add(bytes));
    if start < pool.addr() || end > pool.addr() + len || bytes == 0 {
        return;
    }
    // SAFETY: the caller's contract; inside the core's TCM pool (plain data
    // RAM the kernel owns), read only.
    let data = unsafe { core::slice::from_raw_parts(tcm, bytes) };
    // The usual case, no element still the fill, found without a branch
    // per element (the compiler vectorises these folds).
    let any = match es {
        4 => data.as_chunks::<4>().0.iter().fold(false, |a, e| a | (*e == [FILL; 4])),
        2 => data.as_chunks::<2>().0.iter().fold(false, |a, e| a | (*e == [FILL; 2])),
        _ => true,
    };
    if !any {
        return;
    }
    let mut filled = data.chunks_exact(es).enumerate().filter(|(_, e)| e.iter().all(|&x| x == FILL)).map(|(i, _)| i as u64);
    if let Some(first) = filled.next() {
        let count = 1 + filled.count() as u64;
        let cpu = neuron_hal::Hal::prid(b.state.hal());
        soc.sanitizer().record_on(FindingKind::UninitialisedRead, "a tcm_malloc buffer (copied out by tcm_to_tensor)", cpu, None, first, count);
    }
}
