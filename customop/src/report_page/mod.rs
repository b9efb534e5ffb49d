//! `customop run --html FILE` and the Python report's `_repr_html_`: the
//! run's report as one self-contained page (inline CSS and SVG, nothing
//! fetched): the output drawn by the core that wrote it, the findings,
//! and per core its DMA, translations, high-water marks and printf.

mod cores;
mod map;

/// What a page is drawn from.
pub struct PageInput<'a> {
    /// The op.
    pub op: &'a str,
    /// The output's shape.
    pub shape: &'a [u64],
    /// The simulator's report text (`neuron_sim_report`).
    pub report: &'a str,
    /// Who wrote the output: its elements and the cells of
    /// `neuron_sim_writer_map` (None: the run kept none).
    pub writers: Option<(u64, &'a [u16])>,
}

/// Text made safe inside an element or a quoted attribute (`&<>"'`).
pub(crate) fn esc(s: &str) -> String {
    html_escape::encode_quoted_attribute(s).into_owned()
}

const STYLE: &str = "body{font:14px system-ui,sans-serif;margin:1.5em;color:#222}\
h1{font-size:1.3em}h2{font-size:1.1em;margin-top:1.5em}\
.ok{color:#176b2c}.failed{color:#b00020}\
pre,code{font:12px ui-monospace,monospace}\
ul.findings li{margin:.3em 0;white-space:pre-wrap}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}th{background:#f4f4f4}\
td.l,th.l{text-align:left}\
.bar{display:inline-block;width:120px;height:8px;background:#eee;vertical-align:middle;margin-left:6px}\
.bar span{display:block;height:8px;background:#4a7bd0}.bar span.over{background:#b00020}\
.legend span.sw{display:inline-block;width:12px;height:12px;margin:0 4px 0 12px;vertical-align:middle;border:1px solid #888}\
svg.map rect{stroke:none}\
.c0{fill:#1f77b4;background:#1f77b4}.c1{fill:#ff7f0e;background:#ff7f0e}.c2{fill:#2ca02c;background:#2ca02c}\
.c3{fill:#9467bd;background:#9467bd}.c4{fill:#8c564b;background:#8c564b}.c5{fill:#e377c2;background:#e377c2}\
.c6{fill:#17becf;background:#17becf}.c7{fill:#bcbd22;background:#bcbd22}\
.mix{fill:#7f7f7f;background:#7f7f7f}.unk{fill:#c7c7c7;background:#c7c7c7}\
.unw{fill:#fff;background:#fff;stroke:#b00020 !important;stroke-width:1}\
.twice{fill:#b00020;background:#b00020}";

/// The page.
pub fn page(p: &PageInput<'_>) -> String {
    let first = p.report.lines().next().unwrap_or("");
    let ok = first.ends_with(", ok");
    let mut h = String::new();
    h.push_str("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
    h.push_str(&format!("<title>customop run: {}</title><style>{STYLE}</style></head><body>\n", esc(p.op)));
    // A Python report knows neither its op nor its output's shape.
    let what = if p.op.is_empty() { String::new() } else { format!("op <code>{}</code>, output {:?}: ", esc(p.op), p.shape) };
    h.push_str(&format!("<h1>{what}<span class=\"{}\">{}</span></h1>\n", if ok { "ok" } else { "failed" }, esc(first)));
    h.push_str(&findings(p.report));
    h.push_str("<h2>The output, by the core that wrote it</h2>\n");
    h.push_str(&match p.writers {
        Some((elements, cells)) => map::draw(elements, p.shape, cells),
        None => "<p class=\"nomap\">No output map: this run kept none (a report from Python, a library linked before the simulator could keep one, or the sanitizer turned off).</p>\n".into(),
    });
    h.push_str("<h2>Per core</h2>\n");
    h.push_str(&cores::section(p.report));
    h.push_str("<details><summary>The report as text</summary><pre>");
    h.push_str(&esc(p.report));
    h.push_str("</pre></details>\n</body></html>\n");
    h
}

/// The run's verdict and other run-level lines (before the first core).
fn findings(report: &str) -> String {
    let lines: Vec<&str> = report.lines().skip(1).take_while(|l| !l.starts_with("core ")).collect();
    if lines.is_empty() {
        return "<h2>Findings</h2>\n<p>None.</p>\n".into();
    }
    let mut h = String::from("<h2>Findings</h2>\n<ul class=\"findings\">\n");
    for l in lines {
        let l = l.trim_start();
        let (key, rest) = l.split_once(": ").unwrap_or(("", l));
        h.push_str(&format!("<li><b>{}</b>{}{}</li>\n", esc(key), if key.is_empty() { "" } else { ": " }, esc(rest)));
    }
    h.push_str("</ul>\n");
    h
}

#[cfg(test)]
mod tests;
