use super::*;

const REPORT: &str = "run: 2 core(s), FAILED
  verdict: error 89 (output not written): op `half`: 2 of 4 output elements were never written: [2, 4), at k.cpp:13
  output: 2 of 4 output elements were never written: [2, 4)
core 0: launcher returned 0, status 0, last error 0
  translate: hits [3, 0, 0, 1, 0] (dynamic 0-2, SBUF, scratch), misses [1, 0, 0], refused 0, window programs 1
  DMA: 64 bytes in (HBM -> data RAM), 32 bytes out
  high water: HBM heap 0 B, data-RAM heap 4096 B, libc heap 0 B, stack 900 B (the kernel's own: 300 B of the 8192 B it has on the device)
  printf (0 bytes lost to wrap-around):
    hello <core 0>
core 1: launcher returned 0, status 0, last error 0
  translate: hits [0, 0, 0, 0, 0] (dynamic 0-2, SBUF, scratch), misses [0, 0, 0], refused 0, window programs 0
  DMA: 0 bytes in (HBM -> data RAM), 0 bytes out
  high water: HBM heap 0 B, data-RAM heap 0 B, libc heap 0 B, stack 100 B (the kernel's own: 9000 B of the 8192 B it has on the device)
";

#[test]
fn the_page_draws_writers_findings_and_cores() {
    // Elements 0 and 1 by cores 0 and 1; 2 and 3 unwritten.
    let cells = [1u16, 2, 1 << 9, 1 << 9];
    let p = page(&PageInput { op: "half", shape: &[4], report: REPORT, writers: Some((4, &cells)) });
    assert!(p.starts_with("<!DOCTYPE html>") && p.ends_with("</html>\n"));
    // Self-contained: nothing fetched.
    assert!(!p.contains("src=") && !p.contains("href=") && !p.contains("@import"), "{p}");
    assert_eq!(p.matches("<rect class=\"c0\"").count(), 1);
    assert_eq!(p.matches("<rect class=\"c1\"").count(), 1);
    assert_eq!(p.matches("<rect class=\"unw\"").count(), 2);
    assert!(p.contains("never written (2)") && p.contains("core 0 (1)") && p.contains("core 1 (1)"), "{p}");
    // The findings, their lines, escaped.
    assert!(p.contains("<b>verdict</b>: error 89") && p.contains("at k.cpp:13"), "{p}");
    assert!(p.contains("op `half`"));
    // Per core: DMA, translations, high water against the limit (core 1
    // over its stack), printf folded away and escaped.
    assert!(p.contains("<td>64</td><td>32</td><td>3, 0, 0, 1, 0</td><td>1, 0, 0</td>"), "{p}");
    assert!(p.contains("300 B of 8192 B") && p.contains("9000 B of 8192 B<span class=\"bar\"><span class=\" over\""), "{p}");
    assert!(p.contains("<details class=\"printf\"><summary>printf (1 line(s))</summary><pre>hello &lt;core 0&gt;</pre></details>"), "{p}");
    assert!(!p.contains("downsampled"));
}

#[test]
fn a_large_output_is_downsampled_and_says_so() {
    let cells: Vec<u16> = (0..4096).map(|i| 1 << (i * 8 / 4096)).collect();
    let p = page(&PageInput { op: "big", shape: &[1 << 20], report: "run: 1 core(s), ok\n", writers: Some((1 << 20, &cells)) });
    assert!(p.contains("Downsampled: 1048576 elements drawn as 4096 squares of about 256 elements each"), "{}", &p[..2000]);
    for c in 0..8 {
        assert_eq!(p.matches(&format!("<rect class=\"c{c}\"")).count(), 512);
    }
    assert!(p.len() < 300_000, "{} bytes", p.len());
    // No map: said so.
    let p = page(&PageInput { op: "x", shape: &[1], report: "run: 1 core(s), ok\n", writers: None });
    assert!(p.contains("No output map"));
}

#[test]
fn twice_written_unknown_and_mixed_cells_have_their_own_marks() {
    let cells = [3 | (1 << 10), 1 << 8, 3];
    let p = map::draw(300, &[300], &cells);
    assert!(p.contains("<rect class=\"twice\"") && p.contains("<rect class=\"unk\"") && p.contains("<rect class=\"mix\""), "{p}");
    assert!(p.contains("written by two cores (1)"));
}
