//! The host stream's fixed cost, instruction by instruction: one
//! `ReadStream` open, a one-element `read_into` and close (the
//! `stream_open_close` bench row) in a function of its own, run `n` times
//! (argument 1; default 3) on the benches' simulated core, so a debugger
//! can record one warm call: `perf/host_insns.gdb` counts its
//! instructions by part (BENCHMARKS.md, the host stream row).

use neuroncustomop::kernel::Tensor;
use std::hint::black_box;

use neuron_bench::kernel_core;

/// What the bench's iteration does.
#[inline(never)]
fn stream_open_read_close(t: &Tensor, dst: &mut [f32]) {
    let mut st = t.read_stream_accessor::<f32>().unwrap();
    assert_eq!(st.read_into(black_box(dst)).unwrap(), dst.len());
    st.close().unwrap();
}

fn main() {
    let n: usize = std::env::args().nth(1).map_or(3, |s| s.parse().expect("a count"));
    let (mut core, t, _) = kernel_core::kernel_core();
    core.enter(|| {
        let mut dst = [0f32; 1];
        for _ in 0..n {
            stream_open_read_close(&t, &mut dst);
        }
    });
}
