//! Host benchmarks. Every group holds `ours` and `native`, measured in the
//! same run, so `cargo xtask bench-report` can print ratios that do not
//! depend on how loaded the machine is.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use neuron_bench::{fill, ready_core, DATA};
use neuron_runtime::memcpy::MemcpyMethod;
use neuroncustomop::kernel::tcm_scope;
use std::hint::black_box;

use neuron_bench::kernel_core::{kernel_core, KN};

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
    // The page after the region written too: a copy ending before a
    // never-touched page of the mock's HBM pays ~110 ns (see `kernel_core`).
    fill(&s, DATA, N + 4096);
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
            let a = s.hbm().allocate(black_box(4096), 0).unwrap();
            // SAFETY: `a` is used no further.
            unsafe { s.hbm().free(a) }.unwrap();
        })
    });
    g.bench_function("native", |b| b.iter_batched(|| (), |_| drop(black_box(Vec::<u8>::with_capacity(4096))), BatchSize::SmallInput));
    g.finish();
    let mut g = c.benchmark_group("dataram_alloc_free");
    g.bench_function("ours", |b| {
        b.iter(|| {
            let p = s.dataram().allocate(black_box(1024), 0).unwrap();
            // SAFETY: `p` is used no further.
            unsafe { s.dataram().free(p.as_ptr()) }.unwrap();
        })
    });
    g.bench_function("native", |b| b.iter_batched(|| (), |_| drop(black_box(Vec::<u8>::with_capacity(1024))), BatchSize::SmallInput));
    g.finish();
}

/// f32 in a 4 KiB page.
const PAGE_F32: usize = 1024;

fn kernel_api(c: &mut Criterion) {
    let (mut core, t_in, t_out) = kernel_core();
    let host: Vec<f32> = (0..KN).map(|i| i as f32).collect();
    let mut host_out = vec![0f32; KN];

    // Per-element accessor read vs a volatile read of a host slice.
    let mut g = c.benchmark_group("accessor_read");
    g.throughput(Throughput::Elements(KN as u64));
    core.enter(|| {
        let acc = t_in.const_accessor::<f32, 1>().unwrap();
        g.bench_function("ours", |b| {
            b.iter(|| {
                let mut s = 0f32;
                for i in 0..KN as i64 {
                    s += acc.get([black_box(i)]).unwrap();
                }
                s
            })
        });
    });
    g.bench_function("native", |b| {
        b.iter(|| {
            let p = black_box(host.as_ptr());
            let mut s = 0f32;
            for i in 0..KN {
                // SAFETY: i < KN = host.len().
                s += unsafe { p.add(black_box(i)).read_volatile() };
            }
            s
        })
    });
    g.finish();

    let mut g = c.benchmark_group("accessor_write");
    g.throughput(Throughput::Elements(KN as u64));
    core.enter(|| {
        let acc = t_out.accessor::<f32, 1>().unwrap();
        g.bench_function("ours", |b| {
            b.iter(|| {
                for i in 0..KN as i64 {
                    acc.set([black_box(i)], i as f32).unwrap();
                }
            })
        });
    });
    g.bench_function("native", |b| {
        b.iter(|| {
            let p = black_box(host_out.as_mut_ptr());
            for i in 0..KN {
                // SAFETY: i < KN = host_out.len().
                unsafe { p.add(black_box(i)).write_volatile(i as f32) };
            }
        })
    });
    g.finish();

    // Streams, bulk: the whole tensor into a slice by `read_into`, open to
    // close, vs `copy_from_slice` of the same bytes.
    // glibc's `memmove` of these 16 KiB takes 90-290 ns on the same
    // machine depending on where source and destination sit (their
    // offsets within a cache line and a page), so both sides of these rows
    // write the same destination and the native source sits at the window
    // pointer's page offset: the rows compare the same copy, not two
    // placements by the allocator.
    let src = core.enter(|| neuroncustomop::kernel::translate(t_in.view().storage)).unwrap().cast::<f32>().cast_const();
    let mut backing = vec![0f32; KN + PAGE_F32];
    let native_src = {
        let want = (src as usize % 4096) / 4;
        let have = (backing.as_ptr() as usize % 4096) / 4;
        let off = (want + PAGE_F32 - have) % PAGE_F32;
        let s = &mut backing[off..off + KN];
        s.copy_from_slice(&host);
        &*s
    };
    assert_eq!(native_src.as_ptr() as usize % 4096, src as usize % 4096);
    // The floor under every window read on the host: a bare `memmove` of
    // the 16 KiB from the tensor's window pointer (no runtime call). Read
    // the stream and memcpy rows against it.
    let mut g = c.benchmark_group("window_memmove_16k");
    g.throughput(Throughput::Bytes((KN * 4) as u64));
    g.bench_function("ours", |b| {
        // SAFETY: `src` shows the tensor's KN f32 (one record maps the
        // whole tensor; no translate runs meanwhile), `host_out` holds KN.
        b.iter(|| unsafe { core::ptr::copy_nonoverlapping(black_box(src), host_out.as_mut_ptr(), KN) })
    });
    g.bench_function("native", |b| b.iter(|| host_out.copy_from_slice(black_box(native_src))));
    g.finish();

    let mut g = c.benchmark_group("stream_read");
    g.throughput(Throughput::Bytes((KN * 4) as u64));
    core.enter(|| {
        g.bench_function("ours", |b| {
            b.iter(|| {
                let mut st = t_in.read_stream_accessor::<f32>().unwrap();
                assert_eq!(st.read_into(black_box(&mut host_out[..])).unwrap(), KN);
                st.close().unwrap();
            })
        });
    });
    g.bench_function("native", |b| b.iter(|| host_out.copy_from_slice(black_box(native_src))));
    g.finish();

    // One entry point of the Rust kernel API (`cpu_id`: the re-entry guard,
    // the cached-hit fold, the panic catch, the error bookkeeping).
    let mut g = c.benchmark_group("entry_point");
    core.enter(|| {
        g.bench_function("ours", |b| b.iter(neuroncustomop::kernel::cpu_id));
    });
    g.bench_function("native", |b| b.iter(|| black_box(0u32)));
    g.finish();

    // The stream's fixed cost: open, a one-element `read_into`, close
    // (three entry points, the coherency registration, the pool slot).
    let mut g = c.benchmark_group("stream_open_close");
    core.enter(|| {
        let mut dst = [0f32; 1];
        g.bench_function("ours", |b| {
            b.iter(|| {
                let mut st = t_in.read_stream_accessor::<f32>().unwrap();
                assert_eq!(st.read_into(black_box(&mut dst[..])).unwrap(), 1);
                st.close().unwrap();
            })
        });
    });
    g.bench_function("native", |b| b.iter(|| host_out[..1].copy_from_slice(black_box(&host[..1]))));
    g.finish();

    // Streams, per element: the whole tensor, element by element, open to
    // close (4 refills / flushes of 4 KiB; a serial float-add chain) vs
    // `copy_from_slice` of the same bytes.
    let mut g = c.benchmark_group("stream_read_elem");
    g.throughput(Throughput::Bytes((KN * 4) as u64));
    core.enter(|| {
        g.bench_function("ours", |b| {
            b.iter(|| {
                let mut st = t_in.read_stream_accessor::<f32>().unwrap();
                let mut s = 0f32;
                for _ in 0..KN {
                    s += st.read().unwrap();
                }
                st.close().unwrap();
                s
            })
        });
    });
    g.bench_function("native", |b| b.iter(|| host_out.copy_from_slice(black_box(&host))));
    g.finish();

    let mut g = c.benchmark_group("stream_write");
    g.throughput(Throughput::Bytes((KN * 4) as u64));
    core.enter(|| {
        g.bench_function("ours", |b| {
            b.iter(|| {
                let mut st = t_out.write_stream_accessor::<f32>().unwrap();
                for i in 0..KN {
                    st.write(black_box(i as f32)).unwrap();
                }
                st.close().unwrap();
            })
        });
    });
    g.bench_function("native", |b| b.iter(|| host_out.copy_from_slice(black_box(&host))));
    g.finish();

    // TCM copy: 16 KiB tensor -> tcm_malloc memory (the DMA backend).
    let mut g = c.benchmark_group("tcm_copy_16k");
    g.throughput(Throughput::Bytes((KN * 4) as u64));
    core.enter(|| {
        tcm_scope(|s| {
            let mut buf = s.buf::<f32>(KN).expect("TCM pool");
            let tcm = t_in.tcm_accessor();
            g.bench_function("ours", |b| b.iter(|| tcm.tensor_to_tcm(&mut buf[..], black_box(0)).unwrap()));
        });
    });
    g.bench_function("native", |b| b.iter(|| host_out.copy_from_slice(black_box(&host))));
    g.finish();
}

criterion_group!(benches, translate, memcpy, heaps, kernel_api);
criterion_main!(benches);
