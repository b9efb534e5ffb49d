//! The modeled device time: every constant of the model, each derived in
//! its doc comment from the vendor's published figures (the MLP tutorial
//! on trn1: batch 32, two relus of [32, 4096] and [32, 2048] per
//! iteration, 196,608 relu elements; element-accessor relu 8.10
//! iterations/s, TCM-staged relu 220.7 on 1 core and 269.9 on 8). The
//! algebra is written out in docs/profiling.md.
//!
//! time(core) = instructions · [`NS_PER_INSN`]
//!            + HBM window accesses · [`HBM_WINDOW_ACCESS_NS`]
//!            + DMA bytes / [`DMA_BYTES_PER_NS`]
//!            + DMA descriptors · [`DMA_DESCRIPTOR_NS`];
//! time(op) = the slowest core's.

use serde::Serialize;

/// Relu elements per iteration of the vendor's MLP: 32·4096 + 32·2048.
pub const VENDOR_ELEMENTS: f64 = 196_608.0;
/// The vendor's element-accessor relu: iterations per second.
pub const VENDOR_ELEMENT_ITERS_PER_S: f64 = 8.10;
/// The vendor's TCM-staged relu on 1 core: iterations per second.
pub const VENDOR_TCM1_ITERS_PER_S: f64 = 220.7;
/// The vendor's TCM-staged relu on 8 cores: iterations per second.
pub const VENDOR_TCM8_ITERS_PER_S: f64 = 269.9;

/// The 1-core / 8-core speedup the calibration assumes for the vendor's
/// TCM relu: its per-core work splits evenly over 8 cores (S = 8). The
/// table gives only the difference of the two times, 1/220.7 − 1/269.9 s
/// = 0.826 ms = R1 − R1/S, so R1 = 0.826·S/(S−1) ms.
pub const CALIBRATION_SPEEDUP: f64 = 8.0;

/// R1 per element: the vendor's TCM relu on 1 core, per element, in ns:
/// (1/220.7 − 1/269.9) s · S/(S−1) / 196,608 = 4.80 ns.
pub const TCM1_NS_PER_ELEMENT: f64 =
    (1.0 / VENDOR_TCM1_ITERS_PER_S - 1.0 / VENDOR_TCM8_ITERS_PER_S) * 1e9 * CALIBRATION_SPEEDUP / (CALIBRATION_SPEEDUP - 1.0) / VENDOR_ELEMENTS;

/// The element-accessor relu per element, in ns: what it costs more than
/// the TCM relu on 1 core, (1/8.10 − 1/220.7) s / 196,608 = 604.9 ns, plus
/// [`TCM1_NS_PER_ELEMENT`]: 609.7 ns.
pub const ELEMENT_NS_PER_ELEMENT: f64 = (1.0 / VENDOR_ELEMENT_ITERS_PER_S - 1.0 / VENDOR_TCM1_ITERS_PER_S) * 1e9 / VENDOR_ELEMENTS + TCM1_NS_PER_ELEMENT;

/// Emulated instructions per element of the TCM relu (1,024-element
/// chunks, 1 core), measured with this profile (BENCHMARKS.md: 56.6).
pub const CALIBRATION_TCM_INSNS_PER_ELEMENT: f64 = 56.6;
/// Emulated instructions per element of the element-accessor relu
/// (BENCHMARKS.md: 86.6).
pub const CALIBRATION_ELEMENT_INSNS_PER_ELEMENT: f64 = 86.6;
/// HBM window accesses per element of the element-accessor relu: one
/// read of the input, one write of the output.
pub const CALIBRATION_HBM_PER_ELEMENT: f64 = 2.0;

/// Bytes per ns one core's DMA queue moves: assumed 16 GB/s per queue
/// (the vendor publishes no per-queue figure). The TCM relu moves 8 bytes
/// per element (4 in, 4 out): 0.5 ns per element.
pub const DMA_BYTES_PER_NS: f64 = 16.0;
/// Fixed cost of one DMA descriptor (ring write, doorbell, completion
/// poll), in ns: assumed 200 ns. The TCM relu issues 2 per 1,024
/// elements: 0.39 ns per element.
pub const DMA_DESCRIPTOR_NS: f64 = 200.0;

/// Time per emulated instruction, in ns: what is left of the TCM relu's
/// [`TCM1_NS_PER_ELEMENT`] after its DMA (8/16 + 2·200/1024 = 0.89 ns),
/// over its [`CALIBRATION_TCM_INSNS_PER_ELEMENT`]: (4.80 − 0.89)/56.6 =
/// 0.069 ns. At the Q7's 1.4 GHz (0.714 ns per cycle) that is ~10
/// emulated instructions per cycle: the open toolchain emits scalar code
/// with soft-float calls where the vendor's compiler uses the Q7's
/// 512-bit vector unit (16 float lanes) and hardware compares, so this
/// one factor folds that in. Scalar code that does not vectorise on the
/// device is therefore modeled too fast.
pub const NS_PER_INSN: f64 = (TCM1_NS_PER_ELEMENT - 8.0 / DMA_BYTES_PER_NS - 2.0 * DMA_DESCRIPTOR_NS / 1024.0) / CALIBRATION_TCM_INSNS_PER_ELEMENT;

/// One load or store through an HBM window, in ns: the element relu's
/// [`ELEMENT_NS_PER_ELEMENT`] less its instructions (86.6 · 0.069 ns),
/// over its 2 window accesses per element: (609.7 − 6.0)/2 = 301.9 ns, an
/// uncached round trip to HBM through the fabric.
pub const HBM_WINDOW_ACCESS_NS: f64 = (ELEMENT_NS_PER_ELEMENT - CALIBRATION_ELEMENT_INSNS_PER_ELEMENT * NS_PER_INSN) / CALIBRATION_HBM_PER_ELEMENT;

/// The Q7's clock, in GHz (for the cycles shown next to the time).
pub const CLOCK_GHZ: f64 = 1.4;

/// The constants, as `profile.json` records them.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Model {
    /// [`NS_PER_INSN`].
    pub ns_per_instruction: f64,
    /// [`HBM_WINDOW_ACCESS_NS`].
    pub hbm_window_access_ns: f64,
    /// [`DMA_BYTES_PER_NS`].
    pub dma_bytes_per_ns: f64,
    /// [`DMA_DESCRIPTOR_NS`].
    pub dma_descriptor_ns: f64,
    /// [`CLOCK_GHZ`].
    pub clock_ghz: f64,
}

/// The model in force.
pub const MODEL: Model = Model {
    ns_per_instruction: NS_PER_INSN,
    hbm_window_access_ns: HBM_WINDOW_ACCESS_NS,
    dma_bytes_per_ns: DMA_BYTES_PER_NS,
    dma_descriptor_ns: DMA_DESCRIPTOR_NS,
    clock_ghz: CLOCK_GHZ,
};

impl Model {
    /// Modeled ns of this much work.
    pub fn ns(&self, instructions: u64, hbm: u64, dma_bytes: u64, descriptors: u64) -> f64 {
        instructions as f64 * self.ns_per_instruction
            + hbm as f64 * self.hbm_window_access_ns
            + dma_bytes as f64 / self.dma_bytes_per_ns
            + descriptors as f64 * self.dma_descriptor_ns
    }

    /// Modeled ns of `n` element accesses to HBM if staged through TCM
    /// instead: 4 bytes each by DMA in 1,024-element chunks, and the TCM
    /// relu's instructions per element.
    pub fn staged_ns(&self, n: u64) -> f64 {
        let n = n as f64;
        n * 4.0 / self.dma_bytes_per_ns + n / 1024.0 * self.dma_descriptor_ns + n / 2.0 * CALIBRATION_TCM_INSNS_PER_ELEMENT * self.ns_per_instruction
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_constants_reproduce_the_vendor_figures_they_come_from() {
        assert!((TCM1_NS_PER_ELEMENT - 4.80).abs() < 0.01, "{TCM1_NS_PER_ELEMENT}");
        assert!((ELEMENT_NS_PER_ELEMENT - 609.7).abs() < 0.1, "{ELEMENT_NS_PER_ELEMENT}");
        let tcm = MODEL.ns(566, 0, 80, 0) / 10.0 + 2.0 * DMA_DESCRIPTOR_NS / 1024.0;
        assert!((tcm - TCM1_NS_PER_ELEMENT).abs() < 1e-9);
        let element = MODEL.ns(866, 20, 0, 0) / 10.0;
        assert!((element - ELEMENT_NS_PER_ELEMENT).abs() < 1e-9);
        assert!((0.06..0.08).contains(&NS_PER_INSN) && (290.0..310.0).contains(&HBM_WINDOW_ACCESS_NS));
    }
}
