//! One simulated core bound to host threads while it runs.

use crate::binding::{bind, Bound, CoreHal, CoreSlot};
use neuron_hal_mock::MockCore;
use neuron_runtime::CoreState;
use std::boxed::Box;

/// One simulated core with its runtime state. The state is boxed so the
/// translation context kernels hold a pointer to never moves.
pub struct SimCore {
    bound: Box<CoreSlot<CoreHal>>,
}

impl SimCore {
    /// A core whose runtime is not initialised yet (as after reset).
    pub fn new(core: MockCore) -> Self {
        Self { bound: Box::new(CoreSlot::new(Bound::new(CoreState::new(core)))) }
    }

    /// The same core stood up afresh (runtime state as [`new`](Self::new)
    /// makes it, the hardware reset in place, its NX space kept); on a
    /// hardware reset that fails, a new core.
    pub fn restart(self) -> std::io::Result<Self> {
        let mut hal = self.bound.into_bound().state.into_hal();
        match hal.reset() {
            Ok(()) => Ok(Self::new(hal)),
            Err(_) => {
                let (soc, cpu) = (std::sync::Arc::clone(hal.soc()), neuron_hal::Hal::prid(&hal));
                drop(hal);
                soc.core(cpu).map(Self::new)
            }
        }
    }

    /// Runs `f` with this core bound to the calling thread, so the C entry
    /// points act on it. Bindings nest: the previous one comes back after.
    /// Afterwards the windows' page-table entries are dropped (their data
    /// stays; see `MockCore::drop_window_pages`): the run's later copies
    /// read the same pages through the memory's view.
    pub fn enter<R>(&mut self, f: impl FnOnce() -> R) -> R {
        let r = bind(&mut self.bound, f);
        self.hal().drop_window_pages();
        r
    }

    /// The runtime state (outside `enter`).
    pub fn state(&mut self) -> &mut CoreState<MockCore> {
        &mut self.bound.get_mut().state
    }

    /// The mock hardware of this core.
    pub fn hal(&self) -> &MockCore {
        self.bound.get().state.hal()
    }

    /// First marshalling failure of the last invocation (0: none).
    pub fn invocation_status(&self) -> i32 {
        self.bound.get().invocation_status
    }

    /// The last error a C entry point recorded on this core.
    pub fn last_error(&self) -> i32 {
        self.bound.get().last_error
    }

    /// Every error entry points recorded on this core since
    /// [`clear_errors`](Self::clear_errors), in order.
    pub fn errors(&self) -> &neuron_runtime::ErrorLog {
        &self.bound.get().errors
    }

    /// Where in the kernel the logged errors happened, where the C++
    /// header told it.
    pub fn error_sites(&self) -> &[crate::binding::site::ErrorSite] {
        &self.bound.get().sites
    }

    /// Starts a run's bookkeeping: empties the error log, the last
    /// error, the core-query flag, and restarts every counter the report
    /// reads (translate hits and misses, heap high-water marks), so the
    /// report covers exactly this run.
    /// `fill` is the run's output sentinel, which `empty` tensors get too.
    pub fn begin_run(&mut self, fill: u8) {
        let b = self.bound.get_mut();
        b.empty_fill = fill;
        b.errors.clear();
        b.sites.clear();
        b.pending_detail = None;
        b.last_error = 0;
        b.invocation_status = 0;
        b.cpu_queried = false;
        b.launch_stack = (0, 0);
        b.unoptimised_kernel = false;
        b.state.restart_stats();
        self.bound.take_sp_low();
    }

    /// The stack the last launcher asked for (`STACK_SIZE`, 0: none ran)
    /// and the stack pointer it called the wrapper at.
    pub fn launch_stack(&self) -> (u32, usize) {
        self.bound.get().launch_stack
    }

    /// Whether the kernel that ran is an unoptimised (debug) Rust build.
    pub fn unoptimised_kernel(&self) -> bool {
        self.bound.get().unoptimised_kernel
    }

    /// The lowest stack address the kernel called the library at since
    /// the last call (usize::MAX: none).
    pub fn take_sp_low(&self) -> usize {
        self.bound.take_sp_low()
    }

    /// Whether the kernel asked `get_cpu_id()`/`get_cpu_count()` since
    /// [`begin_run`](Self::begin_run).
    pub fn cpu_queried(&self) -> bool {
        self.bound.get().cpu_queried
    }
}

/// Runs `f` on the HAL of the core bound to this thread, if any (for tests
/// and tools that need the simulated hardware, e.g. to set ISL).
pub fn with_bound_hal(f: impl FnOnce(&MockCore)) {
    let _ = crate::binding::with_core(|b| {
        f(b.state.hal());
        Ok(())
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::tcm_scope;

    /// A TCM scope makes buffers on the core bound when it began, and only
    /// while that core is bound: not outside any binding, and not under a
    /// nested binding of another core (whose buffer could outlive it).
    #[test]
    fn a_tcm_scope_makes_buffers_on_its_own_core_only() {
        let soc = neuron_hal_mock::MockSoc::new().unwrap();
        let (mut a, mut b) = (SimCore::new(soc.core(0).unwrap()), SimCore::new(soc.core(1).unwrap()));
        assert!(tcm_scope(|s| s.buf::<f32>(4).is_none()), "no core bound");
        let (outer, nested, after) = a.enter(|| {
            crate::ffi::init::neuron_runtime_init();
            tcm_scope(|s| {
                let mut buf = s.buf::<f32>(16).expect("the pool");
                buf[15] = 2.5;
                let nested = b.enter(|| s.buf::<f32>(4).is_none());
                let after = s.buf::<u8>(1).is_some();
                (buf.iter().sum::<f32>(), nested, after)
            })
        });
        assert_eq!((outer, nested, after), (2.5, true, true));
        let (free, size) = a.state().tcm_free_bytes();
        assert_eq!(free, size, "every buffer freed at the scope's end");
    }

    /// A stream's fast path uses its data-RAM buffer only under the
    /// binding it was granted under: under another core's binding a write
    /// goes to that core, which refuses a stream it does not hold, instead
    /// of landing in the first core's buffer in place; back under its own
    /// core the stream goes on and its data arrives.
    #[test]
    fn a_stream_buffer_is_used_in_place_only_under_its_own_binding() {
        use crate::kernel::ops;
        use neuron_runtime::marshal::dtype::Dtype;
        let soc = neuron_hal_mock::MockSoc::new().unwrap();
        let (mut a, mut b) = (SimCore::new(soc.core(0).unwrap()), SimCore::new(soc.core(1).unwrap()));
        b.enter(|| crate::ffi::init::neuron_runtime_init());
        let (elsewhere, sum) = a.enter(|| {
            crate::ffi::init::neuron_runtime_init();
            assert_eq!(crate::ffi::memcpy::init_dma_queue(), 0);
            let t = ops::zeros(&[8], Dtype::Fp32).unwrap();
            let mut w = t.tensor().write_stream_accessor::<f32>().unwrap();
            assert!(w.is_buffered());
            w.write(1.0).unwrap();
            let elsewhere = b.enter(|| w.write(2.0));
            for _ in 0..7 {
                w.write(3.0).unwrap();
            }
            w.close().unwrap();
            let r = t.tensor().const_accessor::<f32, 1>().unwrap();
            (elsewhere, (0..8).map(|i| r.get([i]).unwrap()).sum::<f32>())
        });
        assert!(elsewhere.is_err(), "another core's binding refuses the stream: {elsewhere:?}");
        assert_eq!(sum, 1.0 + 7.0 * 3.0);
    }
}
