//! The tools never lose a file and never run stale code: the vendor
//! layout (sources and products in one folder), files the build did not
//! write, atomic outputs under a failed link or a full disk, the
//! library's integrity before it is loaded, builds run concurrently and
//! killed mid-way.

mod common;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A vendor-style kernel, y = x * K + 1, with compute file `compute` and
/// shape file `shape` in a fresh folder `name`.
fn kernel_dir(name: &str, compute: &str, shape: &str, k: &str) -> PathBuf {
    let d = scratch("durable").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    write_compute(&d.join(compute), k);
    std::fs::write(
        d.join(shape),
        "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\n\
         torch::Tensor affine_shape(torch::Tensor x) {\n    return torch::zeros(x.sizes(), torch::kFloat);\n}\n\n\
         NEURON_LIBRARY(affine_ops, m) {\n    m.def(\"affine\", &affine_shape, \"affine\");\n}\n",
    )
    .unwrap();
    d
}

fn write_compute(p: &Path, k: &str) {
    std::fs::write(
        p,
        format!(
            "#include <torch/torch.h>\n\n\
             torch::Tensor affine(const torch::Tensor& x) {{\n\
             \x20   torch::Tensor y = torch::zeros(x.sizes(), torch::kFloat);\n\
             \x20   auto in = x.accessor<float, 1>();\n\
             \x20   auto out = y.accessor<float, 1>();\n\
             \x20   for (int64_t i = 0; i < x.numel(); i++) out[i] = in[i] * {k} + 1.0f;\n\
             \x20   return y;\n}}\n"
        ),
    )
    .unwrap();
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn build(dir: &Path, compute: &str, shape: &str, out: &Path) -> std::process::Output {
    customop(&["build", "--name", "affine", "--compute", &s(&dir.join(compute)), "--shape", &s(&dir.join(shape)), "--out", &s(out)])
}

/// Runs `affine` on [1, 2, 3]; the outputs.
fn run_affine(out: &Path, tag: &str) -> Vec<f32> {
    let x = npy_file(&format!("{tag}_x.npy"), &f32s(&[3], &[1.0, 2.0, 3.0]));
    run_op(out, "affine", &[&s(&x)], 1, tag).0.to_f32()
}

#[test]
fn the_vendor_layout_builds_beside_its_sources_and_keeps_them() {
    // The sources are named as the build's own generated files once were.
    let d = kernel_dir("vendor_layout", "ops.cpp", "shapes.cpp", "2.0f");
    let before: Vec<(String, Vec<u8>)> = ["ops.cpp", "shapes.cpp"].iter().map(|f| (f.to_string(), std::fs::read(d.join(f)).unwrap())).collect();
    let o = build(&d, "ops.cpp", "shapes.cpp", &d);
    assert!(o.status.success(), "{}", text(&o));
    assert!(d.join("libaffine.so").is_file());
    for (f, bytes) in &before {
        assert_eq!(&std::fs::read(d.join(f)).unwrap(), bytes, "{f} was overwritten");
    }
    assert_eq!(run_affine(&d, "vendor"), [3.0, 5.0, 7.0]);
    // Rebuilding in place keeps working (the products are its own).
    let o = build(&d, "ops.cpp", "shapes.cpp", &d);
    assert!(o.status.success() && text(&o).contains("not relinked"), "{}", text(&o));
}

#[test]
fn a_product_name_the_build_did_not_write_is_refused_by_name() {
    let d = kernel_dir("foreign", "affine.cpp", "shape.cpp", "2.0f");
    std::fs::write(d.join("libaffine.so"), b"the user's own file").unwrap();
    let o = build(&d, "affine.cpp", "shape.cpp", &d);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(text(&o).contains(&format!("{} exists and was not written by `customop build`", d.join("libaffine.so").display())), "{}", text(&o));
    assert_eq!(std::fs::read(d.join("libaffine.so")).unwrap(), b"the user's own file");
}

#[test]
fn a_failed_relink_keeps_the_last_good_library() {
    let d = kernel_dir("relink", "affine.cpp", "shape.cpp", "2.0f");
    let out = d.join("build");
    assert!(build(&d, "affine.cpp", "shape.cpp", &out).status.success());
    let good = std::fs::read(out.join("libaffine.so")).unwrap();
    // Compiles, but does not link (an undefined function).
    write_compute(&d.join("affine.cpp"), "missing_factor()");
    let src =
        std::fs::read_to_string(d.join("affine.cpp")).unwrap().replace("#include <torch/torch.h>\n", "#include <torch/torch.h>\nfloat missing_factor();\n");
    std::fs::write(d.join("affine.cpp"), src).unwrap();
    let o = build(&d, "affine.cpp", "shape.cpp", &out);
    assert_eq!(o.status.code(), Some(4), "{}", text(&o));
    assert_eq!(std::fs::read(out.join("libaffine.so")).unwrap(), good, "the last good library is kept");
    assert_eq!(run_affine(&out, "relink"), [3.0, 5.0, 7.0]);
}

#[test]
fn a_truncated_library_is_a_clear_error_not_a_bus_error() {
    let d = kernel_dir("truncated", "affine.cpp", "shape.cpp", "2.0f");
    let out = d.join("build");
    assert!(build(&d, "affine.cpp", "shape.cpp", &out).status.success());
    let lib = out.join("libaffine.so");
    let len = std::fs::metadata(&lib).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&lib).unwrap();
    f.set_len(len / 2).unwrap();
    drop(f);
    let x = npy_file("trunc_x.npy", &f32s(&[3], &[1.0, 2.0, 3.0]));
    let o = customop(&["run", &s(&out), "affine", &s(&x), "-o", &s(&scratch("out").join("trunc.npy"))]);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    assert!(text(&o).contains(&format!("is {} bytes, the build recorded {len} in customop.json", len / 2)), "{}", text(&o));
    // A foreign file of the right size: refused by its hash.
    std::fs::write(&lib, vec![0u8; len as usize]).unwrap();
    let o = customop(&["run", &s(&out), "affine", &s(&x), "-o", &s(&scratch("out").join("trunc.npy"))]);
    assert_eq!(o.status.code(), Some(6), "{}", text(&o));
    assert!(text(&o).contains("does not match the build recorded in customop.json"), "{}", text(&o));
}

#[test]
fn a_full_disk_keeps_the_previous_output() {
    let d = kernel_dir("full_disk", "affine.cpp", "shape.cpp", "2.0f");
    let out = d.join("build");
    assert!(build(&d, "affine.cpp", "shape.cpp", &out).status.success());
    // An output larger than the disk it goes to: a 64 KiB tmpfs mounted in
    // a private mount namespace (no privilege needed, nothing left behind).
    // 400 KB in one piece, 4 MiB in several (its writeback started early).
    for n in [100_000u64, 1 << 20] {
        full_disk_run(&out, n);
    }
}

fn full_disk_run(out: &Path, n: u64) {
    let x = npy_file(&format!("full_x_{n}.npy"), &f32s(&[n], &vec![1.0; n as usize]));
    let disk = scratch(&format!("full_disk_mnt_{n}"));
    let script = format!(
        "mount -t tmpfs -o size=64k tmpfs '{disk}' || exit 99; printf previous > '{disk}/y.npy'; \
         '{bin}' run '{out}' affine '{x}' -o '{disk}/y.npy'; rc=$?; echo; echo \"rc=$rc\"; echo \"y=$(cat '{disk}/y.npy')\"; ls -a '{disk}'",
        disk = s(&disk),
        bin = env!("CARGO_BIN_EXE_customop"),
        out = s(out),
        x = s(&x)
    );
    let o = Command::new("unshare").args(["-rm", "sh", "-c", &script]).output().expect("run unshare (util-linux)");
    let t = text(&o);
    assert!(o.status.success(), "the private tmpfs could not be made:\n{t}");
    assert!(t.contains("rc=5") && t.contains("cannot write") && t.contains("No space left on device"), "{t}");
    assert!(t.contains("y=previous"), "the previous output was not kept:\n{t}");
    let listing = String::from_utf8_lossy(&o.stdout);
    assert!(!listing.contains(".tmp"), "a temporary was left behind:\n{t}");
}

#[test]
fn concurrent_builds_and_runs_of_one_directory_agree_with_the_last_build() {
    let d = kernel_dir("concurrent", "affine.cpp", "shape.cpp", "2.0f");
    let out = d.join("build");
    // Two versions of the source, built at once into one directory.
    let d3 = kernel_dir("concurrent_v3", "affine.cpp", "shape.cpp", "3.0f");
    std::fs::copy(d.join("shape.cpp"), d3.join("shape.cpp")).unwrap();
    let spawn = |src: &Path| {
        Command::new(env!("CARGO_BIN_EXE_customop"))
            .args(["build", "--name", "affine", "--compute", &s(&src.join("affine.cpp")), "--shape", &s(&src.join("shape.cpp")), "--out", &s(&out)])
            .output()
    };
    assert!(spawn(&d).unwrap().status.success());
    let x = npy_file("conc_x.npy", &f32s(&[3], &[1.0, 2.0, 3.0]));
    std::thread::scope(|sc| {
        let hs: Vec<_> = [&d, &d3, &d, &d3].into_iter().map(|src| sc.spawn(move || spawn(src).unwrap())).collect();
        // Runs while the library is relinked: each sees one whole build.
        let (out, x) = (&out, &x);
        let runner = sc.spawn(move || {
            for i in 0..6 {
                let y = scratch("out").join(format!("during_{i}.npy"));
                let o = customop(&["run", &s(out), "affine", &s(x), "-o", &s(&y)]);
                assert!(o.status.success(), "a run during relinks failed: {}", text(&o));
                let v = customop::npy::read(&y).unwrap().to_f32();
                assert!(v == [3.0, 5.0, 7.0] || v == [4.0, 7.0, 10.0], "{v:?}");
            }
        });
        for h in hs {
            let o = h.join().unwrap();
            assert!(o.status.success(), "{}", text(&o));
        }
        runner.join().unwrap();
    });
    // Then one more build: whatever it reports, the library runs its code.
    let o = build(&d3, "affine.cpp", "shape.cpp", &out);
    assert!(o.status.success(), "{}", text(&o));
    // Several readers at once, each in its own process.
    std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|i| {
                let (out, x) = (&out, &x);
                sc.spawn(move || {
                    let y = scratch("out").join(format!("conc_{i}.npy"));
                    let o = customop(&["run", &s(out), "affine", &s(x), "-o", &s(&y)]);
                    assert!(o.status.success(), "{}", text(&o));
                    customop::npy::read(&y).unwrap().to_f32()
                })
            })
            .collect();
        for h in hs {
            assert_eq!(h.join().unwrap(), [4.0, 7.0, 10.0]);
        }
    });
}

#[test]
fn a_killed_build_leaves_no_compiler_and_no_stale_object() {
    let d = kernel_dir("killed", "affine.cpp", "shape.cpp", "2.0f");
    let out = d.join("build");
    // A slow compiler: records its pid, waits, then compiles.
    let cxx = d.join("slow-cxx.sh");
    let pids = d.join("pids");
    std::fs::write(&cxx, format!("#!/bin/sh\necho $$ >> '{}'\nsleep 3\nexec g++ \"$@\"\n", s(&pids))).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&cxx, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_customop"))
        .args(["build", "--name", "affine", "--compute", &s(&d.join("affine.cpp")), "--shape", &s(&d.join("shape.cpp")), "--out", &s(&out)])
        .env("CXX", &cxx)
        .spawn()
        .unwrap();
    // Wait for the first compiler, then kill the build.
    let t0 = std::time::Instant::now();
    while !pids.is_file() && t0.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let pid = std::fs::read_to_string(&pids).unwrap().lines().next().unwrap().trim().to_owned();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists() || std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap().contains(") Z"),
        "compiler {pid} still runs"
    );
    // The source changes; the next build (plain g++) must run the new code,
    // even after the killed build's compiler would have finished.
    write_compute(&d.join("affine.cpp"), "5.0f");
    assert!(build(&d, "affine.cpp", "shape.cpp", &out).status.success());
    std::thread::sleep(std::time::Duration::from_secs(4));
    let o = build(&d, "affine.cpp", "shape.cpp", &out);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(run_affine(&out, "killed"), [6.0, 11.0, 16.0]);
}

#[test]
fn sources_gxx_compiles_build_and_run_and_a_long_name_is_refused() {
    let d = kernel_dir("gxx_accepts", "affine.cpp", "shape.cpp", "2.0f");
    // A BOM, a Latin-1 comment and string, an older definition kept under
    // `#if 0`, a typedef'd and a macro parameter type, as vendor sources have.
    let mut src = b"\xEF\xBB\xBF// Noyau \xE9crit \xE0 la main (Latin-1)\n#include <torch/torch.h>\n".to_vec();
    src.extend_from_slice(b"typedef torch::Tensor Tensor_t;\n#define IN_T const Tensor_t&\nstatic const char* kWho = \"\xE9quipe\";\n");
    src.extend_from_slice(b"#if 0\ntorch::Tensor affine(const torch::Tensor& x, double k) { return x; }\n#else\n");
    src.extend_from_slice(
        b"torch::Tensor affine(IN_T x) {\n    (void)kWho;\n    torch::Tensor y = torch::zeros(x.sizes(), torch::kFloat);\n    \
          auto in = x.accessor<float, 1>();\n    auto out = y.accessor<float, 1>();\n    \
          for (int64_t i = 0; i < x.numel(); i++) out[i] = in[i] * 2.0f + 1.0f;\n    return y;\n}\n#endif\n",
    );
    std::fs::write(d.join("affine.cpp"), src).unwrap();
    let out = d.join("build");
    let o = build(&d, "affine.cpp", "shape.cpp", &out);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(run_affine(&out, "gxx"), [3.0, 5.0, 7.0]);
    let long = "k".repeat(300);
    let o = customop(&["build", "--name", &long, "--compute", &s(&d.join("affine.cpp")), "--shape", &s(&d.join("shape.cpp")), "--out", &s(&out)]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--name is 300 characters long: at most 64"), "{}", text(&o));
}

/// `-o` names where the output goes, never what replaces it: a symlink
/// stays a link (its target written, a dangling one's created), a device
/// or FIFO is written into and stays one, a directory is refused with
/// nothing changed. Private nodes in a scratch folder, never /dev itself.
#[test]
fn an_output_path_is_written_never_replaced() {
    use std::os::unix::fs::FileTypeExt;
    let d = kernel_dir("out_nodes", "affine.cpp", "shape.cpp", "2.0f");
    let out = d.join("build");
    assert!(build(&d, "affine.cpp", "shape.cpp", &out).status.success());
    let x = npy_file("out_nodes_x.npy", &f32s(&[3], &[1.0, 2.0, 3.0]));
    let run_to = |o: &Path| customop(&["run", &s(&out), "affine", &s(&x), "-o", &s(o)]);
    let file_type = |p: &Path| std::fs::symlink_metadata(p).unwrap().file_type();
    let want = [3.0f32, 5.0, 7.0];

    // A link into results/, relative, and a dangling one.
    std::fs::create_dir_all(d.join("results")).unwrap();
    std::fs::write(d.join("results/y.npy"), b"old").unwrap();
    let link = d.join("link.npy");
    std::os::unix::fs::symlink("results/y.npy", &link).unwrap();
    let o = run_to(&link);
    assert!(o.status.success(), "{}", text(&o));
    assert!(file_type(&link).is_symlink(), "the link was replaced");
    assert_eq!(customop::npy::read(&d.join("results/y.npy")).unwrap().to_f32(), want);
    let dangling = d.join("dangling.npy");
    std::os::unix::fs::symlink("results/new.npy", &dangling).unwrap();
    assert!(run_to(&dangling).status.success());
    assert!(file_type(&dangling).is_symlink());
    assert_eq!(customop::npy::read(&d.join("results/new.npy")).unwrap().to_f32(), want);
    let leftovers: Vec<_> = std::fs::read_dir(d.join("results")).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 2, "a temporary was left: {leftovers:?}");

    // A FIFO streams the .npy to its reader, as `-o >(python consume.py)`.
    let fifo = d.join("pipe");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    let o = run_to(&fifo);
    assert!(o.status.success(), "{}", text(&o));
    let got = reader.join().unwrap();
    let streamed = d.join("streamed.npy");
    std::fs::write(&streamed, &got).unwrap();
    assert_eq!(customop::npy::read(&streamed).unwrap().to_f32(), want);
    assert!(file_type(&fifo).is_fifo());

    // A directory: refused before the run, its content unchanged.
    let dir = d.join("outdir");
    std::fs::create_dir_all(&dir).unwrap();
    let o = run_to(&dir);
    assert!(!o.status.success());
    assert!(text(&o).contains("it is a directory; name a file inside it; nothing was written"), "{}", text(&o));
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0);

    // Character devices like /dev/null (1,3) and /dev/full (1,7): root only.
    let null = d.join("null");
    let c = std::ffi::CString::new(s(&null)).unwrap();
    // SAFETY: `c` is a NUL-terminated path that lives across the call.
    if unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) } != 0 {
        // SAFETY: geteuid has no preconditions.
        assert_ne!(unsafe { libc::geteuid() }, 0, "mknod failed as root: {}", std::io::Error::last_os_error());
        eprintln!("skipped the device nodes: mknod needs root");
        return;
    }
    let o = run_to(&null);
    assert!(o.status.success(), "{}", text(&o));
    assert!(file_type(&null).is_char_device(), "the device node was replaced");
    let full = d.join("full");
    let c = std::ffi::CString::new(s(&full)).unwrap();
    // SAFETY: as above.
    assert_eq!(unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 7)) }, 0);
    let o = run_to(&full);
    assert_eq!(o.status.code(), Some(5), "{}", text(&o));
    assert!(text(&o).contains("No space left on device"), "{}", text(&o));
    assert!(file_type(&full).is_char_device());
}
