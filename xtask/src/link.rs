//! Linking device images with the generated linker scripts, and their
//! checks (`cargo xtask link`).

use crate::*;

fn script_path(l: &layout::Layout) -> Result<PathBuf> {
    let dir = xtensa_dir().join("ld");
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    let p = dir.join(format!("{}.ld", l.name));
    let text = layout::script(l);
    // Rewrite only on change, so that timestamps stay meaningful.
    if std::fs::read_to_string(&p).ok().as_deref() != Some(text.as_str()) {
        customop_outpath::write(&p, text.as_bytes()).map_err(|e| format!("{}: {e}", p.display()))?;
    }
    Ok(p)
}

pub(crate) fn linker_scripts() -> Result {
    for l in layout::layouts() {
        println!("{:<11} {}  ({})", l.name, script_path(&l)?.display(), l.what);
    }
    Ok(())
}

/// Link `inputs` into `out` for `layout_name`. Returns the parsed image.
pub fn link(layout_name: &str, out: &Path, entry: Option<&str>, undefined: &[String], inputs: &[PathBuf]) -> Result<elf::Elf> {
    let l = layout::layout(layout_name).ok_or_else(|| format!("unknown layout `{layout_name}`"))?;
    let script = script_path(&l)?;
    let entry = entry.or(l.entry).ok_or_else(|| format!("layout `{layout_name}` has no default entry: pass --entry SYM"))?;
    if let Some(dir) = out.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    let mut map = out.as_os_str().to_owned();
    map.push(".map");
    let mut cmd = Command::new(LD);
    cmd.arg("-T")
        .arg(&script)
        .args(["--gc-sections", "--orphan-handling=error", "--no-warn-rwx-segments"])
        .arg("-Map")
        .arg(&map)
        .arg("-o")
        .arg(out)
        .args(["-e", entry, "-u", entry]);
    for u in undefined {
        cmd.args(["-u", u]);
    }
    cmd.arg("--start-group").args(inputs).arg("--end-group");
    run(&mut cmd)?;
    let img = elf::Elf::parse(&std::fs::read(out).map_err(|e| format!("{}: {e}", out.display()))?)?;
    if img.machine != elf::EM_XTENSA {
        return Err(format!("{}: e_machine {} is not Xtensa ({})", out.display(), img.machine, elf::EM_XTENSA));
    }
    Ok(img)
}

pub(crate) fn cmd_link(a: LinkArgs) -> Result {
    let img = link(&a.layout, &a.out, a.entry.as_deref(), &a.undefined, &a.inputs)?;
    print_sections(&img);
    Ok(())
}

fn print_sections(img: &elf::Elf) {
    println!("entry 0x{:08x}", img.entry);
    for s in img.sections.iter().filter(|s| s.alloc && s.size > 0) {
        println!("  {:<10} 0x{:08x} .. 0x{:08x} ({} bytes)", s.name, s.addr, s.addr as u64 + s.size as u64, s.size);
    }
}
