//! What the sanitizer says: the kinds of watched region and of finding,
//! and one finding (what, where, by which cores).

use std::string::String;
use std::vec::Vec;

/// What a region holds, and so what is checked on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RegionKind {
    /// An input tensor: const, never written.
    Input,
    /// The output: starts unwritten.
    Output,
    /// A tensor the kernel made with `empty`: starts unwritten.
    Scratch,
}

/// What the sanitizer found.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A read of elements nothing wrote.
    UninitialisedRead,
    /// A read of elements another core wrote in the same run.
    CrossCoreRead,
    /// Elements written by two cores.
    CrossCoreWrite,
    /// A write into an input.
    InputWritten,
}

/// One kind of finding on one region, by one core (a cross-core write:
/// by one pair of cores): the first element and how many.
#[derive(Clone, Debug, Eq)]
pub struct Finding {
    /// What.
    pub kind: FindingKind,
    /// The region's name ("argument 1", "the output", ...).
    pub region: String,
    /// The core that read or wrote (a cross-core write: the lower core).
    pub cpu: u32,
    /// The other core: the one that wrote what `cpu` read, or the higher
    /// core of a cross-core write.
    pub other: Option<u32>,
    /// The first element (index in the region) the finding was made on.
    pub first: u64,
    /// Element accesses found (a cross-core write: elements both wrote).
    pub count: u64,
    /// Cross-core writes: the elements both cores wrote, as half-open
    /// ranges in order (at most [`MAX_RANGES`]); empty for the others.
    pub ranges: Vec<(u64, u64)>,
    /// The return addresses of the access that made the finding first,
    /// innermost first ([`frames::here`]); empty for a cross-core write,
    /// which is found after the run.
    pub pcs: Vec<usize>,
}

/// Findings are equal when they say the same thing: where in the code
/// (`pcs`) is not part of what.
impl PartialEq for Finding {
    fn eq(&self, o: &Self) -> bool {
        (self.kind, &self.region, self.cpu, self.other, self.first, self.count, &self.ranges)
            == (o.kind, &o.region, o.cpu, o.other, o.first, o.count, &o.ranges)
    }
}

/// Ranges a cross-core write finding keeps.
pub const MAX_RANGES: usize = 64;
