//! `customop env`: what this machine has for building and running
//! kernels, where each part was found, and for what is missing the one
//! command that installs it. Nothing is built or changed.

use crate::xtensa::toolchain::{self, Toolchain};
use std::path::Path;
use std::process::Command;

/// One part: what it is, what was found (or why not), and whether the
/// simulator needs it (`required`) or only the emulated device does.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Part {
    /// What the part is, in a few words.
    pub what: &'static str,
    /// Where it was found and its version, or what is wrong and what to do.
    pub found: Result<String, String>,
    /// Whether the host simulator path needs it.
    pub required: bool,
}

/// The first line a program prints for `args` (`--version`), or why it
/// cannot be run.
fn first_line(program: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new(program).args(args).output().map_err(|e| format!("cannot run {}: {e}", program.display()))?;
    let text = if out.stdout.is_empty() { out.stderr } else { out.stdout };
    Ok(String::from_utf8_lossy(&text).lines().next().unwrap_or("").trim().to_owned())
}

/// Every part, the simulator's first.
pub fn parts() -> Vec<Part> {
    let mut v = Vec::new();
    let include = crate::build::include_dir(None);
    v.push(Part {
        what: "the kernel headers (<torch/torch.h>, ...)",
        found: if include.join("torch/torch.h").is_file() {
            Ok(include.display().to_string())
        } else {
            Err(format!("{} has no torch/torch.h: set NEURON_INCLUDE to the headers' directory", include.display()))
        },
        required: true,
    });
    v.push(Part {
        what: "the host runtime kernels link (libneuroncustomop.a)",
        found: crate::staticlib::find().map(|p| p.display().to_string()).map_err(|e| format!("{e} (or set NEURON_STATICLIB)")),
        required: true,
    });
    let cxx = std::env::var_os("CXX").unwrap_or_else(|| "g++".into());
    v.push(Part {
        what: "the host C++ compiler ($CXX)",
        found: first_line(Path::new(&cxx), &["--version"]).map_err(|e| format!("{e}: apt-get install g++, or set CXX")),
        required: true,
    });
    let qemu = customop_emulator::command::QEMU;
    v.push(Part {
        what: "the emulated cores (QEMU)",
        found: customop_emulator::command::version().map_err(|e| format!("{e}; the tested versions are {}", customop_emulator::command::TESTED)).and_then(
            |ver| customop_emulator::plugin::api_for(ver).map(|api| format!("{qemu} {}.{}.{} (plugin API {api})", ver.0, ver.1, ver.2)).map_err(|e| e.0),
        ),
        required: false,
    });
    v.push(Part {
        what: "their confinement (Linux Landlock)",
        found: match customop_emulator::sandbox::kernel_abi() {
            v if v >= 1 => Ok(format!("ABI {v}: an emulated run may touch only its own files")),
            _ => Err("this kernel has no Landlock: emulated runs are not confined (Linux 5.13 or later with Landlock enabled)".to_owned()),
        },
        required: false,
    });
    let cc = customop_emulator::plugin::compiler();
    v.push(Part {
        what: "the C compiler for the emulator's plugin ($CC)",
        found: first_line(Path::new(&cc), &["--version"]).map_err(|e| format!("{e}: apt-get install gcc, or set CC")),
        required: false,
    });
    v.push(Part {
        what: "the Xtensa C++ compiler (ziglang, the nightly's llc)",
        found: Toolchain::find().map(|t| format!("{} -m ziglang ({}), {}", t.python.display(), toolchain::ZIG_VERSION, t.llc.display())).map_err(|e| e.message),
        required: false,
    });
    v.push(Part {
        what: "the Xtensa linker",
        found: first_line(Path::new(toolchain::LD), &["--version"]).map_err(|e| format!("{e}: apt-get install binutils-xtensa-lx106")),
        required: false,
    });
    v.push(Part {
        what: "the device runtimes",
        found: Ok(match std::env::var_os(crate::xtensa::devlib::ENV_DIR) {
            Some(d) => format!("{}={}", crate::xtensa::devlib::ENV_DIR, Path::new(&d).display()),
            None => format!("built with cargo from {} on first use", crate::xtensa::devlib::repo_root().display()),
        }),
        required: false,
    });
    v
}

/// The report `customop env` prints, and whether the simulator path has
/// everything it needs.
pub fn report(parts: &[Part]) -> (String, bool) {
    let mut s = format!("customop {}\n", env!("CARGO_PKG_VERSION"));
    let mut ok = true;
    for (title, required) in [("for the host simulator:", true), ("for the emulated cores (--target qemu, --on qemu|both, --profile):", false)] {
        s.push_str(title);
        s.push('\n');
        for p in parts.iter().filter(|p| p.required == required) {
            match &p.found {
                Ok(f) => s.push_str(&format!("  ok       {}: {f}\n", p.what)),
                Err(e) => {
                    ok &= !required;
                    s.push_str(&format!("  missing  {}: {e}\n", p.what));
                }
            }
        }
    }
    (s, ok)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_report_groups_the_parts_and_fails_only_for_the_simulators() {
        let part = |what, found, required| Part { what, found, required };
        let parts = [part("a", Ok("/x".to_owned()), true), part("b", Err("gone: apt-get install b".to_owned()), false)];
        let (text, ok) = report(&parts);
        assert!(ok, "an emulated part missing leaves the simulator usable");
        assert!(text.contains("  ok       a: /x\n") && text.contains("  missing  b: gone: apt-get install b\n"), "{text}");
        assert!(text.find("a: /x").unwrap() < text.find("emulated cores").unwrap());
        let (_, ok) = report(&[part("c", Err("no".to_owned()), true)]);
        assert!(!ok);
    }
}
