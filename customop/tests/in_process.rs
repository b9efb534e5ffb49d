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
    // A multicore library (its op runs on 1 or 8 cores) and a single-core one.
    let relu = built("tcm_multicore", &["--multicore"]);
    let stream = built("stream", &[]);
    let x = values(6 * 7, -3.0, 3.0, 14);
    let xf = npy_file("inproc_x.npy", &f32s(&[6, 7], &x)).display().to_string();
    let opts = |dir: &std::path::Path, op: &str, cores: u32| RunOptions {
        dir: dir.to_path_buf(),
        op: op.into(),
        args: vec![xf.clone()],
        out: None,
        cores: Some(cores),
        on: Default::default(),
        timeout: None,
        keep_output: None,
        no_fork: false,
        html: None,
        tolerance: Default::default(),
    };
    let relu_want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
    let scale_want: Vec<f32> = x.iter().map(|v| v * 2.0 + 1.0).collect();
    std::thread::scope(|s| {
        for t in 0..2 {
            let (relu, stream, opts, rw, sw) = (&relu, &stream, &opts, &relu_want, &scale_want);
            s.spawn(move || {
                for round in 0..3 {
                    let r = run(&opts(relu, "relu_multicore", 8)).unwrap();
                    assert_eq!(r.output.to_f32(), *rw, "thread {t} round {round}: relu on 8 cores");
                    assert_eq!(r.cores, 8);
                    let r = run(&opts(stream, "scale_stream", 1)).unwrap();
                    assert_eq!(r.output.to_f32(), *sw, "thread {t} round {round}: scale on 1 core");
                    assert!(r.report.contains("core 0:"), "{}", r.report);
                }
            });
        }
    });
    // An error is a value, not an exit: the process goes on.
    let e = run(&RunOptions { args: vec![], ..opts(&relu, "relu_multicore", 8) }).unwrap_err();
    assert_eq!(e.kind, customop::ErrorKind::BadInput);
    assert_eq!(e.kind.exit_code(), 6);
}

/// Build, run, edit, rebuild, run, all in one process through the
/// library (the Python package's loop): the second run sees the new code.
#[test]
fn a_library_rebuilt_in_process_is_loaded_anew() {
    use customop::build::{build, BuildOptions};
    let src = scratch("rebuild_src");
    std::fs::copy(kernels().join("stream/scale.cpp"), src.join("scale.cpp")).unwrap();
    std::fs::copy(kernels().join("stream/shape.cpp"), src.join("shape.cpp")).unwrap();
    let out = src.join("build");
    let opts = BuildOptions {
        name: "rebuilt".into(),
        compute: vec![src.join("scale.cpp")],
        shape: vec![src.join("shape.cpp")],
        multicore: false,
        target: customop::Target::Sim,
        out: out.clone(),
        cflags: vec![],
        ldflags: vec![],
        staticlib: None,
        include: None,
    };
    let x = values(20, -1.0, 1.0, 15);
    let xf = npy_file("rebuild_x.npy", &f32s(&[20], &x)).display().to_string();
    let run_once = || {
        run(&RunOptions {
            dir: out.clone(),
            op: "scale_stream".into(),
            args: vec![xf.clone()],
            out: None,
            cores: None,
            on: Default::default(),
            timeout: None,
            keep_output: None,
            no_fork: false,
            html: None,
            tolerance: Default::default(),
        })
        .unwrap()
    };
    build(&opts).unwrap();
    assert_eq!(run_once().output.to_f32(), x.iter().map(|v| v * 2.0 + 1.0).collect::<Vec<_>>());
    assert_eq!(run_once().output.to_f32(), x.iter().map(|v| v * 2.0 + 1.0).collect::<Vec<_>>(), "loaded once, run again");
    let k = std::fs::read_to_string(src.join("scale.cpp")).unwrap();
    std::fs::write(src.join("scale.cpp"), k.replace("* 2.0f", "* 3.0f")).unwrap();
    assert!(build(&opts).unwrap().linked);
    assert_eq!(run_once().output.to_f32(), x.iter().map(|v| v * 3.0 + 1.0).collect::<Vec<_>>(), "the rebuilt library runs");
    let leftovers: Vec<_> = std::fs::read_dir(&out).unwrap().filter_map(|e| e.ok()).filter(|e| e.file_name().to_string_lossy().starts_with('.')).collect();
    assert!(leftovers.is_empty(), "the loaded copy is unlinked: {leftovers:?}");
}

/// A library linked before the simulator could write its output into a
/// file (no `neuron_sim_set_output_sink`): `customop run` copies the output
/// out after the verdict instead, and the file is the same.
#[test]
fn a_library_without_the_output_sink_still_writes_the_same_output_file() {
    use customop::run::{load, run_sim, Files, Placed};
    let dir = built("tcm_multicore", &["--multicore"]);
    let (schema, api) = load(&dir).unwrap();
    let op = schema.op("relu_multicore").unwrap();
    let x = f32s(&[40_000], &values(40_000, -3.0, 3.0, 21));
    let spec = customop::shape::OutputSpec { dtype: x.dtype, shape: x.shape.clone() };
    let placed = [Placed::Tensor(x.clone())];
    let written = |api: customop::sim::SimApi, name: &str| {
        let out = scratch("no_sink").join(name);
        std::fs::write(&out, b"").unwrap();
        let files = Files { inputs: vec![None], output: Some(out.clone()), keep_failed: false, writer_map: false };
        let r = run_sim(api, op, &["x".into()], &placed, &files, &spec, 8).unwrap();
        assert_eq!(r.rc, 0, "{}", r.report);
        std::fs::read(&out).unwrap()
    };
    let mut old = api;
    old.output_sink = None;
    let copied = written(old, "copied.npy");
    assert!(api.output_sink.is_some(), "a library built now has the sink");
    assert_eq!(copied, written(api, "sunk.npy"));
    let want: Vec<f32> = x.to_f32().iter().map(|v| v.max(0.0)).collect();
    assert_eq!(customop::npy::parse_bytes(&copied).unwrap().to_f32(), want);
}

/// The multicore relu library as the Python package loads it: its ops,
/// its entry points, the op's index.
fn relu_library() -> (Vec<customop::schema::Op>, customop::sim::SimApi, usize) {
    let dir = built("tcm_multicore", &["--multicore"]);
    let (schema, api) = customop::run::load(&dir).unwrap();
    let index = schema.ops.iter().position(|o| o.name == "relu_multicore").unwrap();
    (schema.ops, api, index)
}

/// One call of the relu on 8 cores through `pool`'s worker, `x`'s bytes
/// staged as a tensor of `shape`: the output, or the call's error.
fn relu_call(pool: &customop::worker::Pool, index: usize, x: &customop::npy::Array, shape: Vec<u64>) -> customop::error::Result<Vec<u8>> {
    let mut call = pool.try_call().unwrap();
    call.tensor(x.dtype, shape, &x.data)?;
    let mut done = call.run(index, &["x".into()], 8, None, "timeout=", &mut || false)?;
    let (rc, report) = done.run.clone().unwrap();
    assert_eq!(rc, 0, "{report}");
    Ok(done.output().to_vec())
}

fn relu_of(x: &customop::npy::Array) -> Vec<u8> {
    x.to_f32().iter().flat_map(|v| v.max(0.0).to_le_bytes()).collect()
}

#[test]
fn a_library_without_the_staging_calls_gives_python_calls_the_same_results() {
    let (ops, api, index) = relu_library();
    let x = f32s(&[40_000], &values(40_000, -3.0, 3.0, 22));
    // Two calls on one worker each (the second on the reset simulator).
    let outputs = |api| -> Vec<Vec<u8>> {
        let pool = customop::worker::Pool::new(api, ops.clone());
        (0..2).map(|_| relu_call(&pool, index, &x, x.shape.clone()).unwrap()).collect()
    };
    assert!(api.staging.is_some(), "a library built now stages in place");
    let staged = outputs(api);
    let mut old = api;
    old.staging = None;
    assert_eq!(outputs(old), staged);
    assert_eq!(staged, [relu_of(&x), relu_of(&x)]);
}

#[test]
fn a_staged_tensor_whose_bytes_are_not_its_shapes_is_refused() {
    let (ops, api, index) = relu_library();
    let x = f32s(&[40_000], &values(40_000, -3.0, 3.0, 23));
    let pool = customop::worker::Pool::new(api, ops);
    // More elements said than given: the simulator would place them all.
    let e = relu_call(&pool, index, &x, vec![40_010]).expect_err("refused");
    assert!(e.to_string().contains("160000 bytes staged for shape [40010]"), "{e}");
    // The next call on the same worker is served.
    assert_eq!(relu_call(&pool, index, &x, x.shape.clone()).unwrap(), relu_of(&x));
}

#[test]
fn a_large_output_is_copied_while_the_verdict_runs_and_a_small_one_after() {
    let (ops, api, index) = relu_library();
    assert!(api.output_ready.is_some(), "a library built now tells when its output is final");
    // The output's bytes as read after the result, and those copied while
    // the verdict ran (None: not copied early).
    let call = |api, n: usize| -> (Vec<u8>, Option<Vec<u8>>, Vec<u8>) {
        let x = f32s(&[n as u64], &values(n, -3.0, 3.0, 24));
        let pool = customop::worker::Pool::new(api, ops.clone());
        let mut call = pool.try_call().unwrap();
        call.tensor(x.dtype, x.shape.clone(), &x.data).unwrap();
        let mut done = call.run(index, &["x".into()], 8, None, "timeout=", &mut || false).unwrap();
        assert_eq!(done.run.as_ref().unwrap().0, 0);
        let early = done.take_early();
        (done.output().to_vec(), early, relu_of(&x))
    };
    // 400 KB: copied early, the same bytes.
    let (out, early, want) = call(api, 100_000);
    assert_eq!(out, want);
    assert_eq!(early.as_deref(), Some(&want[..]));
    // 160 KB: a wake-up would cost more than the overlap saves.
    let (out, early, want) = call(api, 40_000);
    assert_eq!((out, early), (want, None));
    // A library without the notice: read after the result, as before.
    let mut old = api;
    old.output_ready = None;
    let (out, early, want) = call(old, 100_000);
    assert_eq!((out, early), (want, None));
}

#[test]
fn an_output_copied_early_is_dropped_when_the_verdict_then_fails() {
    let dir = built("sanitizer", &[]);
    let (schema, api) = customop::run::load(&dir).unwrap();
    let index = schema.ops.iter().position(|o| o.name == "scale_input_raw").unwrap();
    let pool = customop::worker::Pool::new(api, schema.ops.clone());
    // Its output (zeros it returns, copied over the output by the
    // runtime's hooked copy) is final when its kernel ends; its raw store
    // into the input is found by the verdict after that.
    let x = f32s(&[1 << 20], &values(1 << 20, -3.0, 3.0, 25));
    let mut call = pool.try_call().unwrap();
    call.tensor(x.dtype, x.shape.clone(), &x.data).unwrap();
    let mut done = call.run(index, &["x".into()], 1, None, "timeout=", &mut || false).unwrap();
    let (rc, report) = done.run.clone().unwrap();
    assert_ne!(rc, 0, "{report}");
    assert!(report.contains("argument 0 changed during the run"), "{report}");
    assert_eq!(done.take_early(), None);
}

#[test]
fn a_call_after_one_with_the_same_shapes_still_finds_what_its_kernel_left_unwritten() {
    let (ops, api, index) = relu_library();
    assert!(api.prefill_output.is_some(), "a library built now fills an output ahead");
    let pool = customop::worker::Pool::new(api, ops);
    // The output of a call on `cores`, or its report.
    let call = |x: &customop::npy::Array, cores: u32| -> Result<Vec<u8>, String> {
        let mut call = pool.try_call().unwrap();
        call.tensor(x.dtype, x.shape.clone(), &x.data).unwrap();
        let mut done = call.run(index, &["x".into()], cores, None, "timeout=", &mut || false).unwrap();
        match done.run.clone().unwrap() {
            (0, _) => Ok(done.take_early().unwrap_or_else(|| done.output().to_vec())),
            (_, report) => Err(report),
        }
    };
    let x = f32s(&[100_000], &values(100_000, -3.0, 3.0, 26));
    let y = f32s(&[120_000], &values(120_000, -3.0, 3.0, 27));
    // Each passed call leaves its output where the next call with the
    // same shapes places its own, filled ahead with the sentinel while
    // the caller is done with it: on 1 core the kernel writes an eighth,
    // and the rest is found unwritten, not taken for the last output.
    for _ in 0..2 {
        assert_eq!(call(&x, 8).unwrap(), relu_of(&x));
        let rep = call(&x, 1).unwrap_err();
        assert!(rep.contains("87500 of 100000 output elements were never written: [12500, 100000)"), "{rep}");
    }
    // Another shape: its output placed elsewhere.
    assert_eq!(call(&x, 8).unwrap(), relu_of(&x));
    let rep = call(&y, 1).unwrap_err();
    assert!(rep.contains("105000 of 120000 output elements were never written: [15000, 120000)"), "{rep}");
    assert_eq!(call(&y, 8).unwrap(), relu_of(&y));
}

#[test]
fn a_larger_call_never_stages_over_the_last_outputs_fill_ahead() {
    let (ops, api, index) = relu_library();
    // The worker fills the last output's place ahead 300 ms late: the
    // next call's larger input overlaps that place, and the kernel must
    // read the input's own bytes there, not the sentinel.
    let pool = customop::worker::Pool::new(api, ops).with_slow_fill_ahead(std::time::Duration::from_millis(300));
    let call = |x: &customop::npy::Array| -> Vec<u8> {
        let mut call = pool.try_call().unwrap();
        call.tensor(x.dtype, x.shape.clone(), &x.data).unwrap();
        let mut done = call.run(index, &["x".into()], 8, None, "timeout=", &mut || false).unwrap();
        let (rc, report) = done.run.clone().unwrap();
        assert_eq!(rc, 0, "{report}");
        done.take_early().unwrap_or_else(|| done.output().to_vec())
    };
    let x = f32s(&[100_000], &values(100_000, -3.0, 3.0, 28));
    let y = f32s(&[300_000], &values(300_000, -3.0, 3.0, 29));
    for _ in 0..2 {
        assert_eq!(call(&x), relu_of(&x));
        assert_eq!(call(&y), relu_of(&y), "the larger input was overwritten by the last output's fill ahead");
    }
}
