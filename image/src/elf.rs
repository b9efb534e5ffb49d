//! The sections and symbols of a linked ELF32 image and the objects of a
//! staticlib, read with the `object` crate.

use std::collections::BTreeMap;

use object::elf::{SHF_ALLOC, SHT_NOBITS};
use object::read::archive::ArchiveFile;
use object::read::elf::ElfFile32;
use object::{LittleEndian as LE, Object, ObjectSection, ObjectSymbol, SymbolKind};

pub const EM_XTENSA: u16 = object::elf::EM_XTENSA;

#[derive(Debug, Clone)]
pub struct Section {
    pub name: String,
    pub addr: u32,
    pub size: u32,
    /// SHF_ALLOC
    pub alloc: bool,
    /// File offset of the contents (meaningless for NOBITS).
    pub offset: u32,
    /// SHT_NOBITS: no contents in the file.
    pub nobits: bool,
}

/// One symbol as `nm -S -C` lists it: defined, not a section or file name.
#[derive(Debug, Clone)]
pub struct Symbol {
    /// A Rust name demangled to its path without the hash, as `nm -C`
    /// shows it; C++ names stay mangled (the tools look up only C and
    /// Rust names; C++ ones are only printed).
    pub name: String,
    pub addr: u32,
    pub size: u32,
    /// Global and in a code section (`nm`'s `T`).
    pub global_text: bool,
}

#[derive(Debug)]
pub struct Elf {
    pub machine: u16,
    pub entry: u32,
    pub sections: Vec<Section>,
    /// Every named symbol's value, by its raw name (the first one wins).
    pub symbols: BTreeMap<String, u32>,
    /// The defined symbols, in table order.
    pub table: Vec<Symbol>,
}

impl Elf {
    /// Parse a little-endian ELF32 file (errors for anything else).
    pub fn parse(b: &[u8]) -> Result<Elf, String> {
        let f = ElfFile32::<LE>::parse(b).map_err(|e| format!("not an ELF32 little-endian file: {e}"))?;
        let machine = f.elf_header().e_machine.get(LE);
        let mut sections = Vec::new();
        for s in f.sections() {
            let h = s.elf_section_header();
            let name = s.name().map_err(|e| format!("bad section name: {e}"))?.to_string();
            // ELF32: addresses, sizes and offsets are 32-bit fields.
            let (addr, size, offset) = (h.sh_addr.get(LE), h.sh_size.get(LE), h.sh_offset.get(LE));
            sections.push(Section { name, addr, size, alloc: h.sh_flags.get(LE) & SHF_ALLOC != 0, offset, nobits: h.sh_type.get(LE) == SHT_NOBITS });
        }
        let mut symbols = BTreeMap::new();
        let mut table = Vec::new();
        for s in f.symbols() {
            let Ok(name) = s.name() else { continue };
            if name.is_empty() {
                continue;
            }
            let addr = s.address() as u32;
            symbols.entry(name.to_string()).or_insert(addr);
            if s.is_undefined() || matches!(s.kind(), SymbolKind::Section | SymbolKind::File) {
                continue;
            }
            let global_text = s.is_global() && s.kind() == SymbolKind::Text;
            table.push(Symbol { name: format!("{:#}", rustc_demangle::demangle(name)), addr, size: s.size() as u32, global_text });
        }
        Ok(Elf { machine, entry: f.entry() as u32, sections, symbols, table })
    }

    /// Parse every object of the `ar` archive `b` (a staticlib): its
    /// members' names and images; members that are not ELF (the archive's
    /// own tables have no member) are errors.
    pub fn parse_archive(b: &[u8]) -> Result<Vec<(String, Elf)>, String> {
        let a = ArchiveFile::parse(b).map_err(|e| format!("not an ar archive: {e}"))?;
        let mut out = Vec::new();
        for m in a.members() {
            let m = m.map_err(|e| format!("bad archive member: {e}"))?;
            let name = String::from_utf8_lossy(m.name()).into_owned();
            let data = m.data(b).map_err(|e| format!("{name}: {e}"))?;
            out.push((name.clone(), Elf::parse(data).map_err(|e| format!("{name}: {e}"))?));
        }
        Ok(out)
    }

    /// The bytes of section `name` in `file` (the bytes this was parsed
    /// from); empty for NOBITS.
    pub fn section_bytes<'f>(&self, file: &'f [u8], name: &str) -> Option<&'f [u8]> {
        let s = self.section(name)?;
        if s.nobits {
            return Some(&[]);
        }
        file.get(s.offset as usize..s.offset as usize + s.size as usize)
    }

    pub fn section(&self, name: &str) -> Option<&Section> {
        self.sections.iter().find(|s| s.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use object::write::{Object as Writer, StandardSection, Symbol as WSymbol, SymbolSection};
    use object::{Architecture, BinaryFormat, Endianness, SymbolFlags, SymbolScope};

    /// An ELF32 Xtensa relocatable object: `.text` with a global function
    /// (a mangled Rust name), a local one, `.bss`, and an undefined symbol.
    fn object() -> Vec<u8> {
        let mut o = Writer::new(BinaryFormat::Elf, Architecture::Xtensa, Endianness::Little);
        let text = o.section_id(StandardSection::Text);
        o.append_section_data(text, &[0x36, 0x41, 0x00, 0x1d, 0xf0, 0, 0, 0], 4);
        let bss = o.section_id(StandardSection::UninitializedData);
        o.append_section_bss(bss, 64, 4);
        let sym = |name: &str, value, size, scope, section| WSymbol {
            name: name.as_bytes().to_vec(),
            value,
            size,
            kind: object::SymbolKind::Text,
            scope,
            weak: false,
            section,
            flags: SymbolFlags::None,
        };
        o.add_symbol(sym("_ZN10neuron_hal6xtensa4step17h0123456789abcdefE", 0, 4, SymbolScope::Linkage, SymbolSection::Section(text)));
        o.add_symbol(sym("local_fn", 4, 4, SymbolScope::Compilation, SymbolSection::Section(text)));
        o.add_symbol(sym("extern_fn", 0, 0, SymbolScope::Unknown, SymbolSection::Undefined));
        o.write().unwrap()
    }

    /// A GNU `ar` archive of `members` (name, bytes).
    fn archive(members: &[(&str, &[u8])]) -> Vec<u8> {
        let mut a = b"!<arch>\n".to_vec();
        for (name, data) in members {
            a.extend(format!("{:<16}{:<12}{:<6}{:<6}{:<8}{:<10}`\n", format!("{name}/"), 0, 0, 0, 644, data.len()).as_bytes());
            a.extend(*data);
            if data.len() % 2 == 1 {
                a.push(b'\n');
            }
        }
        a
    }

    #[test]
    fn reads_sections_and_symbols() {
        let e = Elf::parse(&object()).unwrap();
        assert_eq!(e.machine, EM_XTENSA);
        let text = e.section(".text").unwrap();
        assert!(text.alloc && !text.nobits && text.size == 8);
        assert_eq!(e.section_bytes(&object(), ".text").unwrap()[..2], [0x36, 0x41]);
        let bss = e.section(".bss").unwrap();
        assert!(bss.alloc && bss.nobits && bss.size == 64);
        assert_eq!(e.section_bytes(&object(), ".bss"), Some(&[][..]));
        // Locals first (ELF order), demangled without the hash; the undefined
        // symbol is not listed.
        let names: Vec<(&str, bool)> = e.table.iter().map(|s| (s.name.as_str(), s.global_text)).collect();
        assert_eq!(names, [("local_fn", false), ("neuron_hal::xtensa::step", true)]);
        assert_eq!(e.symbols.get("local_fn"), Some(&4));
    }

    #[test]
    fn rejects_what_is_not_elf32_little_endian() {
        assert!(Elf::parse(b"not an elf at all").unwrap_err().contains("not an ELF32"));
        let mut o64 = Writer::new(BinaryFormat::Elf, Architecture::X86_64, Endianness::Little);
        o64.add_file_symbol(b"x.c".to_vec());
        assert!(Elf::parse(&o64.write().unwrap()).is_err());
        assert!(Elf::parse(&object()[..40]).is_err());
    }

    #[test]
    fn reads_every_object_of_an_archive() {
        let obj = object();
        let members = Elf::parse_archive(&archive(&[("a.o", &obj), ("b.o", &obj)])).unwrap();
        let names: Vec<&str> = members.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["a.o", "b.o"]);
        assert!(members.iter().all(|(_, e)| e.machine == EM_XTENSA));
        let err = Elf::parse_archive(&archive(&[("a.o", &obj), ("junk.txt", b"hello")])).unwrap_err();
        assert!(err.starts_with("junk.txt: not an ELF32"), "{err}");
        assert!(Elf::parse_archive(&obj).is_err());
    }
}
