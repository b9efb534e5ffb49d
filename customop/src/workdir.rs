//! A build directory's state, so that builds never lose or overwrite a
//! file they should not:
//!
//! - the build's own files (generated sources, objects, stamps, linker
//!   scripts, temporaries) live in `DIR/customop-build/`, a name no
//!   vendor source has, so the vendor layout (the build directory is the
//!   folder holding `relu.cpp` and `shape.cpp`) keeps its files;
//! - what the build puts in `DIR` itself (`lib<NAME>.so`, `customop.json`,
//!   device images) is listed in `DIR/customop-build/manifest`: a file of
//!   one of those names that exists and is not listed is the user's, and
//!   the build refuses, naming it;
//! - the directory and its work directory are the user's: one another
//!   user owns or can write is refused before anything in it is read
//!   ([`crate::owned_dir`]); what the build creates is 0700;
//! - one build per directory at a time: an exclusive advisory lock on
//!   `DIR/customop-build/lock` for the whole build; readers (`run`,
//!   `load()`) take it shared while they read the schema and load the
//!   library, so they never see one build's schema with another's library
//!   (the wait is bounded, and a planted FIFO or link is refused:
//!   [`crate::dir_lock`]);
//! - products are made under temporary names in `DIR/customop-build/tmp/`
//!   and renamed into place; a killed build's leftovers there are removed
//!   by the next build (which holds the lock, so their owner is gone).

use crate::atomic;
use crate::error::{Error, ErrorKind, Result};
use crate::{dir_lock, owned_dir};
use std::collections::BTreeSet;
use std::fs::File;
use std::path::{Path, PathBuf};

/// The build's own subdirectory of the build directory.
pub const WORK_DIR: &str = "customop-build";
/// The list of files the build wrote to the build directory.
pub const MANIFEST: &str = "manifest";
const LOCK: &str = "lock";
const MANIFEST_HEADER: &str = "# Files `customop build` wrote to this build directory (it replaces only these).";

/// A build directory held by one build (the lock is released on drop).
#[derive(Debug)]
pub struct BuildDir {
    root: PathBuf,
    work: PathBuf,
    owned: BTreeSet<String>,
    _lock: File,
}

/// Creates `dir` (and missing parents) 0700.
pub(crate) fn create(dir: &Path) -> Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| Error::io("create", dir, e))
}

/// Parses a manifest's text: one file name a line (ended by `\n` only; a
/// carriage return is a legal byte of a name).
pub fn parse_manifest(text: &str) -> BTreeSet<String> {
    text.split('\n').filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect()
}

impl BuildDir {
    /// Takes `dir` for a build: creates it and its work directory, waits
    /// for any other build of it to finish, clears dead builds' temporaries.
    pub fn open(dir: &Path) -> Result<Self> {
        let work = dir.join(WORK_DIR);
        owned_dir::create(dir)?;
        owned_dir::create(&work)?;
        let lock_path = work.join(LOCK);
        let lock = dir_lock::take(&lock_path, dir_lock::Mode::Exclusive, true)?
            .ok_or_else(|| Error::new(ErrorKind::Io, format!("cannot create {}", lock_path.display())))?;
        let tmp = work.join("tmp");
        let _ = std::fs::remove_dir_all(&tmp);
        create(&tmp)?;
        for d in [work.join("obj"), work.join("obj/xtensa")] {
            for e in std::fs::read_dir(d).into_iter().flatten().flatten() {
                if e.file_name().to_string_lossy().starts_with(crate::compiler::TEMP_PREFIX) {
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        let owned = match std::fs::read_to_string(work.join(MANIFEST)) {
            Ok(t) => parse_manifest(&t),
            Err(_) => legacy_products(dir),
        };
        Ok(Self { root: dir.to_path_buf(), work, owned, _lock: lock })
    }

    /// The work directory (generated sources, linker scripts).
    pub fn work(&self) -> &Path {
        &self.work
    }

    /// Where temporaries go (same file system as the products).
    pub fn tmp(&self) -> PathBuf {
        self.work.join("tmp")
    }

    /// Claims `names` (files directly in the build directory) for this
    /// build: refuses if one exists and is not a product of an earlier
    /// build, then records them all before anything is written.
    pub fn claim(&mut self, names: &[String]) -> Result<()> {
        for n in names {
            let p = self.root.join(n);
            if !self.owned.contains(n) && std::fs::symlink_metadata(&p).is_ok() {
                return Err(Error::new(
                    ErrorKind::Io,
                    format!(
                        "{} exists and was not written by `customop build` (it is not listed in {}): the build would replace it; \
                         move it away or build into another directory",
                        p.display(),
                        self.work.join(MANIFEST).display()
                    ),
                ));
            }
        }
        let before = self.owned.len();
        self.owned.extend(names.iter().cloned());
        if self.owned.len() != before || !self.work.join(MANIFEST).is_file() {
            let mut text = format!("{MANIFEST_HEADER}\n");
            for n in &self.owned {
                text.push_str(n);
                text.push('\n');
            }
            atomic::write(&self.work.join(MANIFEST), text.as_bytes())?;
        }
        Ok(())
    }

    /// The path of product `name`, which must have been claimed.
    pub fn product(&self, name: &str) -> PathBuf {
        debug_assert!(self.owned.contains(name), "{name} was not claimed");
        self.root.join(name)
    }
}

/// The products of a build directory made before the manifest existed:
/// what its `customop.json` (written by `customop build`) names.
fn legacy_products(dir: &Path) -> BTreeSet<String> {
    let mut owned = BTreeSet::new();
    let Ok(text) = std::fs::read_to_string(dir.join(crate::schema::SCHEMA_FILE)) else { return owned };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else { return owned };
    let (Some(lib), Some(_)) = (v.get("library_file").and_then(|l| l.as_str()), v.get("ops")) else { return owned };
    owned.insert(crate::schema::SCHEMA_FILE.to_owned());
    let images = v.get("images").and_then(|i| i.as_array()).into_iter().flatten().filter_map(|i| i.as_str());
    for f in std::iter::once(lib).chain(images).filter(|f| !f.contains('/')) {
        owned.insert(f.to_owned());
        owned.insert(format!("{f}.map"));
        owned.insert(crate::xtensa::images::stripped_of(Path::new(f)).display().to_string());
    }
    owned
}

/// A shared hold on a build directory for reading, once the directory
/// and its work directory are found trusted ([`owned_dir::check`]): None
/// where it has no lock file (e.g. a read-only copy: then nothing can be
/// building there).
pub fn read_lock(dir: &Path) -> Result<Option<File>> {
    if !dir.is_dir() {
        // Not a build directory: the schema's read says so.
        return Ok(None);
    }
    owned_dir::check(dir)?;
    let work = dir.join(WORK_DIR);
    if std::fs::symlink_metadata(&work).is_err() {
        return Ok(None);
    }
    owned_dir::check(&work)?;
    dir_lock::take(&work.join(LOCK), dir_lock::Mode::Shared, false)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_work_directory_is_the_one_the_symbols_rule_calls_generated() {
        // Frames in the generated wrappers are not the kernel author's.
        assert_eq!(WORK_DIR, customop_symbols::GENERATED_DIR);
    }

    #[test]
    fn refuses_a_file_it_did_not_write_and_replaces_its_own() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("libk.so"), b"mine").unwrap();
        let mut b = BuildDir::open(d.path()).unwrap();
        let e = b.claim(&["customop.json".into(), "libk.so".into()]).unwrap_err();
        assert!(e.message.contains("libk.so exists and was not written by `customop build`"), "{e}");
        b.claim(&["customop.json".into()]).unwrap();
        std::fs::write(b.product("customop.json"), b"{}").unwrap();
        drop(b);
        let mut b = BuildDir::open(d.path()).unwrap();
        b.claim(&["customop.json".into()]).unwrap();
        assert_eq!(std::fs::read(d.path().join("libk.so")).unwrap(), b"mine");
    }

    #[test]
    fn a_build_directory_from_before_the_manifest_is_adopted() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("customop.json"), r#"{"version": 1, "ops": [], "library_file": "libk.so"}"#).unwrap();
        std::fs::write(d.path().join("libk.so"), b"old build").unwrap();
        std::fs::write(d.path().join("libother.so"), b"mine").unwrap();
        let mut b = BuildDir::open(d.path()).unwrap();
        b.claim(&["customop.json".into(), "libk.so".into()]).unwrap();
        assert!(b.claim(&["libother.so".into()]).is_err());
    }
}
