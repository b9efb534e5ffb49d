//! An exception on the emulated cores made readable: the board's line
//! (`EXCCAUSE=15 (LoadStorePIFAddrError) EPC1=0x6000203a
//! EXCVADDR=0x0000001c`) gets the cause in words and the function of the
//! image the faulting instruction is in: its kernel file:line through the
//! image's debug information (device C++ is built with -g), else the
//! function from the image's symbols and the way to get the line on the
//! simulator.

use std::path::Path;

/// What an exception cause means, for a kernel author.
fn cause_in_words(cause: u32) -> Option<&'static str> {
    Some(match cause {
        0 => "an illegal instruction (a __builtin_trap, or a jump into data)",
        2 | 14 => "an instruction fetch from an address that holds no code (a call through a null or wild function pointer)",
        3 | 15 => "a load or store at an address no memory answers (a null or wild pointer)",
        6 => "an integer division by zero",
        9 => "a load or store at an address not aligned to its size",
        12 | 13 => "a bus error on a fetch, load or store",
        28 => "a load the memory protection refused (a null or wild pointer)",
        29 => "a store the memory protection refused (a null or wild pointer)",
        _ => return None,
    })
}

/// The number after `key` in `line` (`key` ends in `=` or `=0x`).
fn field(line: &str, key: &str) -> Option<u32> {
    let rest = &line[line.find(key)? + key.len()..];
    let digits: String = rest.chars().take_while(char::is_ascii_hexdigit).collect();
    if key.ends_with("0x") {
        u32::from_str_radix(&digits, 16).ok()
    } else {
        digits.parse().ok()
    }
}

/// `name` demangled when it is a C++ name, as the kernel's source spells it.
fn demangled(name: &str) -> String {
    match cpp_demangle::Symbol::new(name) {
        Ok(s) if name.starts_with("_Z") => s.to_string(),
        _ => name.to_owned(),
    }
}

/// The function of `elf` holding address `pc`, and the offset into it.
fn function_at(elf: &neuron_image::elf::Elf, pc: u32) -> Option<(String, u32)> {
    elf.table.iter().filter(|s| s.size != 0 && s.addr <= pc && pc - s.addr < s.size).min_by_key(|s| s.size).map(|s| (demangled(&s.name), pc - s.addr))
}

/// `pc`'s place in the kernel's source through the image's debug
/// information: the innermost frame in a kernel file (a library header's
/// code inlined into the kernel is charged to the kernel's line that
/// called it), with the inline frames below it; None without a line.
pub(crate) fn kernel_line(lines: &customop_symbols::Lines, pc: u32) -> Option<String> {
    let frames = lines.frames(u64::from(pc));
    let i = frames.iter().position(|f| f.line.is_some() && f.is_authors())?;
    let (Some(file), Some(line)) = (&frames[i].file, frames[i].line) else { return None };
    // The frames inlined into it, from the one it called to the innermost.
    let inner: Vec<String> = frames[..i].iter().rev().map(|g| g.function.clone()).collect();
    let via = if inner.is_empty() { String::new() } else { format!(" (in {}, inlined there)", inner.join(" <- ")) };
    Some(format!("{file}:{line} in {}{via}", frames[i].function))
}

/// The lines explaining each exception the board reported in `output`,
/// using the symbols of `image` (empty when there was none).
pub fn explain(image: &Path, output: &str) -> String {
    let elf = std::fs::read(image).ok().and_then(|b| neuron_image::elf::Elf::parse(&b).ok());
    let mut out = String::new();
    for line in output.lines().filter(|l| l.contains(" exception on cpu ")) {
        if let Some(words) = field(line, "EXCCAUSE=").and_then(cause_in_words) {
            let at = field(line, "EXCVADDR=0x").map_or_else(String::new, |a| format!(" (address {a:#x})"));
            out.push_str(&format!("  what happened: {words}{at}\n"));
        }
        let pc = field(line, "EPC1=0x").or_else(|| field(line, "DEPC=0x"));
        let lines = elf.as_ref().and_then(|e| customop_symbols::Lines::open(image, e).ok());
        if let Some(at) = pc.zip(lines.as_ref()).and_then(|(pc, l)| kernel_line(l, pc)) {
            out.push_str(&format!("  where: {at}\n"));
        } else if let Some((f, off)) = pc.zip(elf.as_ref()).and_then(|(pc, e)| function_at(e, pc)) {
            out.push_str(&format!(
                "  where: in {f} (+{off:#x} bytes); for the line, run the op on the simulator under gdb with --no-fork (docs/debugging.md)\n"
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_words_and_names() {
        let l = "q7-qemu-board: user exception on cpu 0: EXCCAUSE=15 (LoadStorePIFAddrError) EPC1=0x600019b8 EXCVADDR=0x0000001c";
        assert_eq!((field(l, "EXCCAUSE="), field(l, "EPC1=0x"), field(l, "EXCVADDR=0x")), (Some(15), Some(0x6000_19b8), Some(0x1c)));
        assert!(cause_in_words(15).unwrap().contains("null or wild pointer"));
        assert_eq!(cause_in_words(1), None);
        assert_eq!(demangled("_Z10store_wildRKN2at6TensorE"), "store_wild(at::Tensor const&)");
        assert_eq!(demangled("memcpy"), "memcpy");
        // No image: the cause alone.
        assert_eq!(
            explain(Path::new("/nonexistent"), l),
            "  what happened: a load or store at an address no memory answers (a null or wild pointer) (address 0x1c)\n"
        );
    }
}
