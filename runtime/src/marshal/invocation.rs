//! The invocation block (defined here; `docs/abi.md` has it byte by byte).
//!
//! ```text
//! offset  size  field
//!  0      4     magic        0x504F_434E little endian (bytes "NCOP")
//!  4      2     abi_version  1
//!  6      1     argc         0..=10
//!  7      1     reserved     0
//!  8     10     kinds[10]    ArgKind codes; slots >= argc are 0
//! 18      2     reserved     0
//! 20      4     block_bytes  32 + 48 * (argc + 1)
//! 24      8     reserved     0
//! 32     48*argc  argument descriptors, in declared order
//! ..     48     the output descriptor
//! ```
//!
//! Every argument, whatever its kind, travels as a 48-byte tensor
//! descriptor: tensors as themselves, scalar/int/float/long long/double
//! values as one-element tensors whose storage holds the value (read
//! through a translate, as the original reads scalars).

use super::descriptor::{RawTensorDesc, DESC_BYTES};
use crate::error::{Error, Result};

/// `"NCOP"` read as a little-endian u32.
pub const MAGIC: u32 = u32::from_le_bytes(*b"NCOP");
/// The one ABI version this runtime reads.
pub const ABI_VERSION: u16 = 1;
/// Most arguments an invocation carries.
pub const MAX_ARGS: usize = 10;
/// Bytes of the header.
pub const HEADER_BYTES: usize = 32;
/// Bytes of the largest block.
pub const MAX_BLOCK_BYTES: usize = block_bytes(MAX_ARGS);

/// Bytes of a block with `argc` arguments (the output descriptor included).
pub const fn block_bytes(argc: usize) -> usize {
    HEADER_BYTES + DESC_BYTES * (argc + 1)
}

/// Byte offset of argument `i`'s descriptor (`i == argc` is the output).
pub const fn desc_offset(i: usize) -> usize {
    HEADER_BYTES + DESC_BYTES * i
}

/// What a kernel argument is, and so which reader takes it. The one
/// definition: the `customop` tool's schema uses it too (feature `serde`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "snake_case"))]
#[repr(u8)]
pub enum ArgKind {
    /// `const at::Tensor&` — `next_tensor`.
    Tensor = 1,
    /// `const at::Scalar&` — `next_scalar` (any marshallable dtype).
    Scalar = 2,
    /// `int` — `next_int`.
    Int = 3,
    /// `float` — `next_float`.
    Float = 4,
    /// `long long` / `int64_t` (the same 64-bit type on Xtensa) —
    /// `next_long_long` / `next_int64`.
    LongLong = 5,
    /// `double` — `next_double`.
    Double = 6,
}

impl ArgKind {
    /// The invocation block's code for this kind.
    pub const fn code(self) -> u8 {
        self as u8
    }

    /// The kind with code `c`, if any (0 means "no argument").
    pub const fn from_code(c: u8) -> Option<Self> {
        match c {
            1 => Some(Self::Tensor),
            2 => Some(Self::Scalar),
            3 => Some(Self::Int),
            4 => Some(Self::Float),
            5 => Some(Self::LongLong),
            6 => Some(Self::Double),
            _ => None,
        }
    }
}

/// A validated header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InvocationHeader {
    /// Arguments in the block.
    pub argc: u8,
    /// Their kinds; entries past `argc` are `None`.
    pub kinds: [Option<ArgKind>; MAX_ARGS],
}

impl InvocationHeader {
    /// Validates the 32 header bytes. Order: magic and version →
    /// `BadAbiVersion`; argc → `TooManyArgs`; reserved bytes and kind
    /// slots past argc → `ReservedNotZero`; unknown kind codes →
    /// `BadArgKind`; `block_bytes` ≠ the size argc implies → `BadBlockSize`.
    pub fn parse(h: &[u8; HEADER_BYTES]) -> Result<Self> {
        let magic = u32::from_le_bytes([h[0], h[1], h[2], h[3]]);
        let version = u16::from_le_bytes([h[4], h[5]]);
        if magic != MAGIC || version != ABI_VERSION {
            return Err(Error::BadAbiVersion);
        }
        let argc = h[6];
        if argc as usize > MAX_ARGS {
            return Err(Error::TooManyArgs);
        }
        if h[7] != 0 || h[18] != 0 || h[19] != 0 || h[24..32].iter().any(|&b| b != 0) {
            return Err(Error::ReservedNotZero);
        }
        // Every reserved slot before any kind code (the order above; a
        // fuzz finding: the two used to interleave by slot).
        if h[8 + argc as usize..8 + MAX_ARGS].iter().any(|&c| c != 0) {
            return Err(Error::ReservedNotZero);
        }
        let mut kinds = [None; MAX_ARGS];
        for (i, kind) in kinds.iter_mut().enumerate().take(argc as usize) {
            *kind = Some(ArgKind::from_code(h[8 + i]).ok_or(Error::BadArgKind)?);
        }
        let size = u32::from_le_bytes([h[20], h[21], h[22], h[23]]);
        if size as usize != block_bytes(argc as usize) {
            return Err(Error::BadBlockSize);
        }
        Ok(Self { argc, kinds })
    }

    /// Bytes of the whole block.
    pub fn block_bytes(&self) -> usize {
        block_bytes(self.argc as usize)
    }
}

/// Builds a block in a fixed buffer (host side: tests and the mock
/// launcher; no allocation).
#[derive(Clone, Debug)]
pub struct InvocationBuilder {
    buf: [u8; MAX_BLOCK_BYTES],
    argc: usize,
    output: RawTensorDesc,
}

impl Default for InvocationBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl InvocationBuilder {
    /// An empty block (no arguments, a zeroed output descriptor).
    pub fn new() -> Self {
        Self { buf: [0; MAX_BLOCK_BYTES], argc: 0, output: RawTensorDesc::default() }
    }

    /// Appends an argument; `Err(TooManyArgs)` past 10.
    pub fn arg(&mut self, kind: ArgKind, desc: RawTensorDesc) -> Result<&mut Self> {
        if self.argc >= MAX_ARGS {
            return Err(Error::TooManyArgs);
        }
        // Inside the buffer: argc < MAX_ARGS was checked.
        if let Some(k) = self.buf.get_mut(8 + self.argc) {
            *k = kind as u8;
        }
        if let Some(d) = self.buf.get_mut(desc_offset(self.argc)..).and_then(|b| b.first_chunk_mut::<DESC_BYTES>()) {
            *d = desc.to_bytes();
        }
        self.argc += 1;
        Ok(self)
    }

    /// Sets the output descriptor.
    pub fn output(&mut self, desc: RawTensorDesc) -> &mut Self {
        self.output = desc;
        self
    }

    /// The finished block (header, arguments, output).
    pub fn build(&mut self) -> &[u8] {
        self.buf[0..4].copy_from_slice(&MAGIC.to_le_bytes());
        self.buf[4..6].copy_from_slice(&ABI_VERSION.to_le_bytes());
        self.buf[6] = self.argc as u8;
        let n = block_bytes(self.argc);
        self.buf[20..24].copy_from_slice(&(n as u32).to_le_bytes());
        // Inside the buffer: argc <= MAX_ARGS (`arg` checks).
        if let Some(d) = self.buf.get_mut(desc_offset(self.argc)..).and_then(|b| b.first_chunk_mut::<DESC_BYTES>()) {
            *d = self.output.to_bytes();
        }
        self.buf.get(..n).unwrap_or(&self.buf)
    }
}
