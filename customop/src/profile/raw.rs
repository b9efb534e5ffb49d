//! The plugin's counts file, read back: per core, instructions per
//! address, loads and stores per address by memory class, DMA by
//! destination and by the kernel instruction that led to it.

use crate::error::{Error, ErrorKind, Result};
use std::collections::BTreeMap;
use std::path::Path;

/// Loads and stores of one instruction on one core, by class.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Mem {
    /// Through the HBM windows (hbm_scratch, the dynamic windows).
    pub hbm_loads: u64,
    /// See [`Mem::hbm_loads`].
    pub hbm_stores: u64,
    /// Core-local data RAM (TCM).
    pub tcm: u64,
    /// The stack.
    pub stack: u64,
    /// SBUF.
    pub sbuf: u64,
    /// The rest (the image's data, the register block).
    pub other: u64,
}

/// One core's DMA, by direction.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Dma {
    /// Descriptors that wrote into data RAM (HBM to TCM).
    pub to_tcm_descriptors: u64,
    /// Their bytes.
    pub to_tcm_bytes: u64,
    /// Descriptors that wrote elsewhere (TCM to HBM).
    pub to_hbm_descriptors: u64,
    /// Their bytes.
    pub to_hbm_bytes: u64,
}

impl Dma {
    /// Bytes in both directions.
    pub fn bytes(&self) -> u64 {
        self.to_tcm_bytes + self.to_hbm_bytes
    }
    /// Descriptors in both directions.
    pub fn descriptors(&self) -> u64 {
        self.to_tcm_descriptors + self.to_hbm_descriptors
    }
}

/// The counts of one run.
#[derive(Clone, Debug, Default)]
pub struct Raw {
    /// (core, address) → instructions executed.
    pub insns: BTreeMap<(u32, u64), u64>,
    /// (core, address) → its memory accesses.
    pub mem: BTreeMap<(u32, u64), Mem>,
    /// Per core.
    pub dma: BTreeMap<u32, Dma>,
    /// (core, the kernel's last instruction before the descriptors, 0
    /// before any) → (descriptors, bytes).
    pub dma_sites: BTreeMap<(u32, u64), (u64, u64)>,
    /// (core, the kernel's last instruction before them, address) →
    /// instructions outside the op's own code that ran there: the
    /// library's code the kernel's line at that instruction led to (the
    /// code the op returns into is not listed).
    pub callers: BTreeMap<(u32, u64, u64), u64>,
}

/// Parses the counts file's text (`what` names it in errors).
pub fn parse(text: &str, what: &str) -> Result<Raw> {
    let bad =
        |l: &str| Error::new(ErrorKind::RunFailed, format!("{what}: malformed line `{l}` in the profile plugin's counts; rerun, and report it if it repeats"));
    let mut r = Raw::default();
    let mut complete = false;
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let n = |i: usize| w.get(i).and_then(|v| v.parse::<u64>().ok()).ok_or_else(|| bad(l));
        let hex = |i: usize| w.get(i).and_then(|v| u64::from_str_radix(v, 16).ok()).ok_or_else(|| bad(l));
        match w.first().copied() {
            Some("I") => *r.insns.entry((n(1)? as u32, hex(2)?)).or_default() += n(3)?,
            Some("M") => {
                let m = r.mem.entry((n(1)? as u32, hex(2)?)).or_default();
                let (ld, st) = (n(4)?, n(5)?);
                match w.get(3).copied() {
                    Some("h") => {
                        m.hbm_loads += ld;
                        m.hbm_stores += st;
                    }
                    Some("t") => m.tcm += ld + st,
                    Some("k") => m.stack += ld + st,
                    Some("s") => m.sbuf += ld + st,
                    Some(_) => m.other += ld + st,
                    None => return Err(bad(l)),
                }
            }
            Some("D") => {
                let d = r.dma.entry(n(1)? as u32).or_default();
                if w.get(2) == Some(&"t") {
                    d.to_tcm_descriptors += n(3)?;
                    d.to_tcm_bytes += n(4)?;
                } else {
                    d.to_hbm_descriptors += n(3)?;
                    d.to_hbm_bytes += n(4)?;
                }
            }
            Some("B") => {
                let e = r.dma_sites.entry((n(1)? as u32, hex(2)?)).or_default();
                e.0 += n(3)?;
                e.1 += n(4)?;
            }
            Some("S") => *r.callers.entry((n(1)? as u32, hex(2)?, hex(3)?)).or_default() += n(4)?,
            Some("end") => complete = true,
            _ => return Err(bad(l)),
        }
    }
    if !complete {
        return Err(Error::new(
            ErrorKind::RunFailed,
            format!("{what}: the profile plugin's counts end early (QEMU did not exit normally); rerun without --profile to see the run's own error"),
        ));
    }
    Ok(r)
}

/// Reads and parses the counts file.
pub fn read(path: &Path) -> Result<Raw> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io("read the profile counts", path, e))?;
    parse(&text, &path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_add_up_per_core_and_address_and_a_cut_file_is_an_error() {
        let t = "I 0 60000010 5\nI 0 60000010 2\nI 1 60000010 1\nM 0 60000014 h 3 1\nM 0 60000014 t 2 2\nD 1 t 4 4096\nD 1 h 4 4096\nB 1 60000020 3 6144\nB 1 0 1 2048\nS 0 60000020 60001000 4\nS 0 60000020 60001000 1\nS 0 60000030 60001000 2\nend\n";
        let r = parse(t, "x").unwrap();
        assert_eq!(r.insns[&(0, 0x6000_0010)], 7);
        assert_eq!(r.insns[&(1, 0x6000_0010)], 1);
        assert_eq!(r.mem[&(0, 0x6000_0014)], Mem { hbm_loads: 3, hbm_stores: 1, tcm: 4, ..Mem::default() });
        assert_eq!((r.dma[&1].bytes(), r.dma[&1].descriptors()), (8192, 8));
        assert_eq!((r.dma_sites[&(1, 0x6000_0020)], r.dma_sites[&(1, 0)]), ((3, 6144), (1, 2048)));
        assert_eq!((r.callers[&(0, 0x6000_0020, 0x6000_1000)], r.callers[&(0, 0x6000_0030, 0x6000_1000)]), (5, 2));
        assert!(parse("S 0 60000020 1\nend\n", "x").is_err());
        assert!(parse(&t.replace("end\n", ""), "x").unwrap_err().message.contains("end early"));
        assert!(parse("I 0 zz 1\nend\n", "x").unwrap_err().message.contains("malformed line `I 0 zz 1`"));
    }
}
