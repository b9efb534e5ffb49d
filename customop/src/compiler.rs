//! The compiler driver: one C++ source to one object, skipped when the
//! cache says the object is current ([`crate::cache`]).

use crate::atomic;
use crate::cache::{self, Stamp};
use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// How to compile.
#[derive(Clone, Debug)]
pub struct Compiler {
    /// The compiler (`$CXX`, else `g++`).
    pub cxx: PathBuf,
    /// Flags for every source: the standard, optimisation, PIC, the
    /// include directory, then the user's `--cflags`.
    pub flags: Vec<String>,
}

/// Whether an object was compiled or found current.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Compiled now.
    Compiled,
    /// Up to date: not recompiled.
    Cached,
}

impl Compiler {
    /// The host compiler with the tool's flags, `-I include`, and `user`.
    pub fn host(include: &Path, user: &[String]) -> Self {
        Self::host_with(std::env::var_os("CXX").map_or_else(|| PathBuf::from("g++"), PathBuf::from), include, user)
    }

    /// [`host`](Self::host) with the compiler `cxx`.
    pub fn host_with(cxx: PathBuf, include: &Path, user: &[String]) -> Self {
        // `-g`: a debugger (`customop run --no-fork`) and a crash's
        // backtrace name the kernel's lines; the code is the same.
        let mut flags: Vec<String> = ["-std=c++17", "-O2", "-fPIC", "-g"].iter().map(|s| (*s).to_owned()).collect();
        if is_gcc(&cxx) {
            flags.extend(GCC_LOOP_FLAGS.iter().map(|s| (*s).to_owned()));
        }
        flags.push("-I".into());
        flags.push(include.display().to_string());
        flags.extend(user.iter().cloned());
        Self { cxx, flags }
    }

    fn command_key(&self, src: &Path) -> u64 {
        let mut h = cache::hash_str(&identity(&self.cxx));
        for f in &self.flags {
            h = cache::fnv1a(h, f.as_bytes());
            h = cache::fnv1a(h, &[0]);
        }
        cache::fnv1a(h, src.display().to_string().as_bytes())
    }

    /// Compiles `src` to `obj` unless the cache says `obj` is current.
    /// A compiler failure is an error carrying its diagnostics.
    pub fn compile(&self, src: &Path, obj: &Path) -> Result<Outcome> {
        cached(src, obj, self.command_key(src), |tmp_obj, dep| {
            let mut cmd = Command::new(&self.cxx);
            cmd.args(&self.flags).arg("-MMD").arg("-MF").arg(dep).arg("-c").arg(src).arg("-o").arg(tmp_obj);
            run_tool(&mut cmd, &format!("compiling {}", src.display()), "set CXX to a C++17 compiler")
        })
    }
}

/// The loop optimisations LLVM's `-O2` makes (the device's compiler, see
/// `xtensa::toolchain`) and GCC's `-O2` leaves out: vectorising with the
/// full cost model, which also if-converts a loop's branches (a kernel's
/// `x > 0 ? x : 0` is a branch per element at GCC's `-O2`, 7x slower on
/// random signs). Contents are unchanged: no reassociation of floating
/// point, which only `-ffast-math` allows. `--cflags` comes after, so a
/// kernel author can turn them off.
pub const GCC_LOOP_FLAGS: &[&str] = &["-ftree-vectorize", "-fvect-cost-model=dynamic"];

/// Whether `cxx` is GCC (whose banner names the Free Software
/// Foundation); clang and others get no GCC-only flags.
fn is_gcc(cxx: &Path) -> bool {
    let mut probe = Command::new(cxx);
    probe.arg("--version");
    // Killed with the build, as every compiler it runs.
    die_with_parent(&mut probe);
    probe.output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("Free Software Foundation"))
}

/// What identifies a compiler: its resolved path, size and modification
/// time (an upgraded compiler recompiles everything).
pub fn identity(program: &Path) -> String {
    let found = if program.components().count() > 1 {
        Some(program.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| std::env::split_paths(&paths).map(|d| d.join(program)).find(|p| p.is_file()))
    };
    let Some(p) = found.and_then(|p| std::fs::canonicalize(p).ok()) else { return program.display().to_string() };
    let m = std::fs::metadata(&p).ok();
    let mtime = m.as_ref().and_then(|m| m.modified().ok()).and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok()).map_or(0, |d| d.as_nanos());
    format!("{} {} {mtime}", p.display(), m.map_or(0, |m| m.len()))
}

/// Runs `compile` (which writes the object and a make-style dependency
/// file at the temporary paths it is given) unless `obj`'s stamp says it
/// is current for `key`; then renames the object into place and records
/// its hash, the source's and every header's. One cache for every
/// toolchain (host g++, the Xtensa one).
///
/// Kills and concurrency: the compiler writes a unique temporary, so a
/// compiler left running by a killed build publishes nothing; an input
/// modified while it compiled leaves the object unstamped (compiled again
/// next time) rather than stamped with contents it was not built from.
pub fn cached(src: &Path, obj: &Path, key: u64, compile: impl FnOnce(&Path, &Path) -> Result<()>) -> Result<Outcome> {
    let stamp = obj.with_extension("stamp");
    if Stamp::is_current(&stamp, key, obj, &[src.to_path_buf()]) {
        return Ok(Outcome::Cached);
    }
    let _ = std::fs::remove_file(&stamp);
    let dir = obj.parent().unwrap_or(Path::new("."));
    let started = std::time::SystemTime::now();
    let tmp_obj = atomic::temp_in(dir, TEMP_PREFIX, ".o")?;
    let tmp_dep = atomic::temp_in(dir, TEMP_PREFIX, ".d")?;
    compile(&tmp_obj, &tmp_dep)?;
    let deps = std::fs::read_to_string(&tmp_dep).map(|t| cache::depfile_inputs(&t)).unwrap_or_default();
    let inputs = std::iter::once(src.to_path_buf()).chain(deps).filter_map(|p| cache::hash_file(&p).map(|h| (p, h))).collect::<Vec<_>>();
    let unchanged = inputs.iter().all(|(p, _)| std::fs::metadata(p).and_then(|m| m.modified()).is_ok_and(|t| t < started));
    let output = cache::hash_file(&tmp_obj).ok_or_else(|| Error::new(ErrorKind::Compile, format!("compiling {} wrote no object", src.display())))?;
    atomic::persist(tmp_obj, obj)?;
    if unchanged {
        atomic::write(&stamp, Stamp { command: key, output, inputs }.render().as_bytes())?;
    }
    Ok(Outcome::Compiled)
}

/// The prefix of the cache's temporaries (a later build removes strays).
pub const TEMP_PREFIX: &str = ".tmp-";

/// Makes `cmd`'s process die when this one does (a build killed with
/// SIGKILL leaves no compiler running).
pub fn die_with_parent(cmd: &mut Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: the closure runs in the child between fork and exec and
    // calls only prctl and getppid, which are async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL);
            // The parent may have died before the prctl: then exit now.
            if libc::getppid() == 1 {
                libc::_exit(1);
            }
            Ok(())
        });
    }
}

/// Runs a tool; its failure is a compile error with the command line and
/// the tool's output, a tool that cannot start an environment error
/// (`hint` says what to install or set).
pub fn run_tool(cmd: &mut Command, what: &str, hint: &str) -> Result<()> {
    die_with_parent(cmd);
    crate::progress::detail(&format!("customop: {what}: {}", shell_line(cmd)));
    let out =
        cmd.output().map_err(|e| Error::new(ErrorKind::Environment, format!("{what}: cannot run {}: {e} ({hint})", cmd.get_program().to_string_lossy())))?;
    let printed = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    if !out.status.success() {
        return Err(Error::new(ErrorKind::Compile, format!("{what} failed ({}):\n{printed}", shell_line(cmd))));
    }
    // A tool that passed but printed (a compiler's warnings): streamed
    // with -v, and kept for the build's summary either way.
    if !printed.trim().is_empty() {
        crate::progress::detail(printed.trim_end());
    }
    crate::progress::warned(what, &printed);
    Ok(())
}

/// A command as a shell line (for messages).
pub fn shell_line(cmd: &Command) -> String {
    std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(|a| {
            let s = a.to_string_lossy();
            if s.contains(' ') {
                format!("'{s}'")
            } else {
                s.into_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Splits a `--cflags` string as a shell would (whitespace, single and
/// double quotes, backslash escapes; no expansion).
pub fn split_flags(s: &str) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut quote: Option<char> = None;
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (None, '\'' | '"') => {
                quote = Some(c);
                have = true;
            }
            (Some(q), c) if c == q => quote = None,
            (None | Some('"'), '\\') => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                    have = true;
                }
            }
            (None, c) if c.is_whitespace() => {
                if have {
                    out.push(std::mem::take(&mut cur));
                    have = false;
                }
            }
            (_, c) => {
                cur.push(c);
                have = true;
            }
        }
    }
    if quote.is_some() {
        return Err(Error::new(ErrorKind::Usage, format!("--cflags has an unterminated quote: {s}")));
    }
    if have {
        out.push(cur);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn gcc_gets_the_loop_flags_before_the_users_and_other_compilers_do_not() {
        let user = vec!["-fvect-cost-model=very-cheap".to_owned()];
        let gcc = super::Compiler::host_with("g++".into(), std::path::Path::new("inc"), &user);
        let at = |c: &super::Compiler, f: &str| c.flags.iter().position(|x| x == f);
        assert!(at(&gcc, "-fvect-cost-model=dynamic").unwrap() < at(&gcc, "-fvect-cost-model=very-cheap").unwrap(), "{:?}", gcc.flags);
        // A compiler with no GCC banner (here: none at all) gets none.
        let other = super::Compiler::host_with("/nonexistent/clang++".into(), std::path::Path::new("inc"), &user);
        assert!(super::GCC_LOOP_FLAGS.iter().all(|f| at(&other, f).is_none()), "{:?}", other.flags);
    }

    use super::*;

    #[test]
    fn cflags_split_like_a_shell() {
        assert_eq!(split_flags(" -DSTACK_SIZE=8192  -I'my dir' -DX=\"a b\"").unwrap(), ["-DSTACK_SIZE=8192", "-Imy dir", "-DX=a b"]);
        assert!(split_flags("-I'open").is_err());
        assert!(split_flags("").unwrap().is_empty());
    }
}
