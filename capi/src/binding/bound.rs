//! `Bound`: a core's runtime state plus what the C surface keeps beside it
//! (the last error, the error log, the invocation status, host run settings).

use neuron_runtime::{CoreState, Error};

/// A core's runtime state plus what the C surface adds to it.
pub struct Bound<H: neuron_hal::Hal> {
    /// The runtime state.
    pub state: CoreState<H>,
    /// The last error a C entry point reported on this core (0: none).
    pub last_error: i32,
    /// Every error entry points reported on this core since the log was
    /// last cleared (the simulator clears it at the start of a run).
    pub errors: neuron_runtime::ErrorLog,
    /// First marshalling failure since `customop_setup` (0: none).
    pub invocation_status: i32,
    /// Set when the kernel asked `get_cpu_id()` or `get_cpu_count()`: a
    /// kernel that slices its work by core (the simulator reports one run
    /// on a single core).
    pub cpu_queried: bool,
    /// The byte `neuron_tensor_empty` fills new tensors with: the
    /// simulator's output sentinel of the run (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub empty_fill: u8,
    /// The stack the last launcher asked for (`STACK_SIZE`, 0: the
    /// default) and the stack pointer it ran the wrapper at: the simulator
    /// measures the kernel's stack use below it (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub launch_stack: (u32, usize),
    /// Set by a Rust kernel built without optimisation: its stack use is
    /// reported, not judged (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub unoptimised_kernel: bool,
    /// Where in the kernel logged errors happened, as the C++ header
    /// told it (host only; the simulator clears it with the log).
    #[cfg(not(target_arch = "xtensa"))]
    pub sites: std::vec::Vec<super::site::ErrorSite>,
    /// What the next recorded error is about, in words (host only): set
    /// by an entry point on its way to failing, taken by `record`.
    #[cfg(not(target_arch = "xtensa"))]
    pub pending_detail: Option<std::string::String>,
    /// Where `customop_next_tensor` builds its result: in the state, not
    /// in a frame above the reader's call chain (the custom-op path's
    /// stack); copied out once the entry point returns. Device only (the host's
    /// state must stay `Send`, and its stack is not the constraint).
    #[cfg(target_arch = "xtensa")]
    pub view: neuron_runtime::marshal::tensor::TensorView,
}

impl<H: neuron_hal::Hal> Bound<H> {
    /// Wraps fresh state (the device builds its static in place instead).
    #[cfg_attr(target_arch = "xtensa", allow(dead_code))]
    pub const fn new(state: CoreState<H>) -> Self {
        Self {
            state,
            last_error: 0,
            errors: neuron_runtime::ErrorLog::new(),
            invocation_status: 0,
            cpu_queried: false,
            #[cfg(not(target_arch = "xtensa"))]
            empty_fill: 0,
            #[cfg(not(target_arch = "xtensa"))]
            launch_stack: (0, 0),
            #[cfg(not(target_arch = "xtensa"))]
            unoptimised_kernel: false,
            #[cfg(not(target_arch = "xtensa"))]
            sites: std::vec::Vec::new(),
            #[cfg(not(target_arch = "xtensa"))]
            pending_detail: None,
            // SAFETY: TensorView is plain data (integers and a raw
            // pointer); all zeroes is a valid value (null storage, rank 0).
            #[cfg(target_arch = "xtensa")]
            view: unsafe { core::mem::zeroed() },
        }
    }

    /// Records `e` as the last error and in the log.
    pub(super) fn record(&mut self, e: Error) {
        self.last_error = e.code();
        self.errors.record(e);
        #[cfg(not(target_arch = "xtensa"))]
        if let Some(detail) = self.pending_detail.take() {
            let site = super::site::ErrorSite { entry: 0, tensor: 0, index: None, file: std::string::String::new(), line: 0, detail: Some(detail) };
            self.note_site(site);
        }
    }

    /// Notes where the newest logged error happened (host only).
    #[cfg(not(target_arch = "xtensa"))]
    pub fn note_site(&mut self, site: super::site::ErrorSite) {
        super::site::note(&mut self.sites, self.errors.entries().len(), self.errors.dropped(), site);
    }

    /// `tcm_malloc(n)` as the API gives it: the block, or `None` with
    /// `OutOfMemory` recorded as handled. Null is the documented failure,
    /// which the vendor's kernels test and fall back from: it stays in
    /// the report, but does not fail the run by itself (a kernel that uses
    /// the null pointer anyway fails on it). After an unhandled error it
    /// is one more.
    pub fn tcm_alloc(&mut self, n: usize) -> Option<core::ptr::NonNull<u8>> {
        match self.state.tcm_malloc(n) {
            Ok(p) => {
                // The simulator's fill, not what the pool held before: on
                // the device the block holds whatever was there, and a
                // result computed from it shows as such (0xFF bytes are a
                // NaN in every float type the kernel may read).
                #[cfg(not(target_arch = "xtensa"))]
                // SAFETY: a fresh block of `n` bytes the pool just handed out.
                unsafe {
                    p.as_ptr().write_bytes(self.empty_fill, n)
                };
                Some(p)
            }
            Err(e) => {
                #[cfg(not(target_arch = "xtensa"))]
                if e == Error::OutOfMemory {
                    self.explain_oom(super::explain::Heap::Tcm, n as u64);
                }
                let clean = !self.errors.has_unacknowledged();
                self.record(e);
                if clean {
                    self.errors.acknowledge();
                }
                None
            }
        }
    }
}
