//! What the device enforces that a host run would not (SPEC §12), checked
//! on each core's report after a run: the stack the kernel would have,
//! accessors a multicore run may not use, and the warnings for what runs
//! on the device but not as on the host (unbuffered streams, printf from
//! cores whose output the device does not keep).
//!
//! The TCM pool shared by `tcm_malloc` and the stream buffers, and the
//! shape of the returned tensor, are enforced where they happen (the
//! runtime's access state and return gates), as on the device.

use super::simulator::{CoreReport, RunFailure};
use neuron_runtime::stack::DEFAULT_STACK_SIZE;
use neuron_runtime::Error;
use std::string::{String, ToString};
use std::vec::Vec;

/// The core's local stack a kernel runs on when it does not ask for more
/// with `-DSTACK_SIZE` (SPEC §12: "about 8 KiB", defined here).
pub const LOCAL_STACK_BYTES: u64 = 8 << 10;

/// Stream accessors buffered at once (SPEC §10: four 4 KiB buffers of the
/// 16 KiB pool); a further one runs per element.
pub const BUFFERED_STREAMS: u32 =
    neuron_runtime::access::stream_pool::DEFAULT_STREAM_POOL_BYTES / neuron_runtime::access::stream_pool::DEFAULT_STREAM_BUFFER_BYTES;

/// The stack a kernel has on the device when its launcher asked for
/// `requested` bytes (`STACK_SIZE`; 0 is the default): the local stack
/// when the request fits in it, else exactly the request (an HBM stack).
pub fn stack_on_device(requested: u32) -> u64 {
    let r = u64::from(if requested == 0 { DEFAULT_STACK_SIZE } else { requested });
    if r <= LOCAL_STACK_BYTES {
        LOCAL_STACK_BYTES
    } else {
        r
    }
}

/// How far below its caller's stack pointer the host library's own
/// frames may reach (its deepest paths: an invocation's setup and
/// cleanup, the C++ surface's factories, malloc, printf). Measured on the
/// repository's tests: up to ~12 KiB in a debug build of the simulator
/// (`customop_setup`/`customop_cleanup` called from a Rust launcher), 2.4
/// KiB in a release one, which is what kernel authors run. A kernel's own
/// frames deeper than this below its deepest library call are judged.
const LIBRARY_FRAMES: usize = if cfg!(debug_assertions) { 32 << 10 } else { 8 << 10 };

/// The kernel's own stack use on the host: how far below `launch_sp` (the
/// stack pointer it was launched at; 0: not known) its frames went.
///
/// Two measures: `sp_low`, the lowest stack pointer it called the library
/// at (`usize::MAX`: it never did), whose depth excludes the library's
/// frames (the host library's are not the device's); and
/// `lowest_touched`, the lowest byte of the painted stack overwritten in
/// the run. Touched bytes more than [`LIBRARY_FRAMES`] below the deepest
/// library call can only be the kernel's own frames (a recursion whose
/// deep levels call no library function): then they are its depth.
pub fn kernel_stack(launch_sp: usize, sp_low: usize, lowest_touched: usize) -> u64 {
    if launch_sp == 0 {
        return 0;
    }
    let by_calls = if sp_low == usize::MAX { 0 } else { launch_sp.saturating_sub(sp_low) };
    let kernels_own = sp_low == usize::MAX || lowest_touched < sp_low.saturating_sub(LIBRARY_FRAMES);
    let by_paint = if kernels_own { launch_sp.saturating_sub(lowest_touched) } else { 0 };
    by_calls.max(by_paint) as u64
}

/// The `-DSTACK_SIZE` to suggest for a kernel that used `used` bytes: the
/// next 4 KiB multiple with a quarter more room (the host's frames are not
/// the device's).
fn suggested_stack(used: u64) -> u64 {
    (used + used / 4).div_ceil(4096) * 4096
}

/// The run's failure for a core whose kernel used more stack than it has
/// on the device.
pub fn stack_failure(op: &str, c: &CoreReport) -> Option<RunFailure> {
    let allowed = stack_on_device(c.stack_requested);
    if c.kernel_stack <= allowed || c.unoptimised_kernel {
        return None;
    }
    let had = if c.stack_requested == 0 || u64::from(c.stack_requested) <= LOCAL_STACK_BYTES {
        std::format!("the core's local stack of {allowed} B (no -DSTACK_SIZE, or one that fits locally)")
    } else {
        std::format!("the {allowed} B its -DSTACK_SIZE asks for")
    };
    Some(RunFailure {
        code: Error::StackExceeded.code(),
        cpu: Some(c.cpu),
        reason: std::format!(
            "op `{op}`, core {}: the kernel's stack reached {} B, but on the device it has {had}: it would overflow there. Build with -DSTACK_SIZE={}",
            c.cpu,
            c.kernel_stack,
            suggested_stack(c.kernel_stack)
        ),
    })
}

/// The reason for a multicore accessor refusal on core `c`, naming the
/// tensor.
pub fn multicore_accessor_reason(op: &str, c: &CoreReport) -> Option<String> {
    let tensor = c.multicore_refused.as_deref()?;
    Some(std::format!(
        "op `{op}`, core {}: an element or stream accessor on {tensor} in a multicore run: on the device only tcm_accessor() gives correct results \
         in multicore mode; stage the data through tcm_accessor() and tcm_malloc()",
        c.cpu
    ))
}

/// The run's warnings: what works on the host but not as on the device.
pub fn warnings(op: &str, cores: &[CoreReport]) -> Vec<String> {
    let mut w = Vec::new();
    for c in cores {
        if c.unoptimised_kernel && c.kernel_stack > stack_on_device(c.stack_requested) {
            w.push(std::format!(
                "op `{op}`, core {}: the kernel's stack reached {} B, over the {} B it has on the device, but it is an unoptimised (debug) \
                 Rust build, whose frames are several times the device's: build it with --release to check the stack rule",
                c.cpu,
                c.kernel_stack,
                stack_on_device(c.stack_requested)
            ));
        }
        if c.unbuffered_streams != 0 {
            w.push(std::format!(
                "op `{op}`, core {}: {} stream accessor(s) opened without a buffer (more than {BUFFERED_STREAMS} open at once, or the 16 KiB TCM pool \
                 full): on the device they run at per-element speed",
                c.cpu,
                c.unbuffered_streams
            ));
        }
        if c.printf_lost != 0 {
            w.push(std::format!("op `{op}`, core {}: {} bytes of printf output were overwritten in the ring before the host read them", c.cpu, c.printf_lost));
        }
    }
    if cores.len() > 1 {
        let printing: Vec<String> = cores.iter().filter(|c| c.cpu != 0 && !c.printf.is_empty()).map(|c| c.cpu.to_string()).collect();
        if !printing.is_empty() {
            w.push(std::format!(
                "op `{op}`: cores {} printed; in multicore mode the device keeps core 0's printf output only (shown here, marked \"not kept\")",
                printing.join(", ")
            ));
        }
    }
    w
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_stack_a_kernel_has() {
        assert_eq!(stack_on_device(0), LOCAL_STACK_BYTES, "no STACK_SIZE: the local stack");
        assert_eq!(stack_on_device(4196), LOCAL_STACK_BYTES);
        assert_eq!(stack_on_device(8192), LOCAL_STACK_BYTES);
        assert_eq!(stack_on_device(8193), 8193, "beyond the local stack: what was asked");
        assert_eq!(stack_on_device(65536), 65536);
        assert_eq!(suggested_stack(18_943), 24_576);
        assert_eq!(BUFFERED_STREAMS, 4);
    }

    #[test]
    fn the_kernels_stack_counts_frames_that_call_no_library_function() {
        let sp = 1 << 20;
        // Calls at 3 KiB, the library's frames below them: the calls' depth.
        assert_eq!(kernel_stack(sp, sp - 3000, sp - 3000 - LIBRARY_FRAMES), 3000);
        // A recursion that called nothing went 130 KiB deep: that depth.
        assert_eq!(kernel_stack(sp, sp - 3000, sp - (130 << 10)), 130 << 10);
        // A kernel that never called the library: the touched depth.
        assert_eq!(kernel_stack(sp, usize::MAX, sp - 5000), 5000);
        // Nothing touched below the launch (the paint's top above it).
        assert_eq!(kernel_stack(sp, usize::MAX, sp + 64), 0);
        // The launch not known: nothing judged.
        assert_eq!(kernel_stack(0, 100, 50), 0);
    }

    #[test]
    fn a_stack_over_the_limit_names_op_use_and_flag() {
        let mut c = CoreReport { cpu: 3, kernel_stack: 9000, ..CoreReport::default() };
        let f = stack_failure("big", &c).expect("over 8 KiB fails");
        assert_eq!(f.code, Error::StackExceeded.code());
        assert!(f.reason.contains("op `big`, core 3") && f.reason.contains("9000 B") && f.reason.contains("-DSTACK_SIZE=12288"), "{}", f.reason);
        c.stack_requested = 16384;
        assert!(stack_failure("big", &c).is_none(), "asked for 16 KiB: fits");
        c.kernel_stack = 16385;
        assert!(stack_failure("big", &c).unwrap().reason.contains("the 16384 B its -DSTACK_SIZE asks for"));
    }
}
