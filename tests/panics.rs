//! No panic crosses the C ABI: a panic inside the runtime (an entry
//! point's body) or inside a Rust kernel becomes the library's abort
//! report — reason `Error::Panic` (70), message, place, core — on stderr,
//! then SIGABRT. Each scenario runs in a child process (the abort ends it).

use neuron_hal_mock::MockSoc;
use neuroncustomop::custom_ops;
use neuroncustomop::host::{SimCore, Simulator};
use neuroncustomop::kernel::*;
use neuroncustomop::runtime::marshal::dtype::Dtype;
use neuroncustomop::runtime::Error;

fn boom(t: Tensor) -> Result<Tensor> {
    if t.numel() > 0 {
        panic!("kernel boom: {} elements", t.numel());
    }
    Ok(t)
}

custom_ops! {
    fn boom(t: Tensor);
}

/// Runs test `name` again in a child with `CHILD` set; returns its stderr.
fn child(name: &str) -> String {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .env("NEURON_PANIC_CHILD", "1")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "the child must abort; stderr: {err}");
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(out.status.signal(), Some(6), "SIGABRT; stderr: {err}");
    }
    err
}

fn in_child() -> bool {
    std::env::var_os("NEURON_PANIC_CHILD").is_some()
}

#[test]
fn a_panic_inside_the_runtime_is_the_abort_report() {
    if in_child() {
        let soc = MockSoc::new().unwrap();
        let mut core = SimCore::new(soc.core(3).unwrap());
        core.enter(|| {
            neuroncustomop::ffi::init::neuron_runtime_init();
            neuroncustomop::host::fault::panic_inside_an_entry_point("injected runtime bug")
        });
        unreachable!("the panic must abort");
    }
    let err = child("a_panic_inside_the_runtime_is_the_abort_report");
    let want = format!(
        "neuroncustomop: abort on core 3: error {} ({}): panic: injected runtime bug at sim/src/fault.rs:",
        Error::Panic.code(),
        Error::Panic.message()
    );
    assert!(err.contains(&want), "stderr: {err}");
    assert!(!err.contains("panicked at"), "the default panic message is replaced by the report: {err}");
}

#[test]
fn a_panic_inside_a_rust_kernel_is_the_abort_report() {
    if in_child() {
        let mut sim = Simulator::new().unwrap();
        sim.register_linked().unwrap();
        sim.arg_tensor(Dtype::Fp32, &[4], &[0u8; 16]).unwrap();
        sim.set_output(Dtype::Fp32, &[4]).unwrap();
        let _ = sim.run("boom", 1);
        unreachable!("the panic must abort");
    }
    let err = child("a_panic_inside_a_rust_kernel_is_the_abort_report");
    let want = format!(
        "neuroncustomop: abort on core 0: error {} ({}): panic: kernel boom: 4 elements at tests/panics.rs:",
        Error::Panic.code(),
        Error::Panic.message()
    );
    assert!(err.contains(&want), "stderr: {err}");
    // Inside a run the crash handler sees the SIGABRT too: the abort
    // report stands alone, not followed by a vaguer line of its own.
    assert_eq!(err.matches("neuroncustomop: abort on core").count(), 1, "stderr: {err}");
}
