//! Host: what an entry point knew when it refused, in words, for the error
//! it is about to record (`Bound::pending_detail`): which heap ran out and
//! what it had free, which dtypes disagreed. Called on error paths only.

use super::Bound;
use neuron_runtime::marshal::dtype::Dtype;
use std::format;

/// The heaps a kernel allocates from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Heap {
    /// `neuron_hbm_allocate` and the tensors the kernel makes.
    Hbm,
    /// `neuron_dataram_allocate`.
    DataRam,
    /// `tcm_malloc`'s pool.
    Tcm,
}

impl<H: neuron_hal::Hal> Bound<H> {
    /// Explains an out-of-memory of `heap` for a request of `asked` bytes.
    pub fn explain_oom(&mut self, heap: Heap, asked: u64) {
        let (name, total, free, largest, fix) = match heap {
            Heap::Hbm => {
                let h = self.state.hbm();
                let s = h.stats();
                let fix = "free the tensors and blocks the kernel no longer needs (they live until freed), or work on the data in smaller pieces";
                ("the HBM heap", s.capacity, s.capacity.saturating_sub(s.in_use), Some(h.largest_free()), fix)
            }
            Heap::DataRam => {
                let h = self.state.dataram();
                let s = h.stats();
                let fix = "data RAM is small: stage the data in smaller tiles and free each block when done with it";
                ("the data-RAM heap", s.capacity, h.free_bytes() as u64, None, fix)
            }
            Heap::Tcm => {
                let (free, total) = self.state.tcm_free_bytes();
                let fix = "ask for less, tcm_free blocks when done, or make the pool larger with neuron_set_tcm_pool_size before the first tcm_malloc (data RAM permitting)";
                ("the tcm_malloc pool", total as u64, free as u64, None, fix)
            }
        };
        let largest = largest.map_or_else(std::string::String::new, |l| format!(", the largest free block {l}"));
        self.pending_detail = Some(format!("{name}: {asked} bytes asked for, {free} of its {total} bytes free{largest}; {fix}"));
    }

    /// Explains a returned tensor whose dtype (`returned`, an ISA code)
    /// differs from the output's.
    pub fn explain_return_dtype(&mut self, returned: u8) {
        let Some(out) = self.state.output_dtype().and_then(Dtype::from_code) else { return };
        let Some(got) = Dtype::from_code(returned) else { return };
        let (elem, torch) = out.cpp_names();
        self.pending_detail = Some(format!(
            "the kernel returned a tensor of dtype {}, the output is {} (the shape function's dtype): make the result with {torch} and write {elem} elements into it (or write into get_dst_tensor()), or make the shape function's output {}",
            got.user_name(),
            out.user_name(),
            got.user_name()
        ));
    }
}
