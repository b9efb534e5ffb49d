//! Linking a kernel's Xtensa objects into device images with GNU ld and
//! the linker scripts of `cargo xtask`'s layouts ([`super::layout`]):
//!
//! - `--target q7`: per-core FLL images `<name>_cpu0..7.elf` (code window
//!   0x8400_0000 + i·0x20_0000, 2 MiB each) or, single-core, `<name>.elf`
//!   (32 MiB from 0x8400_0000), entry `register_funcs` (the loader's first
//!   call; through the op table it reaches every launcher), plus
//!   `*.stripped.elf` copies;
//! - `--target qemu`: `<name>_qemu.elf` for the emulated cluster (reset
//!   stub, vectors, the runner), which `customop run --on qemu` boots.
//!
//! The ld flags are xtask's: `--gc-sections` (only what the entry reaches),
//! `--orphan-handling=error` (a section the script does not place is an
//! error, not a silent surprise), the inputs in one group.

use super::elf::Elf;
use super::layout;
use super::toolchain::{LD, STRIP};
use crate::compiler::run_tool;
use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The FLL images' entry.
pub const FLL_ENTRY: &str = "register_funcs";

/// A linked image.
#[derive(Debug)]
pub struct Linked {
    /// The layout it was linked for.
    pub layout: layout::Layout,
    /// The image file.
    pub path: PathBuf,
    /// Its stripped copy (FLL images only).
    pub stripped: Option<PathBuf>,
    /// The parsed image.
    pub elf: Elf,
    /// Its bytes.
    pub bytes: Vec<u8>,
}

/// Writes `l`'s linker script under `dir` (only when it changed).
fn script(dir: &Path, l: &layout::Layout) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create", dir, e))?;
    let p = dir.join(format!("{}.ld", l.name));
    let text = layout::script(l);
    if std::fs::read_to_string(&p).ok().as_deref() != Some(text.as_str()) {
        std::fs::write(&p, text).map_err(|e| Error::io("write", &p, e))?;
    }
    Ok(p)
}

/// Links `inputs` for layout `layout_name` into `out` (and `out.map`).
pub fn link(ld_dir: &Path, layout_name: &str, out: &Path, entry: Option<&str>, inputs: &[PathBuf]) -> Result<Linked> {
    let l = layout::layout(layout_name).ok_or_else(|| Error::new(ErrorKind::Usage, format!("unknown layout `{layout_name}`")))?;
    let entry = entry.or(l.entry).expect("every caller names an entry or uses a layout with one");
    let s = script(ld_dir, &l)?;
    let mut map = out.as_os_str().to_owned();
    map.push(".map");
    let mut cmd = Command::new(LD);
    cmd.arg("-T").arg(&s).args(["--gc-sections", "--orphan-handling=error", "--no-warn-rwx-segments"]);
    cmd.arg("-Map").arg(&map).arg("-o").arg(out).args(["-e", entry, "-u", entry]);
    cmd.arg("--start-group").args(inputs).arg("--end-group");
    run_tool(&mut cmd, &format!("linking {}", out.display()), "apt-get install binutils-xtensa-lx106")?;
    let bytes = std::fs::read(out).map_err(|e| Error::io("read", out, e))?;
    let elf = Elf::parse(&bytes).map_err(|e| Error::new(ErrorKind::Compile, format!("{}: {e}", out.display())))?;
    if elf.machine != super::elf::EM_XTENSA {
        return Err(Error::new(ErrorKind::Compile, format!("{}: e_machine {} is not Xtensa", out.display(), elf.machine)));
    }
    Ok(Linked { layout: l, path: out.to_path_buf(), stripped: None, elf, bytes })
}

fn strip(img: &mut Linked) -> Result<()> {
    let p = img.path.with_extension("stripped.elf");
    let mut cmd = Command::new(STRIP);
    cmd.arg("-o").arg(&p).arg(&img.path);
    run_tool(&mut cmd, &format!("stripping {}", img.path.display()), "apt-get install binutils-xtensa-lx106")?;
    img.stripped = Some(p);
    Ok(())
}

/// The FLL images of `name` in `dir`: eight per-core ones (`multicore`)
/// or the single one, each with a stripped copy.
pub fn q7(dir: &Path, name: &str, multicore: bool, objects: &[PathBuf], runtime: &Path) -> Result<Vec<Linked>> {
    let mut inputs = objects.to_vec();
    inputs.push(runtime.to_path_buf());
    let plan: Vec<(String, String)> = if multicore {
        (0..layout::Q7_CPUS).map(|c| (format!("fll-cpu{c}"), format!("{name}_cpu{c}.elf"))).collect()
    } else {
        vec![("fll-single".into(), format!("{name}.elf"))]
    };
    let mut out = Vec::new();
    for (l, file) in plan {
        let mut img = link(&dir.join("ld"), &l, &dir.join(file), Some(FLL_ENTRY), &inputs)?;
        strip(&mut img)?;
        out.push(img);
    }
    Ok(out)
}

/// The emulated cluster's image of `name` in `dir`.
pub fn qemu(dir: &Path, name: &str, objects: &[PathBuf], runtime: &Path) -> Result<Linked> {
    let mut inputs = objects.to_vec();
    inputs.push(runtime.to_path_buf());
    link(&dir.join("ld"), "qemu", &dir.join(format!("{name}_qemu.elf")), None, &inputs)
}
