//! What the commands need from outside the repository, in one table: the
//! preflight that `test` and `run-example` run before any build (a missing
//! tool is named with what provides it, in well under a second), and
//! `cargo xtask setup`, which installs exactly that table (`.ci/run` calls
//! it, so CI and a new user install the same things).

use crate::{apt, run, Result, TOOLCHAIN};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The pinned cargo-fuzz (`cargo install --locked`).
pub(crate) const CARGO_FUZZ_VERSION: &str = "0.13.2";
/// The PyPI `ziglang` whose clang front end the Xtensa C++ build is
/// verified with (TOOLCHAIN.md; customop checks the same version).
pub(crate) const ZIGLANG_VERSION: &str = "0.17.1";
/// The components of the pinned nightly: `rust-src` for `-Zbuild-std`,
/// `llvm-tools` for llvm-objdump/llc, `miri`, and `clippy`/`rustfmt` for
/// the lint steps (run with the pinned toolchain, so a newer stable on a
/// new machine cannot change what they report).
const COMPONENTS: &[&str] = &["rust-src", "llvm-tools", "miri", "clippy", "rustfmt"];

/// Where a missing requirement comes from.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Source {
    /// A Debian package (installed without recommends, as on CI).
    Apt(&'static str),
    /// A component of the pinned nightly.
    Component(&'static str),
    /// `cargo install cargo-fuzz --version CARGO_FUZZ_VERSION --locked`.
    CargoFuzz,
    /// The project's virtualenv with the pinned ziglang and NumPy
    /// (`crate::python_env`).
    PythonEnv,
}

/// Which command needs a requirement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum For {
    /// `cargo xtask run-example`.
    MainJob,
    /// `cargo xtask test` (everything).
    Tests,
}

/// One requirement: a program on `PATH`, or a file of the pinned nightly.
struct Need {
    what: Want,
    source: Source,
    main_job: bool,
}

enum Want {
    Program(&'static str),
    /// A path inside the pinned nightly's sysroot.
    SysrootFile(&'static str),
    /// The project's virtualenv has ziglang ZIGLANG_VERSION and NumPy.
    PythonEnv,
    /// `python3 -m venv` can make a virtualenv with pip in it (Debian
    /// splits `ensurepip` off into python3-venv).
    PythonVenv,
}

fn needs() -> Vec<Need> {
    use Source::*;
    use Want::*;
    let n = |what, source, main_job| Need { what, source, main_job };
    vec![
        n(Program("qemu-system-xtensa"), Apt("qemu-system-misc"), true),
        n(Program("xtensa-lx106-elf-ld"), Apt("binutils-xtensa-lx106"), true),
        // The tests read a device object's symbols with it (the tools read
        // ELF with the `object` crate).
        n(Program("xtensa-lx106-elf-nm"), Apt("binutils-xtensa-lx106"), true),
        // The C++ kernels (host builds; binutils' objcopy and, in tests, nm), the perf plugin.
        n(Program("g++"), Apt("g++"), true),
        n(Program("gcc"), Apt("gcc"), true),
        n(Program("nm"), Apt("binutils"), true),
        n(SysrootFile("lib/rustlib/src/rust/library/core/Cargo.toml"), Component("rust-src"), true),
        n(SysrootFile("lib/rustlib/x86_64-unknown-linux-gnu/bin/llvm-objdump"), Component("llvm-tools"), true),
        n(SysrootFile("bin/cargo-miri"), Component("miri"), false),
        n(SysrootFile("bin/cargo-clippy"), Component("clippy"), false),
        n(SysrootFile("bin/rustfmt"), Component("rustfmt"), false),
        n(Program("cargo-fuzz"), CargoFuzz, false),
        // customop/tests/debugging.rs stops in a kernel under gdb
        // (`customop run --no-fork`).
        n(Program("gdb"), Apt("gdb"), false),
        // customop/tests/report_page.rs renders `customop run --html`'s
        // page in a headless browser.
        n(Program("chromium"), Apt("chromium"), false),
        // The C++ kernels built for the emulated cores (customop --target qemu|q7): the main job.
        n(Program("python3"), Apt("python3"), true),
        // The project's virtualenv (ziglang for the main job's device build;
        // NumPy for the docs' snippets, run verbatim by
        // customop/tests/docs_snippets.rs) is made with python3's venv, and
        // so are the Python package's tests' (python/ci.sh).
        n(Want::PythonVenv, Apt("python3-venv"), true),
        n(Want::PythonEnv, Source::PythonEnv, true),
    ]
}

fn on_path(prog: &str) -> bool {
    std::env::var_os("PATH").is_some_and(|p| std::env::split_paths(&p).any(|d| is_executable(&d.join(prog))))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    p.metadata().is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The pinned nightly's sysroot, or None if it is not installed. Asks
/// rustup for the installed list first: `rustup run` of a missing
/// toolchain may try to install it.
fn sysroot() -> Option<PathBuf> {
    let list = Command::new("rustup").args(["toolchain", "list"]).output().ok()?;
    let installed = String::from_utf8_lossy(&list.stdout).lines().any(|l| l.starts_with(TOOLCHAIN));
    if !installed {
        return None;
    }
    let out = Command::new("rustup").args(["run", TOOLCHAIN, "rustc", "--print", "sysroot"]).output().ok()?;
    out.status.success().then(|| PathBuf::from(String::from_utf8_lossy(&out.stdout).trim()))
}

/// The pinned nightly's `bin` directory (looked up once).
pub(crate) fn toolchain_bin() -> Option<PathBuf> {
    static BIN: std::sync::OnceLock<Option<PathBuf>> = std::sync::OnceLock::new();
    BIN.get_or_init(|| sysroot().map(|s| s.join("bin"))).clone()
}

/// `python3` with no working directory on `sys.path`: `-m` and `-c` put
/// it first, so a `pip/`, `numpy/` or `ziglang/` folder where setup is run
/// (as root) would run instead of the package. `-P` (Python 3.11+) drops
/// just that; an older Python gets `-I`, which also ignores `PYTHON*`
/// variables and the user's site directory (setup installs into the
/// system's, so nothing it checks is hidden).
pub(crate) fn python3() -> Command {
    static SAFE_PATH: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    let p = *SAFE_PATH.get_or_init(|| Command::new("python3").args(["-P", "-c", ""]).current_dir("/").output().is_ok_and(|o| o.status.success()));
    let mut c = Command::new("python3");
    c.arg(if p { "-P" } else { "-I" });
    c
}

fn python_venv_ok() -> bool {
    python3().args(["-c", "import venv, ensurepip"]).output().is_ok_and(|o| o.status.success())
}

/// What `for_` needs and this machine lacks, as `(what, source)`.
fn missing(for_: For) -> Vec<(String, Source)> {
    let sysroot = sysroot();
    let mut m = Vec::new();
    if sysroot.is_none() {
        m.push((format!("the Rust toolchain {TOOLCHAIN}"), Source::Component("")));
    }
    for n in needs().into_iter().filter(|n| n.main_job || for_ == For::Tests) {
        let (ok, what) = match n.what {
            Want::Program(p) => (on_path(p), format!("`{p}`")),
            Want::PythonEnv => (crate::python_env::ok(), format!("ziglang {ZIGLANG_VERSION} and NumPy in {}", crate::python_env::dir().display())),
            Want::PythonVenv => (python_venv_ok(), "python3's venv module with ensurepip".to_owned()),
            Want::SysrootFile(f) => {
                if sysroot.is_none() {
                    continue;
                }
                let ok = sysroot.as_deref().is_some_and(|s| s.join(f).exists());
                (ok, format!("{TOOLCHAIN}'s {f}"))
            }
        };
        if !ok {
            m.push((what, n.source));
        }
    }
    m
}

fn how(s: Source) -> String {
    match s {
        Source::Apt(p) => format!("apt-get install --no-install-recommends {p}"),
        Source::Component("") => {
            format!("rustup toolchain install {TOOLCHAIN} --profile minimal -c {}", COMPONENTS.join(" -c "))
        }
        Source::Component(c) => format!("rustup component add {c} --toolchain {TOOLCHAIN}"),
        Source::CargoFuzz => format!("cargo install cargo-fuzz --version {CARGO_FUZZ_VERSION} --locked"),
        Source::PythonEnv => "cargo xtask setup (it makes the virtualenv from xtask/python-requirements.txt)".to_owned(),
    }
}

/// Stops with one line per missing requirement and the command that
/// provides it, before anything is built.
pub(crate) fn check(for_: For) -> Result {
    let m = missing(for_);
    if m.is_empty() {
        return Ok(());
    }
    let mut msg = String::from("this machine lacks what the command needs:\n");
    for (what, src) in &m {
        msg.push_str(&format!("  - {what}: {}\n", how(*src)));
    }
    msg.push_str("`cargo xtask setup` installs all of it (as root: it uses apt-get), as `.ci/run` does.");
    Err(msg)
}

/// Whether this process runs as root (apt-get then works as it is).
fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find_map(|l| l.strip_prefix("Uid:").map(|r| r.split_whitespace().next() == Some("0"))))
        .unwrap_or(false)
}

/// What the README's two commands run first: nothing when the machine has
/// everything; as root, installs what `for_` lacks (what `cargo xtask
/// setup` would); otherwise stops with the list and the one command to
/// run.
pub(crate) fn ensure(for_: For) -> Result {
    let m = missing(for_);
    if m.is_empty() {
        return Ok(());
    }
    if !is_root() {
        return check(for_).map_err(|e| format!("{e}\nRun, as root: cargo xtask setup"));
    }
    let list: Vec<&str> = m.iter().map(|(w, _)| w.as_str()).collect();
    eprintln!("xtask: installing what this command needs and the machine lacks (as `cargo xtask setup` does): {}", list.join(", "));
    install(for_)
}

/// `cargo xtask setup`: installs whatever of the table is missing.
pub(crate) fn setup() -> Result {
    install(For::Tests)?;
    crate::second_qemu::install()
}

/// Installs what `for_` needs and the machine lacks.
fn install(for_: For) -> Result {
    let m = missing(for_);
    let mut apt: Vec<&str> = m.iter().filter_map(|(_, s)| if let Source::Apt(p) = s { Some(*p) } else { None }).collect();
    apt.dedup();
    if !apt.is_empty() {
        apt::install(&apt)?;
    }
    if m.iter().any(|(_, s)| matches!(s, Source::Component(_))) {
        let mut cmd = Command::new("rustup");
        cmd.args(["toolchain", "install", TOOLCHAIN, "--profile", "minimal"]);
        for c in COMPONENTS {
            cmd.args(["-c", c]);
        }
        run(&mut cmd)?;
    }
    if m.iter().any(|(_, s)| *s == Source::PythonEnv) {
        crate::python_env::install()?;
    }
    if m.iter().any(|(_, s)| *s == Source::CargoFuzz) {
        run(Command::new("cargo").args(["install", "cargo-fuzz", "--version", CARGO_FUZZ_VERSION, "--locked"]))?;
    }
    check(for_)?;
    match for_ {
        For::Tests => println!("xtask: setup: everything `cargo xtask test` and `cargo xtask run-example` need is installed"),
        For::MainJob => println!("xtask: setup: everything `cargo xtask run-example` needs is installed"),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_missing_thing_names_its_installer() {
        for n in needs() {
            let h = how(n.source);
            assert!(
                h.starts_with("apt-get install") || h.starts_with("rustup ") || h.starts_with("cargo install") || h.starts_with("cargo xtask setup"),
                "{h}"
            );
        }
        assert!(how(Source::Component("")).contains("-c rust-src -c llvm-tools -c miri -c clippy -c rustfmt"));
    }

    /// A `json/` package where setup runs is not what `import json` finds
    /// (it would be with a plain `python3 -c`).
    #[test]
    fn setup_s_python_ignores_the_working_directory() {
        let t = tempfile::tempdir().unwrap();
        let d = t.path();
        std::fs::create_dir(d.join("json")).unwrap();
        std::fs::write(d.join("json/__init__.py"), "raise SystemExit('the planted json ran')").unwrap();
        let planted = Command::new("python3").args(["-c", "import json"]).current_dir(d).output().unwrap();
        let safe = python3().args(["-c", "import json"]).current_dir(d).output().unwrap();
        assert!(!planted.status.success(), "the plain form runs the planted package (the test can see it)");
        assert!(safe.status.success(), "{}", String::from_utf8_lossy(&safe.stderr));
    }

    #[test]
    fn a_program_not_on_path_is_missing() {
        assert!(!on_path("surely-no-such-program-xtask"));
        assert!(on_path("sh"));
    }
}
