//! The library API in-process, as the Python package will use it: two
//! built libraries loaded into one process (which itself links the
//! `neuroncustomop` crate), each op run several times, from two threads.
//! Each shared object binds its kernel to its own runtime, so nothing
//! leaks between them.

mod common;
use common::*;
use customop::run::{run, RunOptions};

#[test]
fn two_libraries_in_one_process_each_run_their_own_kernel() {
    let relu = built("relu2d", &[]);
    let stream = built("stream", &[]);
    let x = values(6 * 7, -3.0, 3.0, 14);
    let xf = npy_file("inproc_x.npy", &f32s(&[6, 7], &x)).display().to_string();
    let opts = |dir: &std::path::Path, op: &str, cores: u32| RunOptions {
        dir: dir.to_path_buf(),
        op: op.into(),
        args: vec![xf.clone()],
        out: None,
        cores: Some(cores),
    };
    let relu_want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
    let scale_want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    std::thread::scope(|s| {
        for t in 0..2 {
            let (relu, stream, opts, rw, sw) = (&relu, &stream, &opts, &relu_want, &scale_want);
            s.spawn(move || {
                for round in 0..3 {
                    let cores = if (t + round) % 2 == 0 { 1 } else { 8 };
                    let r = run(&opts(relu, "relu_forward", cores)).unwrap();
                    assert_eq!(r.output.to_f32(), *rw, "thread {t} round {round}: relu on {cores}");
                    assert_eq!(r.cores, cores);
                    let r = run(&opts(stream, "scale_stream", cores)).unwrap();
                    assert_eq!(r.output.to_f32(), *sw, "thread {t} round {round}: scale on {cores}");
                    assert!(r.report.contains("core 0:"), "{}", r.report);
                }
            });
        }
    });
    // An error is a value, not an exit: the process goes on.
    let e = run(&RunOptions { args: vec![], ..opts(&relu, "relu_forward", 1) }).unwrap_err();
    assert_eq!(e.kind, customop::ErrorKind::BadInput);
    assert_eq!(e.kind.exit_code(), 6);
}
