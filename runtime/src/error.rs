//! The library's error codes: stable numbers a C caller can read, each with
//! a message. Numbers never change meaning; new errors take new numbers.

use core::fmt;

macro_rules! errors {
    ($( $(#[$doc:meta])* $name:ident = $code:literal, $msg:literal; )*) => {
        /// Every way the runtime can refuse a request.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        #[repr(i32)]
        #[non_exhaustive]
        pub enum Error {
            $( $(#[$doc])* $name = $code, )*
        }

        impl Error {
            /// Every error, in code order (for documentation and tests).
            pub const ALL: &'static [Error] = &[$(Error::$name,)*];

            /// The stable number of this error (never 0).
            pub const fn code(self) -> i32 {
                self as i32
            }

            /// The error with this number, if any.
            pub const fn from_code(code: i32) -> Option<Error> {
                match code {
                    $( $code => Some(Error::$name), )*
                    _ => None,
                }
            }

            /// A one-line reason, NUL-terminated for C callers.
            pub const fn message_c(self) -> &'static str {
                match self {
                    $( Error::$name => concat!($msg, "\0"), )*
                }
            }
        }
    };
}

errors! {
    // -- translation --
    /// The address is in no pinned window and outside HBM.
    AddressUnmapped = 1, "address is outside every region a translation window can map";
    /// A translation was asked of an uninitialised context.
    TranslateNotReady = 2, "translation context is not initialised";
    // -- heaps --
    /// The heap has no free block large enough.
    OutOfMemory = 10, "out of memory";
    /// The pointer is not currently allocated by this heap.
    DoubleFree = 11, "block freed twice (or never allocated)";
    /// The pointer does not belong to this heap.
    ForeignPointer = 12, "pointer does not belong to this heap";
    /// The HBM heap's fixed table of block headers is full.
    BlockTableFull = 13, "heap block table is full";
    /// Alignment is not a power of two or is too large.
    BadAlignment = 14, "alignment must be a power of two";
    /// The heap was used before its init function ran.
    HeapNotReady = 15, "heap is not initialised";
    /// The size overflows the heap's arithmetic.
    SizeOverflow = 16, "requested size overflows";
    /// A node of the heap's free list, kept in free heap memory, was
    /// overwritten: the heap refuses every allocation and free after.
    HeapCorrupted = 17, "heap's free list was overwritten (a store into freed or unallocated heap memory)";
    // -- transfers --
    /// `neuron_set_memcpy_method` with a value >= 3.
    BadMemcpyMethod = 20, "memcpy method must be 0 (C), 1 (vector) or 2 (DMA)";
    /// The DMA engine reported a fault for a descriptor.
    DmaFault = 21, "DMA engine faulted on a descriptor";
    /// A local buffer the DMA engine cannot reach.
    DmaUnreachable = 22, "local buffer is outside data RAM";
    /// The DMA queue was used before `customop_setup` armed it.
    DmaNotArmed = 23, "DMA queue is not armed";
    /// `MEM_WINDOW0_LO` does not read back `SUNDA_APB_BASE` at DMA init.
    DmaWindowCheck = 24, "MEM_WINDOW0_LO does not read back the APB base";
    // -- marshalling (SPEC 6 gates) --
    /// The invocation has more than 10 arguments.
    TooManyArgs = 30, "more than 10 arguments";
    /// A reader was called after the last argument.
    NoMoreArgs = 31, "read past the last argument";
    /// The reader called does not match the argument's kind.
    WrongArgKind = 32, "argument kind differs from the reader called";
    /// A tensor's storage address is 0.
    NullStorage = 33, "tensor storage address is null";
    /// The dtype code is not one of the eight that marshal.
    DtypeNotMarshallable = 34, "dtype cannot be marshalled (accepted: 2,3,4,6,7,8,10,12)";
    /// The returned tensor's dtype differs from the output descriptor's.
    DtypeMismatch = 35, "returned tensor dtype differs from the output descriptor";
    /// `num_dim` is 0 or above the limit of its shape width.
    BadRank = 36, "num_dim is 0 or above the limit of its shape width";
    /// A reserved byte or field is not 0.
    ReservedNotZero = 37, "a reserved descriptor field is not zero";
    /// The shape is out-of-line.
    OutOfLineShape = 38, "out-of-line shapes are not supported";
    /// `buffer_bytes` is 0 or smaller than the shape needs.
    BufferTooSmall = 39, "buffer_bytes is zero or smaller than the shape needs";
    /// A scalar argument has more than one element.
    ScalarNotOneElement = 40, "scalar argument is not a one-element tensor";
    /// The invocation block has an unknown ABI version.
    BadAbiVersion = 41, "invocation block ABI version is not supported";
    /// No invocation is bound (`customop_setup` not called).
    NoInvocation = 42, "no invocation is bound";
    /// An unknown location or shape-width code in a descriptor.
    BadDescriptorCode = 43, "unknown location or shape width in a descriptor";
    /// An argument kind code outside the table.
    BadArgKind = 44, "unknown argument kind code";
    /// A shape entry is 0 or the element count overflows.
    BadShape = 45, "a shape entry is zero or the element count overflows";
    /// The kernel neither claimed nor returned its output.
    OutputNotWritten = 46, "kernel neither claimed nor returned its output";
    /// The invocation block is shorter than its header says, or its size
    /// field disagrees with its argument count.
    BadBlockSize = 47, "invocation block size disagrees with its header";
    // -- registration and launch --
    /// The entry hand-off block is smaller than 36 bytes.
    AbiMismatch = 50, "entry hand-off block is smaller than 36 bytes (FAILURE_ABI_MISMATCH)";
    /// The kernel registers 0x8000 ops or more.
    TooManyOps = 51, "op count must be below 0x8000";
    /// No HBM stack could be allocated for the stack switch.
    NoHbmStack = 60, "no HBM stack available for the stack switch";
    /// A requested stack is larger than the 4 MiB maximum.
    StackTooLarge = 61, "requested stack exceeds the 4 MiB maximum";
    /// A panic inside the runtime or a Rust kernel.
    Panic = 70, "panic in the runtime or a Rust kernel";
    /// A C entry point was called on a host thread with no simulated core.
    NoCore = 71, "no core is bound to the calling thread (host simulator)";
    /// The runtime is already inside a call on this core (re-entered).
    Reentered = 72, "runtime entered again from inside one of its own calls";
    // -- kernel-facing access (SPEC 8) --
    /// Under the COHERENT policy, an accessor whose kind may not coexist
    /// with the tensor's live accessors.
    CoherencyConflict = 80, "accessor refused: it may not coexist with the tensor's live accessors (COHERENT policy)";
    /// The per-core table of tracked tensors is full.
    CoherencyTableFull = 81, "too many tensors with live accessors or a non-default coherence policy";
    /// A coherence policy outside 0..=2, or an unknown accessor kind.
    BadCoherencyPolicy = 82, "coherence policy must be 0 (COHERENT), 1 (INCOHERENT_VERBOSE) or 2 (INCOHERENT_QUIET)";
    /// An index outside its dimension, or a range outside the tensor.
    IndexOutOfBounds = 83, "index or range outside the tensor";
    /// The accessor's rank differs from the tensor's.
    RankMismatch = 84, "accessor rank differs from the tensor's number of dimensions";
    /// The accessor's element type differs from the tensor's dtype.
    ElementTypeMismatch = 85, "accessor element type differs from the tensor's dtype";
    /// The stream is closed (or was never opened).
    StreamClosed = 86, "stream accessor is closed";
    /// A stream read or write past the tensor's last element.
    StreamEnd = 87, "stream accessor is past the tensor's last element";
    /// A tensor operation does not accept the tensor's dtype.
    DtypeNotSupported = 88, "the operation does not accept this dtype";
    /// Operands of a tensor operation differ in shape (no broadcasting).
    ShapeMismatch = 89, "operand shapes differ (no broadcasting)";
    /// A pool resized while in use, or a size it cannot take.
    BadPoolConfig = 90, "pool size invalid, or the pool is in use";
    /// A printf ring size that is not a power of two up to 128 KiB.
    BadRingSize = 91, "printf ring size must be a power of two from 64 bytes to 128 KiB";
    /// A tensor's storage is not aligned for its element type.
    Misaligned = 92, "tensor storage is not aligned to its element size";
    /// An accessor released that was not registered.
    AccessorNotRegistered = 93, "accessor released that was not registered";
    /// The simulator found a guard region after a tensor overwritten.
    GuardOverwritten = 94, "a kernel wrote past the end of a tensor (guard region overwritten)";
    /// A stream's state (the caller's C struct) whose buffer fields
    /// disagree with the core's stream pool.
    StreamCorrupted = 95, "stream state is corrupted: its buffer slot, capacity or count disagrees with the stream pool";
    /// A tensor's `size(d)` or `stride(d)` asked for a dimension its rank
    /// does not have (libtorch throws there).
    DimOutOfRange = 96, "dimension out of range: size(d) or stride(d) past the tensor's number of dimensions";
    /// `add`/`sub` of integer tensors with a floating-point `alpha`
    /// (libtorch refuses it rather than truncate).
    AlphaNotIntegral = 97, "add/sub of integer tensors takes an integer alpha, not a floating-point one";
    /// A kernel's `assert` failed (the device's `<assert.h>`): the abort
    /// report names the expression, file and line.
    AssertFailed = 98, "assertion failed in the kernel";
    /// The device's C++ standard library stopped the kernel: a `throw` in
    /// its `-fno-exceptions` build (e.g. `std::vector` past `max_size()`,
    /// `at()` out of range), a failed hardening check, or a pure virtual
    /// call. The abort report carries libc++'s message.
    CxxLibraryAbort = 99, "the C++ standard library stopped the kernel";
    // -- host simulator (its C API `neuron_sim_*` and `Simulator`) --
    /// A run names an op the kernel did not register (or an empty name).
    UnknownOp = 100, "no op of this name is registered";
    /// A run with no output tensor set.
    NoOutput = 101, "no output tensor is set (call set_output first)";
    /// The op read fewer arguments than the invocation holds.
    ArgCountMismatch = 102, "the invocation holds more arguments than the op reads";
    /// A core count other than 1 or 8.
    BadCoreCount = 103, "core count must be 1 or 8";
    /// A pointer argument that must not be NULL is NULL.
    NullArgument = 104, "a required pointer argument is NULL";
    /// A tensor larger than the simulator's HBM can still hold.
    TensorTooLarge = 105, "tensor does not fit in the simulated HBM";
    /// The output was read before a run, or after a failed run.
    NoRunResult = 106, "no successful run has produced the output (none yet, or the last one failed)";
    /// The kernel left output elements unwritten.
    OutputNotCovered = 107, "output elements were never written by the run";
    /// A simulated core's host thread could not be started.
    CoreThreadFailed = 108, "a simulated core's thread could not be started";
    /// Two cores wrote the same output bytes in a multicore run.
    CoreWritesOverlap = 109, "two cores wrote the same output bytes";
    // -- what the device enforces (SPEC §12) --
    /// The kernel returned a tensor whose shape differs from the output's
    /// (the shape function's).
    ReturnShapeMismatch = 110, "returned tensor's shape differs from the shape function's output shape";
    /// A shape breaks the device's dimension rule.
    DimTooLarge = 111, "shape exceeds the device's limit: up to 8 dims of at most 65,535 each, or up to 4 dims of at most 4,294,967,295 each";
    /// The kernel's stack use exceeds the stack it has on the device.
    StackExceeded = 112, "kernel stack use exceeds the stack it has on the device (build with -DSTACK_SIZE=N)";
    /// An element or stream accessor was created in a multicore run.
    MulticoreAccessor = 113, "element and stream accessors are undefined behaviour in multicore mode: use tcm_accessor";
    /// The kernel wrote into an input tensor.
    InputWritten = 114, "kernel wrote into an input tensor (inputs are const)";
    /// The kernel read memory nothing wrote.
    UninitialisedRead = 115, "kernel read memory nothing wrote (uninitialised read)";
    /// A core read bytes another core wrote in the same run.
    CrossCoreRead = 116, "a core read output bytes another core wrote in the same run (no barrier between cores)";
    /// A simulator could not be brought back to its fresh state.
    SimResetFailed = 117, "the simulator could not be reset to its fresh state";
    /// A staged argument is not where the simulator places the next one.
    StagedOutOfPlace = 119, "a staged tensor argument is not where the next argument is placed (neuron_sim_place_span apart from the tensor area's start)";
    /// Staging on a simulator not made on the caller's HBM file.
    NotStaged = 120, "the simulator was not made on a staging HBM file (neuron_sim_new_staged)";
    /// The kernel read or wrote memory outside every live block and
    /// tensor (found on the emulated cores).
    OutsideBlocks = 121, "kernel read or wrote memory outside every live block and tensor";
    /// The kernel read or wrote a block it had freed (found on the
    /// emulated cores).
    UseAfterFree = 122, "kernel read or wrote a block after it was freed (use after free)";
}

impl Error {
    /// The reason without the trailing NUL.
    pub fn message(self) -> &'static str {
        let m = self.message_c();
        &m[..m.len() - 1]
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {}: {}", self.code(), self.message())
    }
}

/// Result of a runtime operation.
pub type Result<T> = core::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_unique_nonzero_and_round_trip() {
        for (i, e) in Error::ALL.iter().enumerate() {
            assert_ne!(e.code(), 0);
            assert_eq!(Error::from_code(e.code()), Some(*e));
            assert!(e.message_c().ends_with('\0'));
            assert!(!e.message().contains('\0'));
            for f in &Error::ALL[i + 1..] {
                assert_ne!(e.code(), f.code());
            }
        }
        assert_eq!(Error::from_code(0), None);
    }
}
