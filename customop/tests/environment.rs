//! `customop env`: every part named with where it was found, a missing one
//! with the command that installs it; exit 10 only when the host
//! simulator lacks a part.

mod common;
use common::*;
use std::process::Command;

fn env_with(vars: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut c = Command::new(env!("CARGO_BIN_EXE_customop"));
    c.arg("env");
    for (k, v) in vars {
        c.env(k, v);
    }
    let o = c.output().unwrap();
    (o.status.code(), text(&o))
}

#[test]
fn env_names_every_part_and_how_to_get_a_missing_one() {
    let (code, t) = env_with(&[]);
    assert_eq!(code, Some(0), "{t}");
    for what in ["the kernel headers", "the host runtime kernels link", "the host C++ compiler", "the emulated cores (QEMU)", "the device runtimes"] {
        assert!(t.contains(what), "no {what:?} in:\n{t}");
    }
    assert!(t.contains("  ok       the host C++ compiler ($CXX): "), "{t}");

    // No QEMU on PATH: reported with its install command, and the
    // simulator still works (exit 0).
    let (code, t) = env_with(&[("PATH", "/nonexistent-bin")]);
    assert!(t.contains("  missing  the emulated cores (QEMU): cannot run qemu-system-xtensa") && t.contains("apt-get install qemu-system-misc"), "{t}");
    assert!(t.contains("the tested versions are 7.2 and 10.0"), "{t}");
    assert_eq!(code, Some(if t.contains("  missing  the host C++ compiler") { 10 } else { 0 }), "{t}");

    // No host compiler: the simulator lacks a part, exit 10.
    let (code, t) = env_with(&[("CXX", "/nonexistent/g++")]);
    assert_eq!(code, Some(10), "{t}");
    assert!(t.contains("  missing  the host C++ compiler ($CXX): cannot run /nonexistent/g++") && t.contains("apt-get install g++, or set CXX"), "{t}");
}
