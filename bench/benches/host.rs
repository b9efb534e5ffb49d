//! Host benchmarks. Every group holds `ours` and `native`, measured in the
//! same run, so `cargo xtask bench-report` can print ratios that do not
//! depend on how loaded the machine is.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neuron_bench::{fill, ready_core, DATA};
use neuron_runtime::memcpy::MemcpyMethod;
use std::hint::black_box;

fn translate(c: &mut Criterion) {
    let mut s = ready_core();
    fill(&s, DATA, 4096);
    s.translate(DATA).unwrap();
    let mut g = c.benchmark_group("translate_hit");
    g.bench_function("ours", |b| b.iter(|| s.translate(black_box(DATA + 64)).unwrap()));
    let base = s.translate(DATA).unwrap() as usize;
    g.bench_function("native", |b| b.iter(|| black_box(base) + black_box(64usize)));
    g.finish();

    // A miss every time: four regions round-robin over three windows.
    let mut g = c.benchmark_group("translate_miss");
    let regions: Vec<u64> = (0..4).map(|i| DATA + i * (16 << 20)).collect();
    let mut k = 0;
    g.bench_function("ours", |b| {
        b.iter(|| {
            k = (k + 1) % 4;
            s.translate(black_box(regions[k])).unwrap()
        })
    });
    g.bench_function("native", |b| b.iter(|| black_box(base) + black_box(64usize)));
    g.finish();
}

fn memcpy(c: &mut Criterion) {
    const N: usize = 16 << 10;
    let mut s = ready_core();
    fill(&s, DATA, N);
    let mut dst = vec![0u8; N];
    let src = vec![1u8; N];
    for (name, m) in [("c", MemcpyMethod::CMemcpy), ("vec", MemcpyMethod::VecMemcpy), ("dma", MemcpyMethod::Dma)] {
        let mut g = c.benchmark_group(format!("memcpy_{name}_16k_read"));
        g.throughput(Throughput::Bytes(N as u64));
        s.set_memcpy_method(m as u32).unwrap();
        g.bench_function("ours", |b| b.iter(|| s.read_soc(&mut dst, black_box(DATA)).unwrap()));
        g.bench_function("native", |b| b.iter(|| dst.copy_from_slice(black_box(&src))));
        g.finish();
    }
}

fn heaps(c: &mut Criterion) {
    let mut s = ready_core();
    let mut g = c.benchmark_group("hbm_alloc_free");
    g.bench_function("ours", |b| {
        b.iter(|| {
            let a = s.hbm.allocate(black_box(4096), 0).unwrap();
            s.hbm.free(a).unwrap();
        })
    });
    g.bench_function("native", |b| b.iter_batched(|| (), |_| drop(black_box(Vec::<u8>::with_capacity(4096))), BatchSize::SmallInput));
    g.finish();
    let mut g = c.benchmark_group("dataram_alloc_free");
    g.bench_function("ours", |b| {
        b.iter(|| {
            let p = s.dataram.allocate(black_box(1024), 0).unwrap();
            s.dataram.free(p.as_ptr()).unwrap();
        })
    });
    g.bench_function("native", |b| b.iter_batched(|| (), |_| drop(black_box(Vec::<u8>::with_capacity(1024))), BatchSize::SmallInput));
    g.finish();
}

criterion_group!(benches, translate, memcpy, heaps);
criterion_main!(benches);
