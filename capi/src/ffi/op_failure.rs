//! A failed tensor operation fails the op. Where libtorch would throw, the
//! C++ torch functions call [`neuron_fail_invocation`], so the run reports
//! the operation's error code instead of going on with an unwritten
//! result. (The neuron:: functions beneath return 0 / -1 and leave the
//! choice to the kernel.)

use crate::binding::with_core;

/// `neuron_fail_invocation()`: records the calling core's last error as
/// the invocation's status (what `customop_status` and the run report),
/// unless an earlier failure already did: the first failure wins, as for
/// the argument readers. Returns the status now held (0: there was no
/// error to record), or the code of `NoCore` when no core is bound.
#[unsafe(no_mangle)]
pub extern "C" fn neuron_fail_invocation() -> i32 {
    with_core(|b| {
        if b.invocation_status == 0 {
            b.invocation_status = b.last_error;
        }
        Ok(b.invocation_status)
    })
    .unwrap_or_else(|e| e.code())
}
