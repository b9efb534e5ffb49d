//! Linking a kernel's Xtensa objects into device images with GNU ld and
//! the linker scripts of `cargo xtask`'s layouts ([`neuron_image::layout`]):
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

use super::toolchain::{LD, STRIP};
use crate::compiler::run_tool;
use crate::error::{Error, ErrorKind, Result};
use neuron_image::elf::{self, Elf};
use neuron_image::layout;
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
    crate::atomic::write_if_changed(&p, &text)?;
    Ok(p)
}

/// The map file of image `out`.
pub fn map_of(out: &Path) -> PathBuf {
    let mut map = out.as_os_str().to_owned();
    map.push(".map");
    map.into()
}

/// The stripped copy of image `out`.
pub fn stripped_of(out: &Path) -> PathBuf {
    out.with_extension("stripped.elf")
}

/// Links `inputs` for layout `layout_name` into `out` (and `out.map`),
/// under temporary names in `work/tmp` renamed into place once whole.
pub fn link(work: &Path, layout_name: &str, out: &Path, entry: Option<&str>, inputs: &[PathBuf]) -> Result<Linked> {
    let l = layout::layout(layout_name).ok_or_else(|| Error::new(ErrorKind::Usage, format!("unknown layout `{layout_name}`")))?;
    let entry = entry.or(l.entry).expect("every caller names an entry or uses a layout with one");
    let s = script(&work.join("ld"), &l)?;
    let tmp = work.join("tmp");
    let (tmp_out, tmp_map) = (crate::atomic::temp_in(&tmp, "image-", ".elf")?, crate::atomic::temp_in(&tmp, "image-", ".map")?);
    let mut cmd = Command::new(LD);
    cmd.arg("-T").arg(&s).args(["--gc-sections", "--orphan-handling=error", "--no-warn-rwx-segments"]);
    cmd.arg("-Map").arg(&tmp_map).arg("-o").arg(&tmp_out).args(["-e", entry, "-u", entry]);
    cmd.arg("--start-group").args(inputs).arg("--end-group");
    run_tool(&mut cmd, &format!("linking {}", out.display()), "apt-get install binutils-xtensa-lx106")?;
    let bytes = std::fs::read(&tmp_out).map_err(|e| Error::io("read", out, e))?;
    let elf = Elf::parse(&bytes).map_err(|e| Error::new(ErrorKind::Compile, format!("{}: {e}", out.display())))?;
    if elf.machine != elf::EM_XTENSA {
        return Err(Error::new(ErrorKind::Compile, format!("{}: e_machine {} is not Xtensa", out.display(), elf.machine)));
    }
    crate::atomic::persist(tmp_out, out)?;
    crate::atomic::persist(tmp_map, &map_of(out))?;
    Ok(Linked { layout: l, path: out.to_path_buf(), stripped: None, elf, bytes })
}

fn strip(work: &Path, img: &mut Linked) -> Result<()> {
    let p = stripped_of(&img.path);
    let tmp = crate::atomic::temp_in(&work.join("tmp"), "image-", ".elf")?;
    let mut cmd = Command::new(STRIP);
    cmd.arg("-o").arg(&tmp).arg(&img.path);
    run_tool(&mut cmd, &format!("stripping {}", img.path.display()), "apt-get install binutils-xtensa-lx106")?;
    crate::atomic::persist(tmp, &p)?;
    img.stripped = Some(p);
    Ok(())
}

/// The files the images of `name` are (in the build directory): each
/// image, its map and (FLL) its stripped copy.
pub fn products(target_q7: bool, name: &str, multicore: bool) -> Vec<String> {
    let mut out = Vec::new();
    for f in image_files(target_q7, name, multicore) {
        out.push(format!("{f}.map"));
        if target_q7 {
            out.push(stripped_of(Path::new(&f)).display().to_string());
        }
        out.push(f);
    }
    out
}

fn image_files(target_q7: bool, name: &str, multicore: bool) -> Vec<String> {
    match (target_q7, multicore) {
        (false, _) => vec![format!("{name}_qemu.elf")],
        (true, true) => (0..layout::Q7_CPUS).map(|c| format!("{name}_cpu{c}.elf")).collect(),
        (true, false) => vec![format!("{name}.elf")],
    }
}

/// The FLL images of `name` in `dir`: eight per-core ones (`multicore`)
/// or the single one, each with a stripped copy (scripts and temporaries
/// in `work`).
pub fn q7(dir: &Path, work: &Path, name: &str, multicore: bool, objects: &[PathBuf], runtime: &Path) -> Result<Vec<Linked>> {
    let mut inputs = objects.to_vec();
    inputs.push(runtime.to_path_buf());
    let layouts: Vec<String> = if multicore { (0..layout::Q7_CPUS).map(|c| format!("fll-cpu{c}")).collect() } else { vec!["fll-single".into()] };
    let mut out = Vec::new();
    for (l, file) in layouts.iter().zip(image_files(true, name, multicore)) {
        let mut img = link(work, l, &dir.join(file), Some(FLL_ENTRY), &inputs)?;
        strip(work, &mut img)?;
        out.push(img);
    }
    Ok(out)
}

/// The emulated cluster's image of `name` in `dir`.
pub fn qemu(dir: &Path, work: &Path, name: &str, objects: &[PathBuf], runtime: &Path) -> Result<Linked> {
    let mut inputs = objects.to_vec();
    inputs.push(runtime.to_path_buf());
    link(work, "qemu", &dir.join(&image_files(false, name, false)[0]), None, &inputs)
}
