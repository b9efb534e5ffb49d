//! `customop run ... --on qemu|both --profile DIR`: the emulated run under
//! the profile plugin ([`plugin`]), its counts ([`raw`]) mapped to lines
//! (through the image's DWARF, [`Lines`]) and to a modeled device time
//! ([`model`]), written as
//! `DIR/profile.json`, `DIR/flamegraph.svg` and `DIR/trace.json`
//! ([`output`]), and the report's top lines.

pub mod classes;
pub mod model;
pub mod output;
pub mod plugin;
pub mod raw;

use crate::error::{Error, ErrorKind, Result};
use customop_symbols::Lines;
use neuron_image::elf::Elf;
use std::path::{Path, PathBuf};

/// One profiled run in the making: the plugin's QEMU argument and where
/// its counts go.
pub struct Session {
    /// QEMU's `-plugin` value.
    pub plugin_arg: String,
    /// The counts file (removed when the session ends).
    pub counts: tempfile::TempPath,
    classes: tempfile::TempPath,
    plugin: PathBuf,
}

impl Session {
    /// Lets the confined emulator load the plugin, read its classes and
    /// write its counts.
    pub fn confine(&self, files: &mut customop_emulator::sandbox::Confinement) {
        files.read(&self.plugin).read(&self.classes).write(&self.counts);
    }
}

/// Builds the plugin under `work` and describes `image` to it.
pub fn start(work: &Path, image: &Path) -> Result<Session> {
    let so = plugin::built(work)?;
    let bytes = std::fs::read(image).map_err(|e| Error::io("read", image, e))?;
    let elf =
        Elf::parse(&bytes).map_err(|e| Error::new(crate::error::ErrorKind::BadInput, format!("{}: {e}; rebuild it with `customop build`", image.display())))?;
    let dir = work.join("profile");
    let classes = crate::atomic::temp_in(&dir, "classes-", ".txt")?;
    let lines = lines(image, &elf)?;
    std::fs::write(&classes, classes::file(&elf, &lines)).map_err(|e| Error::io("write", &classes, e))?;
    let counts = crate::atomic::temp_in(&dir, "counts-", ".txt")?;
    // QEMU splits `-plugin` at commas: a path with one cannot be passed.
    for p in [so.as_path(), classes.as_ref(), counts.as_ref()] {
        if p.display().to_string().contains(',') {
            return Err(Error::new(
                crate::error::ErrorKind::BadInput,
                format!("--profile: {} has a comma, which QEMU's -plugin option cannot carry; use a build directory without one", p.display()),
            ));
        }
    }
    let plugin_arg = format!("{},out={},classes={}", so.display(), counts.display(), classes.display());
    Ok(Session { plugin_arg, counts, classes, plugin: so })
}

/// Reads the counts of a finished run of `image` on `cores` cores, writes
/// the profile into `out` and returns the report's text.
pub fn finish(s: Session, image: &Path, cores: u32, out: &Path) -> Result<String> {
    let raw = raw::read(&s.counts)?;
    let bytes = std::fs::read(image).map_err(|e| Error::io("read", image, e))?;
    let elf = Elf::parse(&bytes).map_err(|e| Error::new(crate::error::ErrorKind::BadInput, format!("{}: {e}", image.display())))?;
    let lines = lines(image, &elf)?;
    let p = output::analyse(&raw, &lines, cores);
    output::write_all(&p, out)?;
    Ok(output::report(&p, out))
}

/// The lines of `image` (whose ELF is `elf`).
fn lines(image: &Path, elf: &Elf) -> Result<Lines> {
    Lines::open(image, elf).map_err(|e| {
        Error::new(
            ErrorKind::BadInput,
            format!("{}: cannot read its debug information for --profile: {}; rebuild it with `customop build`", e.image.display(), e.reason),
        )
    })
}

/// The files a profile writes into its directory.
pub fn files(dir: &Path) -> [PathBuf; 3] {
    [dir.join(output::PROFILE_JSON), dir.join(output::FLAMEGRAPH), dir.join(output::TRACE)]
}
