//! The invocation of `customop run --on qemu` as one file that QEMU copies
//! into the emulated memory before the cores start (`-device
//! loader,file=...,addr=`[`AREA_NX`]`,force-raw=on`): the loader area of
//! hbm_scratch (the second half of the Q7's code region, unused by QEMU
//! images, which live in sysram). The runner in the image
//! (`kernels/cpp-qemu`) reads the header, posts the invocation block and
//! reads the output back from the place given here.
//!
//! Layout (little endian), offsets from the area's start:
//!
//! | offset | field |
//! |---|---|
//! | 0 | magic `CQ01` |
//! | 8 | SoC address of the invocation block (u64) |
//! | 16 | SoC address of the output storage (u64) |
//! | 24 | output bytes (u64) |
//! | 32 | the op's name, NUL-terminated (64 bytes) |
//! | 128.. | the tensors, the value arguments (one-element tensors), the zeroed output, the block; each 64-byte aligned |
//!
//! The block and descriptors are built with the runtime's own
//! `InvocationBuilder` and `RawTensorDesc`, as the simulator builds them.

use crate::error::{Error, ErrorKind, Result};
use neuron_hal::platform::{qemu, CODE_REGION_SIZE, QEMU};
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc};
use neuroncustomop::runtime::marshal::invocation::{ArgKind, InvocationBuilder};

/// SoC address of the loader area.
pub const AREA_SOC: u64 = QEMU.scratch_soc_base + CODE_REGION_SIZE / 2;
/// Where the emulated cores (and QEMU's loader) address it.
pub const AREA_NX: u64 = qemu::SCRATCH_NX as u64 + CODE_REGION_SIZE / 2;
/// Its size: the most a run's tensors may take.
pub const AREA_BYTES: u64 = CODE_REGION_SIZE / 2;
/// The header's magic.
pub const MAGIC: &[u8; 4] = b"CQ01";
const HEADER: usize = 128;
const NAME_AT: usize = 32;
const NAME_MAX: usize = 63;

/// One argument to place: a tensor (or a value as a one-element tensor).
pub struct Arg<'a> {
    /// Its kind's invocation code (`ArgKind::code`).
    pub kind: u8,
    /// Its dtype's code.
    pub dtype: u8,
    /// Its shape (`[1]` for a value).
    pub shape: &'a [u64],
    /// Its bytes, row-major.
    pub data: &'a [u8],
}

/// The file's bytes and where the output is inside it.
pub struct Blob {
    /// What QEMU loads at [`AREA_NX`].
    pub bytes: Vec<u8>,
    /// Output storage, SoC.
    pub out_soc: u64,
    /// Output bytes.
    pub out_bytes: u64,
    /// Each argument's storage as the cores address it, and its bytes.
    pub inputs: Vec<(u64, u64)>,
}

impl Blob {
    /// The output's storage as the cores address it.
    pub fn out_nx(&self) -> u64 {
        AREA_NX + (self.out_soc - AREA_SOC)
    }
}

fn too_big() -> Error {
    Error::new(ErrorKind::BadInput, format!("the inputs and output take more than the {} MiB the emulated loader area holds", AREA_BYTES >> 20))
}

/// Lays out `args` and an output of `out_dtype`/`out_shape` for `op`.
pub fn build(op: &str, args: &[Arg], out_dtype: u8, out_shape: &[u64], out_elem: usize) -> Result<Blob> {
    if op.len() > NAME_MAX || op.contains('\0') {
        return Err(Error::new(ErrorKind::BadInput, format!("op name `{op}` is longer than {NAME_MAX} bytes")));
    }
    let mut bytes = vec![0u8; HEADER];
    let place = |bytes: &mut Vec<u8>, data: &[u8]| -> Result<u64> {
        let at = bytes.len().next_multiple_of(64);
        if (at + data.len()) as u64 > AREA_BYTES {
            return Err(too_big());
        }
        bytes.resize(at, 0);
        bytes.extend_from_slice(data);
        Ok(AREA_SOC + at as u64)
    };
    let mut ib = InvocationBuilder::new();
    let mut inputs = Vec::new();
    for (i, a) in args.iter().enumerate() {
        let kind = ArgKind::from_code(a.kind).ok_or_else(|| Error::new(ErrorKind::BadInput, format!("argument {}: kind code {}", i + 1, a.kind)))?;
        let soc = place(&mut bytes, a.data)?;
        inputs.push((AREA_NX + (soc - AREA_SOC), a.data.len() as u64));
        let d = RawTensorDesc::contiguous(Location::Hbm, a.dtype, soc, a.shape)
            .ok_or_else(|| Error::new(ErrorKind::BadInput, format!("argument {}: shape {:?} has no descriptor", i + 1, a.shape)))?;
        ib.arg(kind, d).map_err(|e| Error::new(ErrorKind::BadInput, format!("argument {}: {e:?}", i + 1)))?;
    }
    let numel: u64 = out_shape.iter().product();
    let out_bytes = numel * out_elem as u64;
    let zeros = vec![0u8; usize::try_from(out_bytes).map_err(|_| too_big())?];
    let out_soc = place(&mut bytes, &zeros)?;
    let od = RawTensorDesc::contiguous(Location::Hbm, out_dtype, out_soc, out_shape)
        .ok_or_else(|| Error::new(ErrorKind::BadInput, format!("output shape {out_shape:?} has no descriptor")))?;
    ib.output(od);
    let block = ib.build().to_vec();
    let block_soc = place(&mut bytes, &block)?;
    bytes[..4].copy_from_slice(MAGIC);
    bytes[8..16].copy_from_slice(&block_soc.to_le_bytes());
    bytes[16..24].copy_from_slice(&out_soc.to_le_bytes());
    bytes[24..32].copy_from_slice(&out_bytes.to_le_bytes());
    bytes[NAME_AT..NAME_AT + op.len()].copy_from_slice(op.as_bytes());
    Ok(Blob { bytes, out_soc, out_bytes, inputs })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_header_points_at_the_block_and_the_output() {
        let data = [0u8; 12];
        let b = build("relu", &[Arg { kind: 1, dtype: 12, shape: &[3], data: &data }], 12, &[3], 4).unwrap();
        assert_eq!(&b.bytes[..4], MAGIC);
        assert_eq!(&b.bytes[32..37], b"relu\0");
        let block = u64::from_le_bytes(b.bytes[8..16].try_into().unwrap());
        assert_eq!(b.out_soc, AREA_SOC + 192, "the 12-byte input at 128, the output 64-aligned after it");
        assert_eq!((b.out_bytes, block), (12, AREA_SOC + 256));
        assert_eq!(
            b.bytes.len() as u64,
            block - AREA_SOC + InvocationBuilder::new().arg(ArgKind::Tensor, RawTensorDesc::default()).unwrap().build().len() as u64
        );
        assert!(build(&"x".repeat(64), &[], 12, &[1], 4).is_err());
        let huge = build("big", &[], 12, &[AREA_BYTES / 4 + 1], 4);
        assert_eq!(huge.err().map(|e| e.kind), Some(ErrorKind::BadInput));
    }
}
