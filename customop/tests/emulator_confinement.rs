//! The emulated device is no way into the user's files: QEMU's semihosting
//! hands the guest the host's open/read/write, so a kernel built with
//! `--target qemu` tries them, and the run (confined by Landlock) must
//! neither read a file of the user's nor create one. The same kernel under
//! the maintainers' unconfined hook does read it: the attack is real.
//!
//! Needs what tests/device_qemu.rs needs (the Xtensa toolchain and
//! qemu-system-xtensa), and a kernel with Landlock.

mod common;
use common::*;
use customop::npy;
use std::path::Path;

/// A kernel as a user could write it: on the device, the Xtensa `simcall`
/// (QEMU's semihosting) with open (5), read (3); its results in the output.
fn kernel(secret: &Path, planted: &Path) -> String {
    format!(
        r#"#include <torch/torch.h>

#ifdef __XTENSA__
static int host_call(int nr, int a, int b, int c) {{
    register int a2 asm("a2") = nr;
    register int a3 asm("a3") = a;
    register int a4 asm("a4") = b;
    register int a5 asm("a5") = c;
    asm volatile(".byte 0x00, 0x51, 0x00" : "+r"(a2), "+r"(a3) : "r"(a4), "r"(a5) : "memory");
    return a2;
}}
#endif

torch::Tensor peek(const torch::Tensor& t_in) {{
    torch::Tensor t_out = torch::zeros(t_in.sizes(), torch::kFloat);
    auto out = t_out.accessor<float, 1>();
#ifdef __XTENSA__
    static char buf[8];
    int fd = host_call(5, (int)"{secret}", 0, 0);
    int n = fd >= 0 ? host_call(3, fd, (int)buf, 4) : -1;
    int w = host_call(5, (int)"{planted}", 0x1 | 0x100 | 0x200, 0644);
    out[0] = (float)fd;
    out[1] = (float)n;
    out[2] = (float)(n == 4 ? buf[0] : -1);
    out[3] = (float)w;
#endif
    return t_out;
}}
"#,
        secret = secret.display(),
        planted = planted.display()
    )
}

#[test]
fn a_kernel_on_the_emulated_cores_cannot_read_or_create_the_users_files() {
    if customop_emulator::sandbox::kernel_abi() < 1 {
        eprintln!("skipped: this kernel has no Landlock, so emulated runs are not confined (docs/reliability.md says so)");
        return;
    }
    let dir = scratch("confinement");
    let secret = dir.join("secret.txt");
    let planted = dir.join("planted.txt");
    std::fs::write(&secret, "Kxyz").unwrap();
    let _ = std::fs::remove_file(&planted);
    std::fs::write(dir.join("k.cpp"), kernel(&secret, &planted)).unwrap();
    std::fs::write(
        dir.join("shape.cpp"),
        "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\
         torch::Tensor s(torch::Tensor t) { return torch::zeros(t.sizes(), torch::kFloat); }\n\
         NEURON_LIBRARY(host_files, m) { m.def(\"peek\", &s, \"peek\"); }\n",
    )
    .unwrap();
    let p = |f: &str| dir.join(f).display().to_string();
    customop_ok(&["build", "--name", "host_files", "--compute", &p("k.cpp"), "--shape", &p("shape.cpp"), "--out", &p("build"), "--target", "qemu"]);
    let x = npy_file("confinement-x.npy", &f32s(&[4], &[0.0; 4]));
    let x = x.display().to_string();
    let run = |out: &str| {
        let o = p(out);
        customop_ok(&["run", &p("build"), "peek", &x, "-o", &o, "--on", "qemu"]);
        npy::read(Path::new(&o)).unwrap().to_f32()
    };

    let got = run("confined.npy");
    assert_eq!(got, [-1.0, -1.0, -1.0, -1.0], "confined: open of the user's file and a new file both refused");
    assert!(!planted.exists(), "the confined run created {}", planted.display());

    // The twin: the maintainers' hook runs QEMU unconfined, and the same
    // kernel reads the file (so the first run's -1 is the confinement's).
    let hook = std::process::Command::new(env!("CARGO_BIN_EXE_customop"))
        .args(["run", &p("build"), "peek", &x, "-o", &p("unconfined.npy"), "--on", "qemu"])
        .env(customop::qemu_run::ARGS_ENV, "-no-reboot")
        .output()
        .unwrap();
    assert!(hook.status.success(), "{}", text(&hook));
    let open = npy::read(Path::new(&p("unconfined.npy"))).unwrap().to_f32();
    assert!(open[0] >= 0.0 && open[1] == 4.0 && open[2] == f32::from(b'K'), "unconfined, the kernel reads the file: {open:?}");
    let _ = std::fs::remove_file(&planted);
}
