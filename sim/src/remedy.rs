//! What to do about each error, in a sentence: the usual fix a kernel
//! author applies. The report prints it under the verdict, and the "what
//! to do" column of docs/errors.md is generated from this table.

use neuron_runtime::Error;

/// Every error's usual fix, in code order.
const FIXES: &[(Error, &str)] = &[
    (Error::AddressUnmapped, "translate only addresses of the tensors the kernel was given or made (an address off a tensor's end, or an SBUF offset past its size, is a bug in the kernel's arithmetic)"),
    (Error::TranslateNotReady, "translate only inside a launched op: the runtime sets the context up before the kernel runs"),
    (Error::OutOfMemory, "free what the kernel no longer needs, allocate less, or work in smaller pieces; the report names the heap, the size asked for and what was free"),
    (Error::DoubleFree, "free each block once, and only blocks this heap gave out"),
    (Error::ForeignPointer, "free a block through the heap that gave it out (HBM, data RAM, TCM or libc)"),
    (Error::BlockTableFull, "make fewer, larger allocations (one buffer carved up rather than many small blocks)"),
    (Error::BadAlignment, "pass an alignment that is a power of two (or 0 for the default)"),
    (Error::HeapNotReady, "allocate only inside a launched op: the runtime sets the heaps up before the kernel runs"),
    (Error::SizeOverflow, "check the size computation: it overflowed (often a negative count turned unsigned)"),
    (Error::HeapCorrupted, "find the store into heap memory the kernel does not own (a block used after its free, or an index past a block's end): run the same kernel on the emulated cores (--on both), whose checks name the line"),
    (Error::BadMemcpyMethod, "pass 0 (C loop), 1 (vector) or 2 (DMA) to neuron_set_memcpy_method"),
    (Error::DmaFault, "check the transfer's addresses and length: both ends must lie in memory the tensor or heap block owns"),
    (Error::DmaUnreachable, "DMA into and out of data RAM only: stage through neuron_dataram_allocate or tcm_malloc, not the stack or a static"),
    (Error::DmaNotArmed, "issue DMA only inside a launched op"),
    (Error::DmaWindowCheck, "the core's window registers are not as the runtime left them: do not write MEM_WINDOW registers from the kernel"),
    (Error::TooManyArgs, "give the op at most 10 arguments (pack more into one tensor)"),
    (Error::NoMoreArgs, "make the op's C++ signature match the arguments it is called with"),
    (Error::WrongArgKind, "make the op's C++ signature match the arguments it is called with (a tensor where a tensor is passed, int where an int is)"),
    (Error::NullStorage, "pass a tensor that has storage; an accessor that was refused earlier reads as null too, so fix the first error"),
    (Error::DtypeNotMarshallable, "convert the input to one of uint8, int8, int16, int32, int64, float16, bfloat16 or float32 (NumPy: x.astype(np.float32); torch: x.to(torch.float32))"),
    (Error::DtypeMismatch, "return a tensor of the output's dtype (made with the output's torch::k... dtype, or get_dst_tensor()), or make the shape function's output the dtype the kernel computes"),
    (Error::BadRank, "give tensors of 1 to 8 dimensions (1 to 4 when a dimension is above 65,535)"),
    (Error::ReservedNotZero, "the invocation block was not written by this library's tools: rebuild the caller against this version"),
    (Error::OutOfLineShape, "pass shapes inline (the device takes no out-of-line shapes)"),
    (Error::BufferTooSmall, "give the tensor storage of at least its element count times its element size"),
    (Error::ScalarNotOneElement, "pass a one-element tensor (or a plain number) for a Scalar argument"),
    (Error::BadAbiVersion, "rebuild the caller and the kernel against the same version of this library"),
    (Error::NoInvocation, "call the op through a launcher (customop run, the simulator or the device), not directly"),
    (Error::BadDescriptorCode, "the invocation block was not written by this library's tools: rebuild the caller against this version"),
    (Error::BadArgKind, "the invocation block was not written by this library's tools: rebuild the caller against this version"),
    (Error::BadShape, "give shapes whose every entry is at least 1 and whose element count fits 64 bits"),
    (Error::OutputNotWritten, "write the output through get_dst_tensor() or return a tensor of the output's shape and dtype"),
    (Error::BadBlockSize, "the invocation block was not written by this library's tools: rebuild the caller against this version"),
    (Error::AbiMismatch, "rebuild the kernel against this version of the library (its hand-off block is too small)"),
    (Error::TooManyOps, "register fewer than 32768 ops in one library"),
    (Error::NoHbmStack, "ask for a smaller stack (-DSTACK_SIZE) or free HBM before the op runs"),
    (Error::StackTooLarge, "build with a -DSTACK_SIZE of at most 4 MiB"),
    (Error::Panic, "read the panic's message in the report (a Rust kernel's unwrap or index out of range, usually) and fix the line it names"),
    (Error::NoCore, "call the library's functions only from a kernel the simulator (or device) is running"),
    (Error::Reentered, "do not call the library from inside one of its own callbacks"),
    (Error::CoherencyConflict, "close the tensor's other accessors before making this one, or set the tensor's coherence policy to INCOHERENT_QUIET if the overlap is intended"),
    (Error::CoherencyTableFull, "keep fewer tensors with live accessors at once (let accessors go out of scope)"),
    (Error::BadCoherencyPolicy, "pass COHERENT (0), INCOHERENT_VERBOSE (1) or INCOHERENT_QUIET (2)"),
    (Error::IndexOutOfBounds, "fix the index at the line the report names: it is outside the dimension's size (often a loop's `<=` for `<`, or a size taken from the wrong tensor)"),
    (Error::RankMismatch, "make the accessor's N the tensor's number of dimensions (x.dim())"),
    (Error::ElementTypeMismatch, "make the accessor's element type the tensor's dtype (float for float32, int32_t for int32, c10::Half for float16, ...) or convert the tensor first"),
    (Error::StreamClosed, "use a stream accessor only while it is open (before close() and the end of its scope)"),
    (Error::StreamEnd, "read or write at most numel() elements through a stream accessor"),
    (Error::DtypeNotSupported, "convert the tensor to a dtype the operation takes (its documentation lists them)"),
    (Error::ShapeMismatch, "give the operation operands of the same shape (there is no broadcasting): expand or slice one first"),
    (Error::BadPoolConfig, "resize the pool only while none of its buffers is in use, to a size it takes"),
    (Error::BadRingSize, "pass a power of two from 64 bytes to 128 KiB"),
    (Error::Misaligned, "allocate the tensor's storage aligned to its element size"),
    (Error::AccessorNotRegistered, "let accessors end with their scope; do not release one twice"),
    (Error::GuardOverwritten, "a raw pointer wrote past the tensor's end: check the loop bounds of raw-pointer writes, or use an accessor, which checks them"),
    (Error::StreamCorrupted, "do not write into a stream accessor's state: it belongs to the library"),
    (Error::DimOutOfRange, "ask size(d) and stride(d) only for d below the tensor's dim(); check the tensor's rank is the one the kernel expects"),
    (Error::AlphaNotIntegral, "give integer tensors an integer alpha, or convert the tensors to a float dtype first"),
    (Error::AssertFailed, "the assertion the report names failed: fix the condition it checks, or the input that broke it"),
    (Error::CxxLibraryAbort, "read libc++'s message in the report (vector::at past the end, a length past max_size): fix the index or size it names"),
    (Error::UnknownOp, "run an op the kernel registers (the names in its NEURON_LIBRARY block) and spell its name as registered"),
    (Error::NoOutput, "set the output tensor (set_output) before running"),
    (Error::ArgCountMismatch, "pass exactly the arguments the op's signature reads"),
    (Error::BadCoreCount, "run on 1 or 8 cores"),
    (Error::NullArgument, "pass a non-NULL pointer for every required argument"),
    (Error::TensorTooLarge, "use smaller tensors (and, if NEURON_SIM_HBM_GIB is set below its 64 GiB default, raise it)"),
    (Error::NoRunResult, "read the output only after a run that passed; to look at a failed run's output use neuron_sim_inspect_output (customop run --keep-output)"),
    (Error::OutputNotCovered, "write every output element (the report names the ranges left unwritten); in a multicore kernel, check each core's share covers its slice"),
    (Error::CoreThreadFailed, "the host could not start a thread: free host resources (threads, memory) and run again"),
    (Error::CoreWritesOverlap, "give each core a disjoint slice of the output (the report names the cores and bytes)"),
    (Error::ReturnShapeMismatch, "return a tensor of exactly the shape function's shape, or write into get_dst_tensor()"),
    (Error::DimTooLarge, "keep shapes within up to 8 dims of at most 65,535, or up to 4 dims of at most 4,294,967,295: reshape the tensor"),
    (Error::StackExceeded, "put large arrays on a heap (tcm_malloc, neuron_dataram_allocate) instead of the stack, or build with -DSTACK_SIZE=N"),
    (Error::MulticoreAccessor, "in multicore mode use tcm_accessor and bulk copies, not element or stream accessors"),
    (Error::InputWritten, "write only the output: inputs are const (copy an input into a tensor of your own to change it)"),
    (Error::UninitialisedRead, "write an element before reading it (torch::empty's elements start undefined; use torch::zeros if the kernel reads before writing)"),
    (Error::CrossCoreRead, "do not read what another core writes in the same run: the cores have no barrier; compute the value on the core that needs it"),
    (Error::SimResetFailed, "make a new simulator: this one cannot be reused"),
    (Error::StagedOutOfPlace, "write each staged argument at the offset neuron_sim_place_span gives, in argument order"),
    (Error::NotStaged, "make the simulator with neuron_sim_new_staged to stage arguments"),
    (Error::OutsideBlocks, "fix the index or pointer at the line the report names: it reaches past the block or tensor it belongs to (often a loop's `<=` for `<`)"),
    (Error::UseAfterFree, "use a block only before freeing it: move the free (tcm_free, free, delete) after the last use, or keep the block"),
];

/// The usual fix for `e`, in a sentence ("" for a code with none yet).
pub fn what_to_do(e: Error) -> &'static str {
    FIXES.iter().find(|(f, _)| *f == e).map_or("", |(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_error_says_what_to_do() {
        let missing: Vec<Error> = Error::ALL.iter().copied().filter(|&e| what_to_do(e).is_empty()).collect();
        assert!(missing.is_empty(), "no fix for {missing:?}");
        assert!(FIXES.iter().all(|(_, s)| !s.contains('|') && !s.ends_with('.')), "a fix is one table cell, no full stop");
    }
}
