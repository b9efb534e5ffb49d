//! Safe on a shared machine, as attacks: another local user (made with
//! `useradd`) prepares a build directory or its `customop-build/`, holds
//! the lock, plants FIFOs, links and devices, or drops a `ziglang/`
//! package in the working directory; the tool refuses or is unaffected,
//! and nothing of the victim's is read or overwritten. The tests run as
//! root (as CI does); elsewhere, or without `useradd`, the ones that need
//! another user print why they are skipped.

mod common;
use common::*;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const ATTACKER: &str = "ncop-attacker";

/// The attacker's uid and gid, made once; None (with the reason printed)
/// when this test cannot make another user.
fn attacker() -> Option<(u32, u32)> {
    static USER: std::sync::OnceLock<Option<(u32, u32)>> = std::sync::OnceLock::new();
    *USER.get_or_init(|| {
        // SAFETY: geteuid has no preconditions.
        if unsafe { libc::geteuid() } != 0 {
            eprintln!("skipped: another user's attack needs root (to run useradd); CI runs these as root");
            return None;
        }
        let id = |flag: &str| Command::new("id").args([flag, ATTACKER]).output().ok().filter(|o| o.status.success());
        if id("-u").is_none() {
            match Command::new("useradd").args(["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", ATTACKER]).output() {
                Ok(o) if o.status.success() || id("-u").is_some() => {}
                Ok(o) => {
                    eprintln!("skipped: useradd failed: {}", String::from_utf8_lossy(&o.stderr));
                    return None;
                }
                Err(e) => {
                    eprintln!("skipped: no useradd ({e})");
                    return None;
                }
            }
        }
        let num = |flag: &str| String::from_utf8_lossy(&id(flag)?.stdout).trim().parse::<u32>().ok();
        Some((num("-u")?, num("-g")?))
    })
}

/// Runs `script` with `sh -c` as the attacker.
fn as_attacker(script: &str) -> Command {
    let (uid, gid) = attacker().expect("checked by the caller");
    let mut c = Command::new("setpriv");
    c.args([&format!("--reuid={uid}"), &format!("--regid={gid}"), "--clear-groups", "sh", "-c", script]);
    c
}

fn chown_r(p: &Path, uid: u32, gid: u32) {
    let o = Command::new("chown").args(["-R", &format!("{uid}:{gid}")]).arg(p).output().unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A fresh folder with a one-op kernel, y = x * 2 + 1.
fn kernel_sources(name: &str) -> PathBuf {
    let d = scratch("sources").join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    std::fs::write(
        d.join("affine.cpp"),
        "#include <torch/torch.h>\n\n\
         torch::Tensor affine(const torch::Tensor& x) {\n\
         \x20   torch::Tensor y = torch::zeros(x.sizes(), torch::kFloat);\n\
         \x20   auto in = x.accessor<float, 1>();\n\
         \x20   auto out = y.accessor<float, 1>();\n\
         \x20   for (int64_t i = 0; i < x.numel(); i++) out[i] = in[i] * 2.0f + 1.0f;\n\
         \x20   return y;\n}\n",
    )
    .unwrap();
    std::fs::write(
        d.join("shape.cpp"),
        "#include <torch/torch.h>\n#include \"torchneuron/register.h\"\n\n\
         torch::Tensor affine_shape(torch::Tensor x) {\n    return torch::zeros(x.sizes(), torch::kFloat);\n}\n\n\
         NEURON_LIBRARY(affine_ops, m) {\n    m.def(\"affine\", &affine_shape, \"affine\");\n}\n",
    )
    .unwrap();
    d
}

fn build_args(src: &Path, out: &Path) -> Vec<String> {
    ["build", "--name", "affine", "--compute", &s(&src.join("affine.cpp")), "--shape", &s(&src.join("shape.cpp")), "--out", &s(out)]
        .iter()
        .map(|a| a.to_string())
        .collect()
}

/// `customop` with `args` and the environment `env`, killed after `limit`
/// (a hang is the test's failure, not CI's timeout).
fn customop_within(args: &[String], env: &[(&str, &str)], limit: Duration) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_customop"));
    c.args(args).envs(env.iter().copied()).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            let o = child.wait_with_output().unwrap();
            panic!("customop {args:?} hung past {limit:?}:\n{}", text(&o));
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

fn run_args(dir: &Path, out: &Path, tag: &str) -> Vec<String> {
    let x = npy_file(&format!("{tag}_x.npy"), &f32s(&[3], &[1.0, 2.0, 3.0]));
    ["run", &s(dir), "affine", &s(&x), "-o", &s(out)].iter().map(|a| a.to_string()).collect()
}

/// A build directory another user prepared (a copy of a real build, so
/// that loading it would run): `run`, `ops` and `build` refuse it before
/// reading anything, name it, its owner and the variable that trusts it;
/// the output is not written and the attacker's files are as they were.
/// Trusted through the variable, it runs.
#[test]
fn a_build_directory_another_user_owns_is_refused_until_trusted() {
    let Some((uid, gid)) = attacker() else { return };
    let src = kernel_sources("foreign");
    let mine = scratch("foreign").join("mine");
    let _ = std::fs::remove_dir_all(&mine);
    let o = customop_within(&build_args(&src, &mine), &[], Duration::from_secs(300));
    assert!(o.status.success(), "{}", text(&o));
    let theirs = scratch("foreign").join("theirs");
    let _ = std::fs::remove_dir_all(&theirs);
    assert!(Command::new("cp").arg("-a").arg(&mine).arg(&theirs).status().unwrap().success());
    chown_r(&theirs, uid, gid);
    let before = std::fs::read(theirs.join("libaffine.so")).unwrap();
    let out = scratch("foreign").join("y.npy");
    let _ = std::fs::remove_file(&out);
    for args in [run_args(&theirs, &out, "foreign"), vec!["ops".into(), s(&theirs)], build_args(&src, &theirs)] {
        let o = customop_within(&args, &[], Duration::from_secs(60));
        let t = text(&o);
        assert_eq!(o.status.code(), Some(14), "{args:?}: {t}");
        assert!(t.contains(&s(&theirs)) && t.contains(&format!("owned by {ATTACKER} (uid {uid})")), "{t}");
        assert!(t.contains(&format!("NEURONCUSTOMOP_TRUST_DIR={}", s(&theirs))), "{t}");
    }
    assert!(!out.exists(), "nothing ran");
    assert_eq!(std::fs::read(theirs.join("libaffine.so")).unwrap(), before, "the build wrote nothing there");
    assert_eq!(std::fs::metadata(theirs.join("customop-build")).unwrap().uid(), uid);
    // Trusted (the directory, or everything): it runs.
    for trust in [s(&theirs), "*".to_owned()] {
        let o = customop_within(&run_args(&theirs, &out, "trusted"), &[("NEURONCUSTOMOP_TRUST_DIR", &trust)], Duration::from_secs(60));
        assert!(o.status.success(), "{}", text(&o));
        assert_eq!(customop::npy::read(&out).unwrap().to_f32(), [3.0, 5.0, 7.0]);
    }
}

/// The victim's own build directory, but one others can write (mode
/// 0777), or inside a directory the attacker owns (who can rename it away
/// and put theirs in its place), or holding a `customop-build/` the
/// attacker made: each refused, naming the directory at fault.
#[test]
fn a_build_directory_others_can_write_or_replace_is_refused() {
    let Some((uid, gid)) = attacker() else { return };
    let src = kernel_sources("writable");
    let root = scratch("writable");
    let dir = root.join("open");
    let _ = std::fs::remove_dir_all(&dir);
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(300));
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(std::fs::metadata(&dir).unwrap().permissions().mode() & 0o777, 0o700, "made private");
    assert_eq!(std::fs::metadata(dir.join("customop-build")).unwrap().permissions().mode() & 0o777, 0o700);
    let out = root.join("y.npy");
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    let o = customop_within(&run_args(&dir, &out, "open"), &[], Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(14), "{}", text(&o));
    assert!(text(&o).contains("mode 0777) can be written by other users"), "{}", text(&o));
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();

    // Their parent.
    let parent = root.join("their-parent");
    let _ = std::fs::remove_dir_all(&parent);
    std::fs::create_dir_all(&parent).unwrap();
    chown_r(&parent, uid, gid);
    let inside = parent.join("mine");
    let o = customop_within(&build_args(&src, &inside), &[], Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(14), "{}", text(&o));
    assert!(text(&o).contains(&format!("is inside {}, which is owned by {ATTACKER}", s(&parent))), "{}", text(&o));

    // Their customop-build/ in the victim's directory.
    let planted = root.join("planted-work");
    let _ = std::fs::remove_dir_all(&planted);
    std::fs::create_dir_all(planted.join("customop-build")).unwrap();
    std::fs::write(planted.join("customop-build/manifest"), "libaffine.so\ncustomop.json\n").unwrap();
    chown_r(&planted.join("customop-build"), uid, gid);
    let o = customop_within(&build_args(&src, &planted), &[], Duration::from_secs(60));
    assert_eq!(o.status.code(), Some(14), "{}", text(&o));
    assert!(text(&o).contains(&s(&planted.join("customop-build"))), "{}", text(&o));
    assert!(!planted.join("libaffine.so").exists());
}

/// The lock: a FIFO or a link planted under its name is refused at once
/// (no hang, the link's target untouched); a lock from an older customop
/// (0644 in a 0755 work directory) that the attacker holds is waited for
/// only as long as NEURONCUSTOMOP_LOCK_TIMEOUT, and the error names the
/// holder's pid and user; the lock is made private for the next time.
#[test]
fn the_lock_cannot_be_held_hostage() {
    let Some(_) = attacker() else { return };
    let src = kernel_sources("lock");
    let dir = scratch("lock").join("b");
    let _ = std::fs::remove_dir_all(&dir);
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(300));
    assert!(o.status.success(), "{}", text(&o));
    let work = dir.join("customop-build");
    let lock = work.join("lock");
    assert_eq!(std::fs::metadata(&lock).unwrap().permissions().mode() & 0o777, 0o600);

    std::fs::remove_file(&lock).unwrap();
    let c = std::ffi::CString::new(s(&lock)).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o666) }, 0);
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(30));
    assert!(!o.status.success() && text(&o).contains("is not a regular file"), "{}", text(&o));
    std::fs::remove_file(&lock).unwrap();
    let victim = scratch("lock").join("victim.txt");
    std::fs::write(&victim, "keep").unwrap();
    std::os::unix::fs::symlink(&victim, &lock).unwrap();
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(30));
    assert!(!o.status.success() && text(&o).contains("is a symbolic link"), "{}", text(&o));
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
    std::fs::remove_file(&lock).unwrap();

    // An older customop's layout, which others could open.
    std::fs::write(&lock, "").unwrap();
    std::fs::set_permissions(&lock, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&work, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut holder = as_attacker(&format!("exec flock --shared --nonblock --no-fork {} sleep 30", s(&lock))).spawn().unwrap();
    let pid = holder.id();
    std::thread::sleep(Duration::from_millis(500));
    let started = Instant::now();
    let o = customop_within(&build_args(&src, &dir), &[("NEURONCUSTOMOP_LOCK_TIMEOUT", "1")], Duration::from_secs(30));
    let _ = holder.kill();
    let _ = holder.wait();
    let t = text(&o);
    assert!(started.elapsed() < Duration::from_secs(20), "bounded: {:?}", started.elapsed());
    assert!(!o.status.success() && t.contains(&format!("is held by process {pid}")) && t.contains(ATTACKER), "{t}");
    assert!(t.contains("NEURONCUSTOMOP_LOCK_TIMEOUT"), "{t}");
    assert_eq!(std::fs::metadata(&lock).unwrap().permissions().mode() & 0o777, 0o600, "made private");
    // Released: the build goes on.
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(300));
    assert!(o.status.success(), "{}", text(&o));
}

/// A stamp that lists `/dev/zero` as an input (hashing it would never
/// end) or a FIFO: the object is rebuilt, promptly, and nothing hangs.
#[test]
fn a_stamp_listing_a_device_or_fifo_is_not_read() {
    let src = kernel_sources("stamp");
    let dir = scratch("stamp").join("b");
    let _ = std::fs::remove_dir_all(&dir);
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(300));
    assert!(o.status.success(), "{}", text(&o));
    let fifo = scratch("stamp").join("fifo");
    let _ = std::fs::remove_file(&fifo);
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let stamps: Vec<PathBuf> =
        std::fs::read_dir(dir.join("customop-build/obj")).unwrap().map(|e| e.unwrap().path()).filter(|p| p.extension().is_some_and(|e| e == "stamp")).collect();
    assert!(!stamps.is_empty());
    for st in &stamps {
        let mut t = std::fs::read_to_string(st).unwrap();
        t.push_str(&format!("0000000000000000 /dev/zero\n0000000000000000 {}\n", s(&fifo)));
        std::fs::write(st, t).unwrap();
    }
    let o = customop_within(&build_args(&src, &dir), &[], Duration::from_secs(300));
    let t = text(&o);
    assert!(o.status.success() && t.contains("compiled"), "{t}");
}

/// A `ziglang/` package in the working directory (a shared project
/// directory, /tmp): the device build does not run it.
#[test]
fn a_ziglang_package_in_the_working_directory_does_not_run() {
    let Some((uid, gid)) = attacker() else { return };
    let src = kernel_sources("zig");
    let cwd = scratch("zig").join("shared-cwd");
    let _ = std::fs::remove_dir_all(&cwd);
    std::fs::create_dir_all(cwd.join("ziglang")).unwrap();
    let marker = cwd.join("ran");
    let payload = format!("open({:?}, 'w').write('planted ziglang ran')\n", s(&marker));
    std::fs::write(cwd.join("ziglang/__init__.py"), &payload).unwrap();
    std::fs::write(cwd.join("ziglang/__main__.py"), &payload).unwrap();
    chown_r(&cwd, uid, gid);
    std::fs::set_permissions(&cwd, std::fs::Permissions::from_mode(0o777)).unwrap();
    let out = scratch("zig").join("b");
    let _ = std::fs::remove_dir_all(&out);
    let mut args = build_args(&src, &out);
    args.extend(["--target".into(), "qemu".into()]);
    let o = Command::new(env!("CARGO_BIN_EXE_customop")).args(&args).current_dir(&cwd).output().unwrap();
    assert!(!marker.exists(), "the planted ziglang ran as the victim:\n{}", text(&o));
    // Whatever else the build needs (a nightly, ziglang itself) may be
    // missing here; the planted package must not be what answered.
    assert!(!text(&o).contains("planted"), "{}", text(&o));
}
