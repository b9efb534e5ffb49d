//! The pairs of cores that wrote the same elements of a region: found
//! once per run, after its cores returned, from the writer bits the
//! sanitizer kept per element.

use super::{Finding, FindingKind, Region, CORE_BITS, MAX_RANGES};

/// Every pair of cores that wrote elements of `r`, in core order, with the
/// elements both wrote. Called with the sanitizer off (by `end`).
pub(super) fn cross_writes(r: &Region) -> Vec<Finding> {
    let mut pairs: Vec<Finding> = Vec::new();
    // SAFETY: AtomicU16 has u16's size and alignment; `end` turned the
    // sanitizer off after the run's cores returned, so no hook writes a
    // state while this plain view lives. Plain, a piece with no element
    // of two writers (all of a correct kernel's) is passed over in a
    // vectorised scan.
    let plain = unsafe { core::slice::from_raw_parts(r.state.as_ptr().cast::<u16>(), r.state.len()) };
    let shared = |s: u16| {
        let b = s & CORE_BITS;
        b & b.wrapping_sub(1) != 0
    };
    const PIECE: usize = 4096;
    for (p, piece) in plain.chunks(PIECE).enumerate() {
        if !piece.iter().fold(false, |a, &s| a | shared(s)) {
            continue;
        }
        for (j, &s) in piece.iter().enumerate() {
            if shared(s) {
                cross_write(&mut pairs, r, (p * PIECE + j) as u64, s & CORE_BITS);
            }
        }
    }
    pairs.sort_by_key(|x| (x.cpu, x.other));
    pairs
}

/// Adds element `e`, written by the cores of `bits` (two or more), to
/// the finding of each pair of them.
fn cross_write(pairs: &mut Vec<Finding>, r: &Region, e: u64, bits: u16) {
    for a in 0..8u32 {
        for b in a + 1..8u32 {
            if bits & (1 << a) == 0 || bits & (1 << b) == 0 {
                continue;
            }
            let i = match pairs.iter().position(|x| x.cpu == a && x.other == Some(b)) {
                Some(i) => i,
                None => {
                    pairs.push(Finding {
                        kind: FindingKind::CrossCoreWrite,
                        region: r.name.clone(),
                        cpu: a,
                        other: Some(b),
                        first: e,
                        count: 0,
                        ranges: Vec::new(),
                        pcs: Vec::new(),
                    });
                    pairs.len() - 1
                }
            };
            let x = &mut pairs[i];
            x.count += 1;
            let full = x.ranges.len() >= MAX_RANGES;
            match x.ranges.last_mut() {
                Some(g) if g.1 == e => g.1 = e + 1,
                _ if !full => x.ranges.push((e, e + 1)),
                _ => {}
            }
        }
    }
}
