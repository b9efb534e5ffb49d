//! Just enough ELF32 reading to inspect linked images.

use std::collections::BTreeMap;

pub const EM_XTENSA: u16 = 94;

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

#[derive(Debug)]
pub struct Elf {
    pub machine: u16,
    pub entry: u32,
    pub sections: Vec<Section>,
    pub symbols: BTreeMap<String, u32>,
}

fn u16le(b: &[u8], o: usize) -> Result<u16, String> {
    b.get(o..o + 2).map(|s| u16::from_le_bytes([s[0], s[1]])).ok_or_else(|| "truncated ELF".into())
}
fn u32le(b: &[u8], o: usize) -> Result<u32, String> {
    b.get(o..o + 4).map(|s| u32::from_le_bytes([s[0], s[1], s[2], s[3]])).ok_or_else(|| "truncated ELF".into())
}
fn cstr(b: &[u8], o: usize) -> String {
    let s = b.get(o..).unwrap_or(&[]);
    let n = s.iter().position(|&c| c == 0).unwrap_or(s.len());
    String::from_utf8_lossy(&s[..n]).into_owned()
}

impl Elf {
    /// Parse a little-endian ELF32 file (errors for anything else).
    pub fn parse(b: &[u8]) -> Result<Elf, String> {
        if b.len() < 52 || &b[..4] != b"\x7fELF" {
            return Err("not an ELF file".into());
        }
        if b[4] != 1 || b[5] != 1 {
            return Err(format!("not ELF32 little-endian (class {}, data {})", b[4], b[5]));
        }
        let machine = u16le(b, 18)?;
        let entry = u32le(b, 24)?;
        let shoff = u32le(b, 32)? as usize;
        let shentsize = u16le(b, 46)? as usize;
        let shnum = u16le(b, 48)? as usize;
        let shstrndx = u16le(b, 50)? as usize;
        let sh = |i: usize, f: usize| u32le(b, shoff + i * shentsize + f);
        let shstr_off = sh(shstrndx, 16)? as usize;
        let mut sections = Vec::new();
        let mut symbols = BTreeMap::new();
        for i in 0..shnum {
            let name = cstr(b, shstr_off + sh(i, 0)? as usize);
            let ty = sh(i, 4)?;
            let flags = sh(i, 8)?;
            let (addr, off, size, link) = (sh(i, 12)?, sh(i, 16)? as usize, sh(i, 20)?, sh(i, 24)? as usize);
            if ty == 2 {
                // SHT_SYMTAB
                let stroff = sh(link, 16)? as usize;
                for k in 0..size as usize / 16 {
                    let e = off + k * 16;
                    let n = cstr(b, stroff + u32le(b, e)? as usize);
                    if !n.is_empty() {
                        symbols.entry(n).or_insert(u32le(b, e + 4)?);
                    }
                }
            }
            sections.push(Section { name, addr, size, alloc: flags & 2 != 0, offset: off as u32, nobits: ty == 8 });
        }
        Ok(Elf { machine, entry, sections, symbols })
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
