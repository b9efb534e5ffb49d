//! C++ to windowed Xtensa objects with open, registry-installed parts
//! (`../shared/TOOLCHAIN.md`, "C++ for Xtensa"):
//!
//! 1. the clang front end of the PyPI package `ziglang` (pinned,
//!    [`ZIG_VERSION`]) emits LLVM IR for `xtensa-freestanding-none` (its
//!    own LLVM has no Xtensa backend, so it stops at IR);
//! 2. the pinned Rust nightly's `llc` (component `llvm-tools`, the LLVM
//!    that compiles our Rust code for Xtensa) turns the IR into an object;
//! 3. GNU ld (`xtensa-lx106-elf-ld`) links ([`super::images`]).
//!
//! This module is the one place that holds the flags. The target features
//! are read from `xtensa-target.json`, the Rust target's own list, so the
//! C++ objects and the Rust staticlib agree by construction.

use super::python_module;
use crate::cache;
use crate::compiler::{cached, run_tool, Outcome};
use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The `ziglang` release whose clang this was verified with.
pub const ZIG_VERSION: &str = "0.17.1";
/// What installs it (the CI runs the same).
pub const ZIG_INSTALL: &str = "pip install ziglang==0.17.1";
/// The Rust toolchain whose `llc` compiles the IR (as xtask's).
pub const NIGHTLY: &str = "nightly-2026-10-15";
/// The GNU linker and strip of the Xtensa binutils.
pub const LD: &str = "xtensa-lx106-elf-ld";
/// See [`LD`].
pub const STRIP: &str = "xtensa-lx106-elf-strip";

/// The Rust target specification the device staticlib is built with.
const TARGET_JSON: &str = include_str!("../../../xtensa-target.json");

/// The flags of the front end besides `-mcpu` and the include directory.
/// Why each one that is not obvious:
/// - `-fomit-frame-pointer`: zig's default keeps frame pointers, and LLVM
///   then restores SP with `movsp`, which raises the Alloca exception;
/// - `-fno-exceptions -fno-rtti`: kernels have neither (as in the vendor's
///   device build); exceptions would leave `.gcc_except_table` sections and
///   unwinder references no device library provides;
/// - `-fno-threadsafe-statics`: no `__cxa_guard_*` on the device;
/// - `-g`: DWARF for `run --profile`'s lines; it changes no code (checked:
///   the images' code sections are byte-identical to a `-g0` build's);
/// - `-ffunction-sections -fdata-sections`: `--gc-sections` keeps only
///   what the op table reaches;
/// - `-UNDEBUG`: zig's driver defines `NDEBUG` at `-O2`, which g++ (the
///   simulator's compiler) does not: a kernel's `assert` would check on
///   the simulator and vanish on the device. A user's `-DNDEBUG` comes
///   later and still wins.
pub const FRONT_END_FLAGS: &[&str] = &[
    "-target",
    "xtensa-freestanding-none",
    "-std=c++17",
    "-O2",
    "-g",
    "-fomit-frame-pointer",
    "-fno-exceptions",
    "-fno-rtti",
    "-fno-threadsafe-statics",
    "-fno-asynchronous-unwind-tables",
    "-ffunction-sections",
    "-fdata-sections",
    "-UNDEBUG",
];

/// libc++'s own sources a device kernel may need compiled (relative to
/// the package's `libcxx/`), each with the mangled-name prefix of what it
/// defines: the headers declare `std::sort`'s instantiations for the
/// arithmetic types `extern` (`__sort<__less<float>&, float*>`), defined in
/// `algorithm.cpp`. A source is compiled (with the kernel's flags, into its
/// build directory, cached) only when a kernel object's IR declares such a
/// symbol, so a build that does not sort does not pay for it; and
/// `--gc-sections` keeps only the instantiations called. The rest of
/// libc++'s out-of-line part (`new`/`delete`, the abort paths) is the
/// device library's (`src/device/cxx.rs`).
pub const LIBCXX_SOURCES: &[(&str, &str)] = &[("src/algorithm.cpp", "@_ZNSt3__16__sortI")];

/// The `llc` flags (the IR carries the target features).
pub const LLC_FLAGS: &[&str] = &["-mtriple=xtensa-none-elf", "-O2", "-function-sections", "-data-sections", "-filetype=obj"];

/// The Rust target's `"features"`, e.g. `["windowed", "density", ...]`.
pub fn target_features() -> Vec<String> {
    let v: serde_json::Value = serde_json::from_str(TARGET_JSON).expect("xtensa-target.json is JSON");
    let list = v["features"].as_str().expect("xtensa-target.json has a features string");
    list.split(',').map(|f| f.trim().trim_start_matches('+').to_owned()).filter(|f| !f.is_empty()).collect()
}

/// `-mcpu=generic+windowed+density+...`: clang's spelling of the same list.
pub fn mcpu_flag() -> String {
    let mut s = String::from("-mcpu=generic");
    for f in target_features() {
        s.push('+');
        s.push_str(&f);
    }
    s
}

/// The located tools.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// The Python that has `ziglang` (`$PYTHON`, else `python3`).
    pub python: PathBuf,
    /// The nightly's `llc`.
    pub llc: PathBuf,
    /// The package's libc++ (`<lib_dir>/libcxx`: `include/`, `src/`).
    pub libcxx: PathBuf,
}

/// A string field of `zig env`'s output (ZON: `.name = "value",`).
fn zon_field(text: &str, name: &str) -> Option<String> {
    let key = format!(".{name} = \"");
    let line = text.lines().map(str::trim).find(|l| l.starts_with(&key))?;
    let rest = &line[key.len()..];
    Some(rest[..rest.find('"')?].to_owned())
}

fn missing(msg: String) -> Error {
    Error::new(ErrorKind::Environment, msg)
}

impl Toolchain {
    /// Finds the tools and checks their versions; a clear error naming
    /// what to install when one is missing.
    pub fn find() -> Result<Self> {
        let python = std::env::var_os("PYTHON").map_or_else(|| PathBuf::from("python3"), PathBuf::from);
        // `env` rather than `version`: one call gives the version and the
        // lib directory (where libc++'s headers and sources are).
        let out = python_module::command(&python, "ziglang").arg("env").output().map_err(|e| {
            missing(format!("the Xtensa C++ toolchain needs Python with the ziglang package: cannot run {}: {e} ({ZIG_INSTALL})", python.display()))
        })?;
        if !out.status.success() {
            return Err(missing(format!(
                "the Xtensa C++ toolchain needs the PyPI package ziglang {ZIG_VERSION}: `{} -m ziglang` failed ({}): install it with `{ZIG_INSTALL}`",
                python.display(),
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        let env = String::from_utf8_lossy(&out.stdout);
        let version = zon_field(&env, "version").unwrap_or_default();
        if version != ZIG_VERSION {
            return Err(missing(format!("ziglang {version} is installed, the Xtensa build is verified with {ZIG_VERSION}: `{ZIG_INSTALL}`")));
        }
        let libcxx = zon_field(&env, "lib_dir").map(|d| Path::new(&d).join("libcxx")).unwrap_or_default();
        if !libcxx.join("include/vector").is_file() || !libcxx.join(LIBCXX_SOURCES[0].0).is_file() {
            return Err(missing(format!("ziglang {ZIG_VERSION} has no libc++ headers and sources at {}: reinstall it (`{ZIG_INSTALL}`)", libcxx.display())));
        }
        let out = Command::new("rustup")
            .args(["run", NIGHTLY, "rustc", "--print", "sysroot"])
            .output()
            .map_err(|e| missing(format!("cannot run rustup to find the {NIGHTLY} toolchain's llc: {e}")))?;
        if !out.status.success() {
            return Err(missing(format!("the Rust toolchain {NIGHTLY} is not installed (`rustup toolchain install {NIGHTLY} --component llvm-tools`)")));
        }
        let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        let llc = Path::new(&sysroot).join("lib/rustlib/x86_64-unknown-linux-gnu/bin/llc");
        if !llc.is_file() {
            return Err(missing(format!(
                "{} is missing: add the llvm-tools component (`rustup component add llvm-tools --toolchain {NIGHTLY}`)",
                llc.display()
            )));
        }
        Ok(Self { python, llc, libcxx })
    }

    /// The front end's full flag list for `include` and the user's flags.
    pub fn flags(&self, include: &Path, user: &[String]) -> Vec<String> {
        let mut f: Vec<String> = FRONT_END_FLAGS.iter().map(|s| (*s).to_owned()).collect();
        f.insert(2, mcpu_flag());
        // libc++ configured for the device: our `__config_site`
        // first (zig's `__config` includes none), then our one-message
        // stand-ins for the headers the device cannot have, then libc++'s
        // headers, which `#include_next` the C headers below. `-I`, not
        // `-isystem` (TOOLCHAIN.md: zig puts clang's builtin headers
        // first, which breaks libc++'s <stddef.h>), so the header scan
        // (`-MM`) lists them and the build cache sees them change.
        let ours = include.join("device-libcxx");
        f.push("-include".into());
        f.push(ours.join("__config_site").display().to_string());
        f.push("-I".into());
        f.push(ours.display().to_string());
        f.push("-I".into());
        f.push(self.libcxx.join("include").display().to_string());
        f.push("-I".into());
        f.push(include.display().to_string());
        // The C library headers the device library backs (<stdlib.h>,
        // <stdio.h>, <math.h>, ...): freestanding clang has none of them.
        f.push("-I".into());
        f.push(include.join("device-libc").display().to_string());
        f.extend(user.iter().cloned());
        f
    }

    /// The libc++ sources (see [`LIBCXX_SOURCES`]) that the kernel objects
    /// `objects` need: those whose symbols one of their IR files (the
    /// `.ll` beside each object) declares.
    pub fn libcxx_sources_for(&self, objects: &[PathBuf]) -> Vec<PathBuf> {
        let irs: Vec<String> = objects.iter().filter_map(|o| std::fs::read_to_string(o.with_extension("ll")).ok()).collect();
        LIBCXX_SOURCES
            .iter()
            .filter(|(_, prefix)| irs.iter().any(|ir| ir.lines().any(|l| l.starts_with("declare") && l.contains(prefix))))
            .map(|(src, _)| self.libcxx.join(src))
            .collect()
    }

    /// Whether the kernel object `obj` (its IR, the `.ll` beside it) has
    /// global constructors: objects at namespace scope initialised, or
    /// destructors registered, when the image loads. The device images do
    /// not run them (no `.init_array`: the loader calls `register_funcs`
    /// and the op launchers only), while the simulator's `dlopen` does.
    pub fn has_global_constructors(obj: &Path) -> bool {
        std::fs::read_to_string(obj.with_extension("ll")).is_ok_and(|ir| ir.lines().any(|l| l.starts_with("@llvm.global_ctors")))
    }

    /// Compiles `src` to the Xtensa object `obj` (through `obj.ll`), unless
    /// the cache says it is current for these flags.
    pub fn compile(&self, flags: &[String], src: &Path, obj: &Path) -> Result<Outcome> {
        let mut key = cache::hash_str(&format!("xtensa zig {ZIG_VERSION} {}", crate::compiler::identity(&self.llc)));
        for f in flags {
            key = cache::fnv1a(key, f.as_bytes());
            key = cache::fnv1a(key, &[0]);
        }
        key = cache::fnv1a(key, src.display().to_string().as_bytes());
        // The IR beside the object is part of what a compile produces.
        if !obj.with_extension("ll").is_file() {
            let _ = std::fs::remove_file(obj.with_extension("stamp"));
        }
        cached(src, obj, key, |tmp_obj, dep| {
            let ir = tmp_obj.with_extension("ll");
            let mut zig = python_module::command(&self.python, "ziglang");
            // zig's driver adds a `-c` of its own that clang then calls unused:
            // not the author's warning, so not shown as theirs.
            zig.arg("c++").args(flags).args(["-S", "-emit-llvm", "-Wno-unused-command-line-argument"]).arg(src).arg("-o").arg(&ir);
            run_tool(&mut zig, &format!("compiling {} for Xtensa (clang front end)", src.display()), ZIG_INSTALL)?;
            // The header list in a second, preprocessor-only pass: zig's
            // driver takes `-MMD` for its own cache and then writes the IR
            // nowhere, so the two cannot share one run.
            let mut deps = python_module::command(&self.python, "ziglang");
            deps.arg("c++").args(flags).arg("-MM").arg("-MF").arg(dep).arg(src);
            run_tool(&mut deps, &format!("listing the headers of {} (clang front end)", src.display()), ZIG_INSTALL)?;
            let mut llc = Command::new(&self.llc);
            llc.args(LLC_FLAGS).arg(&ir).arg("-o").arg(tmp_obj);
            let r = run_tool(&mut llc, &format!("compiling {} for Xtensa (llc)", src.display()), "the nightly's llvm-tools");
            if r.is_err() {
                let _ = std::fs::remove_file(&ir);
                return r;
            }
            // The IR stays beside the object (`obj.ll`): the build reads it
            // for the libc++ sources the kernel needs and global constructors.
            std::fs::rename(&ir, obj.with_extension("ll")).map_err(|e| crate::error::Error::io("write", &obj.with_extension("ll"), e))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cpu_features_are_the_rust_targets() {
        let json: serde_json::Value = serde_json::from_str(TARGET_JSON).unwrap();
        let rust = json["features"].as_str().unwrap().replace(',', "");
        let clang = mcpu_flag().strip_prefix("-mcpu=generic").unwrap().to_owned();
        assert_eq!(clang, rust, "the C++ objects must be built for the Rust staticlib's features");
        // The ones TOOLCHAIN.md says are required.
        for f in ["windowed", "density", "mul32", "div32", "s32c1i", "exception"] {
            assert!(target_features().iter().any(|t| t == f), "{f}");
        }
        assert!(!target_features().iter().any(|t| t == "fp"), "the recipe is soft-float");
    }

    #[test]
    fn libcxx_sources_are_compiled_only_for_a_kernel_that_declares_their_symbols() {
        let tc = Toolchain { python: "python3".into(), llc: "llc".into(), libcxx: "/zig/lib/libcxx".into() };
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().to_path_buf();
        let (sorts, plain) = (dir.join("sorts.o"), dir.join("plain.o"));
        std::fs::write(sorts.with_extension("ll"), "define void @f() {\n}\ndeclare void @_ZNSt3__16__sortIRNS_6__lessIffEEPfEEvT0_S5_T_(ptr, ptr, ptr)\n")
            .unwrap();
        // Defining (not declaring) or merely naming the symbol does not count.
        std::fs::write(plain.with_extension("ll"), "; _ZNSt3__16__sortI\ndefine void @_ZNSt3__16__sortIx() {\n}\n").unwrap();
        assert_eq!(tc.libcxx_sources_for(std::slice::from_ref(&plain)), Vec::<PathBuf>::new());
        assert_eq!(tc.libcxx_sources_for(&[plain, sorts]), vec![PathBuf::from("/zig/lib/libcxx/src/algorithm.cpp")]);
    }

    #[test]
    fn the_flags_keep_frame_pointers_exceptions_and_rtti_off() {
        let tc = Toolchain { python: "python3".into(), llc: "llc".into(), libcxx: "/zig/lib/libcxx".into() };
        let f = tc.flags(Path::new("inc"), &["-DX=1".into()]);
        for want in ["-fomit-frame-pointer", "-fno-exceptions", "-fno-rtti", "-g"] {
            assert!(f.iter().any(|x| x == want), "{want}");
        }
        assert_eq!(f[2], mcpu_flag());
        // Our __config_site forced first; our stand-ins before libc++'s
        // headers, which come before the C headers they #include_next.
        let at = |x: &str| f.iter().position(|y| y == x).unwrap_or_else(|| panic!("{x} in {f:?}"));
        assert_eq!(at("inc/device-libcxx/__config_site"), at("-include") + 1);
        assert!(at("inc/device-libcxx") < at("/zig/lib/libcxx/include"));
        assert!(at("/zig/lib/libcxx/include") < at("inc/device-libc"));
        // The user's flags come last, so `-fno-omit-frame-pointer` wins.
        assert_eq!(f.last().map(String::as_str), Some("-DX=1"));
    }
}
