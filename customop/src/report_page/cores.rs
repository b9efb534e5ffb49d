//! Per core: DMA, translate hits and misses per window, heap and stack
//! high water against the device's limits, errors, and printf folded
//! away, read from the report's lines for that core.

use super::esc;
use neuron_hal::platform::{BOOTSTRAP_HEAP_SIZE, DATARAM_SIZE, LIBC_HEAP_SIZE, SCRATCH_AREA_SIZE};

/// One core's lines: its header, then its indented lines.
struct Core<'a> {
    head: &'a str,
    lines: Vec<&'a str>,
}

fn between<'a>(s: &'a str, before: &str, after: &str) -> Option<&'a str> {
    let at = s.find(before)? + before.len();
    let rest = &s[at..];
    Some(&rest[..rest.find(after)?])
}

fn num(s: Option<&str>) -> Option<u64> {
    s?.trim().trim_start_matches("more than ").parse().ok()
}

fn list(s: Option<&str>) -> Vec<String> {
    s.map(|s| s.trim_matches(|c| c == '[' || c == ']').split(',').map(|t| t.trim().to_owned()).filter(|t| !t.is_empty()).collect()).unwrap_or_default()
}

/// `used` of `limit` bytes, with a bar.
fn against(used: Option<u64>, limit: u64) -> String {
    match used {
        Some(u) => {
            let pct = (u as f64 * 100.0 / limit.max(1) as f64).min(100.0);
            let over = if u > limit { " over" } else { "" };
            format!("{u} B of {limit} B<span class=\"bar\"><span class=\"{over}\" style=\"width:{pct:.0}%\"></span></span>")
        }
        None => "?".into(),
    }
}

/// The per-core section of the page.
pub fn section(report: &str) -> String {
    let mut cores: Vec<Core<'_>> = Vec::new();
    for l in report.lines() {
        if l.starts_with("core ") && l.contains(": launcher returned ") {
            cores.push(Core { head: l, lines: Vec::new() });
        } else if let Some(c) = cores.last_mut() {
            c.lines.push(l);
        }
    }
    if cores.is_empty() {
        return "<p>No core ran.</p>\n".into();
    }
    let hbm_heap = SCRATCH_AREA_SIZE - LIBC_HEAP_SIZE - BOOTSTRAP_HEAP_SIZE as u64;
    let mut h = String::from(
        "<table class=\"cores\"><tr><th>core</th><th>DMA in (B)</th><th>DMA out (B)</th>\
         <th>translate hits<br>dyn 0, 1, 2, SBUF, scratch</th><th>misses<br>dyn 0, 1, 2</th><th>refused</th>\
         <th class=\"l\">HBM heap (of the core's scratch)</th><th class=\"l\">data-RAM heap (of its data RAM)</th>\
         <th class=\"l\">libc heap</th><th class=\"l\">kernel stack (of what the device gives it)</th></tr>\n",
    );
    let mut below = String::new();
    for c in &cores {
        let cpu = between(c.head, "core ", ":").unwrap_or("?");
        let find = |p: &str| c.lines.iter().find_map(|l| l.strip_prefix(p));
        let t = find("  translate: ");
        let d = find("  DMA: ");
        let hw = find("  high water: ");
        let cell = |v: Option<u64>| v.map_or("?".into(), |v| v.to_string());
        h.push_str(&format!(
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"l\">{}</td></tr>\n",
            esc(cpu),
            cell(num(d.and_then(|d| between(d, "", " bytes in")))),
            cell(num(d.and_then(|d| between(d, "), ", " bytes out")))),
            esc(&list(t.and_then(|t| between(t, "hits ", " (dynamic"))).join(", ")),
            esc(&list(t.and_then(|t| between(t, "misses ", ", refused"))).join(", ")),
            cell(num(t.and_then(|t| between(t, "refused ", ", window")))),
            against(num(hw.and_then(|h| between(h, "HBM heap ", " B,"))), hbm_heap),
            against(num(hw.and_then(|h| between(h, "data-RAM heap ", " B,"))), u64::from(DATARAM_SIZE)),
            against(num(hw.and_then(|h| between(h, "libc heap ", " B,"))), LIBC_HEAP_SIZE),
            against(num(hw.and_then(|h| between(h, "the kernel's own: ", " B of"))), num(hw.and_then(|h| between(h, " B of the ", " B it has"))).unwrap_or(0)),
        ));
        // Everything else the report says of this core: its status,
        // errors and warnings in the open, printf folded away.
        let (printf, other): (Vec<&str>, Vec<&str>) = {
            let mut in_printf = false;
            c.lines.iter().filter(|l| !l.starts_with("  translate: ") && !l.starts_with("  DMA: ") && !l.starts_with("  high water: ")).partition(|l| {
                if l.starts_with("  printf (") {
                    in_printf = true;
                    return true;
                }
                in_printf &= l.starts_with("    ");
                in_printf
            })
        };
        below.push_str(&format!("<h3>{}</h3>\n", esc(c.head)));
        if !other.is_empty() {
            below.push_str(&format!("<pre>{}</pre>\n", esc(&other.join("\n"))));
        }
        if !printf.is_empty() {
            below.push_str(&format!(
                "<details class=\"printf\"><summary>printf ({} line(s))</summary><pre>{}</pre></details>\n",
                printf.len() - 1,
                esc(&printf[1..].iter().map(|l| l.trim_start_matches("    ")).collect::<Vec<_>>().join("\n"))
            ));
        }
    }
    h.push_str("</table>\n");
    h.push_str(&below);
    h
}
