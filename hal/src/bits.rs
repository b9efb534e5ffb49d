//! Bit tricks in one place.
//!
//! The Xtensa LLVM backend lowers `u32::leading_zeros` to a shift-or
//! cascade and a population count (~25 instructions) although every core
//! we target has the NSA option (`+nsa` in the target's features), whose
//! `nsau` is the count in one instruction. On the host these are the
//! `core` functions. Both are tested against a shift loop: the host
//! build here, the `nsau` one by the on-target suite (`kernels/qemu-image`,
//! check "bits").

/// Leading zero bits of `x` (32 for 0), as [`u32::leading_zeros`].
#[inline(always)]
pub fn leading_zeros(x: u32) -> u32 {
    #[cfg(target_arch = "xtensa")]
    {
        let n: u32;
        // SAFETY: `nsau` only reads `x` and writes `n` (NSA option, in the
        // target's feature list); no memory, no stack, no flags.
        unsafe { core::arch::asm!("nsau {0}, {1}", out(reg) n, in(reg) x, options(pure, nomem, nostack, preserves_flags)) };
        n
    }
    #[cfg(not(target_arch = "xtensa"))]
    {
        x.leading_zeros()
    }
}

/// `floor(log2(x))`, `None` for 0.
#[inline(always)]
pub fn log2(x: u32) -> Option<u32> {
    if x == 0 {
        None
    } else {
        Some(31 - leading_zeros(x))
    }
}

/// Whether `a · b` fits 32 bits for certain by its operands' widths (the
/// test a 32-bit multiply is taken on: significant bits add up to at most
/// 32). Some products that fit are refused; none that overflow pass.
#[inline(always)]
pub fn mul_fits_u32(a: u32, b: u32) -> bool {
    leading_zeros(a) + leading_zeros(b) >= 32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Leading zeros by shifting a bit down: the definition, not `core`.
    fn reference(x: u32) -> u32 {
        (0..32).find(|&n| x & (0x8000_0000 >> n) != 0).unwrap_or(32)
    }

    #[test]
    fn leading_zeros_and_log2_match_a_shift_loop() {
        // Known answers first (the loop itself could be wrong).
        for (x, n) in [(0, 32), (1, 31), (2, 30), (3, 30), (0xFF, 24), (0x1_0000, 15), (0x7FFF_FFFF, 1), (0x8000_0000, 0), (u32::MAX, 0)] {
            assert_eq!(reference(x), n, "{x:#x}");
            assert_eq!(leading_zeros(x), n, "{x:#x}");
        }
        let mut x = 0x9E37_79B9u32;
        for s in 0..32u32 {
            x = x.rotate_left(5) ^ s.wrapping_mul(0x85EB_CA6B);
            for v in [1u32 << s, (1u32 << s) | 1, (1u32 << s).wrapping_sub(1), u32::MAX >> s, x, x >> s] {
                let want = reference(v);
                assert_eq!(leading_zeros(v), want, "{v:#x}");
                assert_eq!(log2(v), (v != 0).then(|| 31 - want), "{v:#x}");
            }
        }
        assert_eq!(log2(0), None);
    }

    #[test]
    fn mul_fits_u32_never_passes_an_overflow() {
        let v = [0u32, 1, 2, 3, 0xFF, 0x100, 0xFFFF, 0x1_0000, 0x1_0001, 0x7FFF_FFFF, 0x8000_0000, u32::MAX];
        for &a in &v {
            for &b in &v {
                if mul_fits_u32(a, b) {
                    assert!(a.checked_mul(b).is_some(), "{a:#x} * {b:#x}");
                }
            }
        }
        assert!(mul_fits_u32(0xFFFF, 0xFFFF));
    }
}
