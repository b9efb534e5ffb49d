//! `customop run --html FILE`: the report page of an 8-core run draws the
//! output by the core that wrote it, rendered in a real headless browser;
//! a run that leaves elements unwritten writes its page too, marking them.

mod common;
use common::*;
use std::path::Path;

fn input(name: &str, n: u64) -> String {
    let v: Vec<f32> = (0..n).map(|i| i as f32).collect();
    npy_file(name, &f32s(&[n], &v)).display().to_string()
}

/// The page as a browser renders it: `chromium --dump-dom`.
fn rendered(page: &Path) -> String {
    // A profile of its own per run: two browsers on one profile refuse
    // to start (its SingletonLock), and the tests run in parallel.
    let profile = tempfile::tempdir_in(scratch("chromium-profiles")).unwrap();
    let profile = profile.path();
    let r = std::process::Command::new("chromium")
        .args(["--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", &format!("--user-data-dir={}", profile.display()), "--dump-dom"])
        .arg(page)
        .output()
        .expect("chromium (apt-get install --no-install-recommends chromium; cargo xtask setup installs it)");
    let dom = String::from_utf8_lossy(&r.stdout).into_owned();
    assert!(r.status.success() && dom.contains("</html>"), "chromium failed ({}):\n{}", r.status, String::from_utf8_lossy(&r.stderr));
    dom
}

/// The distinct classes of the map's squares in `dom`.
fn square_classes(dom: &str) -> std::collections::BTreeSet<String> {
    dom.split("<rect class=\"").skip(1).map(|s| s[..s.find('"').unwrap()].to_owned()).collect()
}

#[test]
fn an_eight_core_runs_page_shows_each_cores_part() {
    let dir = built("report_page", &["--multicore"]).display().to_string();
    let x = input("parts_x.npy", 64);
    let out = scratch("out").join("parts.npy").display().to_string();
    let page = scratch("pages").join("parts.html");
    let p = page.display().to_string();
    customop_ok(&["run", &dir, "double_parts", &x, "-o", &out, "--cores", "8", "--html", &p]);
    let dom = rendered(&page);
    // The map: 64 squares, one per element, eight per core, in order.
    let classes = square_classes(&dom);
    assert_eq!(classes, (0..8).map(|c| format!("c{c}")).collect(), "{dom}");
    let squares: Vec<&str> = dom.split("<rect class=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    assert_eq!(squares.len(), 64);
    for (i, c) in squares.iter().enumerate() {
        assert_eq!(*c, format!("c{}", i / 8), "element {i}");
    }
    // The legend names each core; per core, its counters; printf folded.
    for c in 0..8 {
        assert!(dom.contains(&format!("core {c} (8)")), "no legend entry for core {c}:\n{dom}");
    }
    assert!(dom.contains("translate hits") && dom.contains("of what the device gives it"), "{dom}");
    assert!(dom.contains("<summary>printf (1 line(s))</summary>") && dom.contains("64 elements on 8 cores"), "{dom}");
    assert!(dom.contains("run: 8 core(s), ok"));
    // Self-contained: nothing to fetch.
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("src=") && !html.contains("href="));
}

#[test]
fn a_failed_runs_page_marks_the_unwritten_elements() {
    let dir = built("report_page", &["--multicore"]).display().to_string();
    let x = input("last_x.npy", 64);
    let out = scratch("out").join("last.npy").display().to_string();
    let page = scratch("pages").join("last.html");
    let p = page.display().to_string();
    let r = customop(&["run", &dir, "double_parts_but_last", &x, "-o", &out, "--cores", "8", "--html", &p]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    assert!(t.contains(&format!("the report page is in {p}")), "{t}");
    let dom = rendered(&page);
    let squares: Vec<&str> = dom.split("<rect class=\"").skip(1).map(|s| &s[..s.find('"').unwrap()]).collect();
    assert_eq!(squares.len(), 64);
    assert!(squares[56..].iter().all(|c| *c == "unw"), "{squares:?}");
    assert!(squares[..56].iter().enumerate().all(|(i, c)| *c == format!("c{}", i / 8)), "{squares:?}");
    assert!(dom.contains("never written (8)"), "{dom}");
    // The finding, with its elements.
    assert!(dom.contains("<b>verdict</b>") && dom.contains("8 of 64 output elements were never written: [56, 64)"), "{dom}");
}

#[test]
fn a_large_output_is_downsampled() {
    let dir = built("report_page", &["--multicore"]).display().to_string();
    let x = input("big_x.npy", 1 << 16);
    let out = scratch("out").join("big.npy").display().to_string();
    let page = scratch("pages").join("big.html");
    let p = page.display().to_string();
    customop_ok(&["run", &dir, "double_parts", &x, "-o", &out, "--html", &p]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(html.matches("<rect ").count(), 4096);
    assert!(html.contains("Downsampled: 65536 elements drawn as 4096 squares of about 16 elements each"), "{}", &html[..3000]);
    assert_eq!(square_classes(&html).len(), 8);
    assert!(html.len() < 400_000, "{} bytes", html.len());
}

#[test]
fn html_is_refused_on_the_emulated_device_alone() {
    let dir = built("report_page", &["--multicore"]).display().to_string();
    let x = input("qemu_x.npy", 8);
    let r = customop(&["run", &dir, "double_parts", &x, "-o", "/dev/null", "--on", "qemu", "--html", "/tmp/never.html"]);
    assert!(text(&r).contains("--html draws the simulator's run"), "{}", text(&r));
}
