//! The second QEMU the emulated tests run on. Kernel authors run the QEMU
//! their distribution ships: Debian 12's 7.2 (the first, on `PATH`) and
//! its backports' 10.0, which speaks another plugin API. Setup unpacks
//! the backports' `qemu-system-xtensa` into the target directory (never
//! onto `PATH`, never touching the machine's package sources: apt gets a
//! source list, package lists and cache of its own, in a private scratch
//! directory), and `cargo xtask test` runs the emulated check, profile
//! and confinement tests again with it first on `PATH`.

use crate::apt::{unpack_qemu_in, QEMU_PROGRAM};
use crate::{run, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The suite the second QEMU comes from.
pub(crate) const SUITE: &str = "bookworm-backports";
/// Its version, as `--version` prints it.
pub(crate) const VERSION: &str = "10.0";

/// The directory holding the second QEMU (put first on `PATH`).
pub(crate) fn bin_dir() -> PathBuf {
    crate::xtask_target_base().join("qemu-backports/bin")
}

/// Unpacks it when it is not there yet.
pub(crate) fn install() -> Result {
    let target = bin_dir().join(QEMU_PROGRAM);
    if target.is_file() {
        return Ok(());
    }
    std::fs::create_dir_all(bin_dir()).map_err(|e| format!("{}: {e}", bin_dir().display()))?;
    let work = tempfile::Builder::new().prefix("xtask-qemu-backports-").tempdir().map_err(|e| format!("a scratch directory: {e}"))?;
    let opts = private_apt(work.path(), &debian_mirror()?)?;
    run(Command::new("apt-get").args(&opts).args(["update", "-qq"]))?;
    let version = unpack_qemu_in(work.path(), &target, &opts)?;
    println!("xtask: {QEMU_PROGRAM} {version} ({SUITE}) unpacked as {} for the tests of the emulated runs on QEMU {VERSION}", target.display());
    Ok(())
}

/// The apt options that make apt read only a source list of `SUITE` at
/// `mirror` and keep its lists and cache under `work`.
fn private_apt(work: &Path, mirror: &str) -> Result<Vec<String>> {
    let parts = work.join("sources.list.d");
    for d in [parts.clone(), work.join("lists/partial"), work.join("cache/archives/partial")] {
        std::fs::create_dir_all(&d).map_err(|e| format!("{}: {e}", d.display()))?;
    }
    let list = parts.join("backports.sources");
    std::fs::write(&list, sources_stanza(mirror)).map_err(|e| format!("{}: {e}", list.display()))?;
    let o = |k: &str, v: &Path| vec!["-o".to_owned(), format!("{k}={}", v.display())];
    Ok([
        o("Dir::Etc::SourceList", Path::new("/dev/null")),
        o("Dir::Etc::SourceParts", &parts),
        o("Dir::State::Lists", &work.join("lists")),
        o("Dir::Cache", &work.join("cache")),
    ]
    .concat())
}

/// A deb822 source of [`SUITE`]'s main component at `mirror`.
fn sources_stanza(mirror: &str) -> String {
    format!("Types: deb\nURIs: {mirror}\nSuites: {SUITE}\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n")
}

/// The Debian mirror this machine's apt already uses for bookworm.
fn debian_mirror() -> Result<String> {
    let mut texts = Vec::new();
    if let Ok(rd) = std::fs::read_dir("/etc/apt/sources.list.d") {
        for p in rd.filter_map(|e| e.ok().map(|e| e.path())) {
            if p.extension().is_some_and(|x| x == "sources" || x == "list") {
                texts.push(std::fs::read_to_string(&p).unwrap_or_default());
            }
        }
    }
    texts.push(std::fs::read_to_string("/etc/apt/sources.list").unwrap_or_default());
    texts
        .iter()
        .find_map(|t| mirror_in(t))
        .ok_or_else(|| "no apt source of Debian's bookworm on this machine: the second QEMU comes from its backports".to_owned())
}

/// The URI of the first source of suite `bookworm` in `text` (deb822
/// stanzas or one-line `deb URI SUITE ...` entries).
fn mirror_in(text: &str) -> Option<String> {
    for stanza in text.split("\n\n") {
        let field = |name: &str| stanza.lines().find_map(|l| l.strip_prefix(name).map(str::trim));
        if let (Some(uris), Some(suites)) = (field("URIs:"), field("Suites:")) {
            if suites.split_whitespace().any(|s| s == "bookworm") {
                return uris.split_whitespace().next().map(str::to_owned);
            }
        }
    }
    text.lines().find_map(|l| {
        let w: Vec<&str> = l.split_whitespace().filter(|w| !w.starts_with('[')).collect();
        (w.first() == Some(&"deb") && w.get(2) == Some(&"bookworm")).then(|| w[1].to_owned())
    })
}

/// `cargo xtask test`'s step: the emulated tests whose behaviour depends
/// on QEMU's plugin API and its version, on the second QEMU.
pub(crate) fn test() -> Result {
    let bin = bin_dir();
    if !bin.join(QEMU_PROGRAM).is_file() {
        return Err(format!("{} is missing: run `cargo xtask setup`", bin.join(QEMU_PROGRAM).display()));
    }
    let out = Command::new(bin.join(QEMU_PROGRAM)).arg("--version").output().map_err(|e| format!("{QEMU_PROGRAM}: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout);
    if !said.contains(&format!("version {VERSION}")) {
        return Err(format!("{} is not QEMU {VERSION}: {}", bin.display(), said.lines().next().unwrap_or("")));
    }
    let path =
        std::env::join_paths(std::iter::once(bin).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default()))).map_err(|e| e.to_string())?;
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(crate::root()).env("PATH", path).args([
        "test",
        "-p",
        "customop",
        "--test",
        "device_check",
        "--test",
        "profile",
        "--test",
        "emulator_confinement",
    ]);
    crate::step_log::run_logged(&mut cmd, &crate::xtask_target_base().join("logs/qemu-backports-tests.log"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mirror_is_read_from_either_source_format() {
        let deb822 = "Types: deb\nURIs: http://mirror.example/debian\nSuites: bookworm bookworm-updates\nComponents: main\n\n\
                      Types: deb\nURIs: http://mirror.example/debian-security\nSuites: bookworm-security\n";
        assert_eq!(mirror_in(deb822).as_deref(), Some("http://mirror.example/debian"));
        let one_line = "# comment\ndeb [arch=amd64] http://m.example/debian bookworm main\n";
        assert_eq!(mirror_in(one_line).as_deref(), Some("http://m.example/debian"));
        assert_eq!(mirror_in("deb http://x/debian-security bookworm-security main\n"), None);
    }

    #[test]
    fn apt_gets_a_list_and_state_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let opts = private_apt(dir.path(), "http://mirror.example/debian").unwrap();
        let joined = opts.join(" ");
        assert!(joined.contains("Dir::Etc::SourceList=/dev/null"), "{joined}");
        for k in ["Dir::Etc::SourceParts=", "Dir::State::Lists=", "Dir::Cache="] {
            assert!(opts.iter().any(|o| o.starts_with(k) && o.contains(&*dir.path().to_string_lossy())), "{k}: {joined}");
        }
        let list = std::fs::read_to_string(dir.path().join("sources.list.d/backports.sources")).unwrap();
        assert!(list.contains("Suites: bookworm-backports\n") && list.contains("URIs: http://mirror.example/debian\n"), "{list}");
    }
}
