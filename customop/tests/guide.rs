//! docs/kernel-guide.md starts from a vendor kernel, `relu.cpp` and
//! `shape.cpp`, and two commands: this test takes both files out of the
//! guide as printed, runs the two commands as printed (with the binary
//! for `cargo run -p customop --`), and checks the output on 1 and 8 cores.

mod common;
use common::*;

/// The fenced `cpp` block of the guide whose first line is `// <name>`.
fn block(guide: &str, name: &str) -> String {
    let first = format!("```cpp\n// {name}\n");
    let at = guide.find(&first).unwrap_or_else(|| panic!("the guide has no ```cpp block starting with `// {name}`"));
    let body = &guide[at + "```cpp\n".len()..];
    body[..body.find("```").expect("block closes")].to_owned()
}

/// The guide's `customop <cmd> ...` command line (the `cargo run` one).
fn command(guide: &str, cmd: &str) -> Vec<String> {
    let prefix = format!("cargo run --release -p customop -- {cmd} ");
    let line = guide.lines().find(|l| l.starts_with(&prefix)).unwrap_or_else(|| panic!("the guide shows no `{prefix}...`"));
    line["cargo run --release -p customop -- ".len()..].split_whitespace().map(str::to_owned).collect()
}

#[test]
fn the_guides_two_files_and_two_commands_work_as_printed() {
    let guide = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/kernel-guide.md")).unwrap();
    let dir = scratch("guide");
    std::fs::write(dir.join("relu.cpp"), block(&guide, "relu.cpp")).unwrap();
    std::fs::write(dir.join("shape.cpp"), block(&guide, "shape.cpp")).unwrap();
    let (r, c) = (19u64, 23u64);
    let x = values((r * c) as usize, -1.0, 1.0, 13);
    customop::npy::write(&dir.join("x.npy"), &f32s(&[r, c], &x)).unwrap();
    let run_in_dir = |args: &[String]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_customop")).args(args).current_dir(&dir).output().unwrap();
        assert!(o.status.success(), "customop {args:?}:\n{}", text(&o));
        text(&o)
    };
    run_in_dir(&command(&guide, "build"));
    let mut run = command(&guide, "run");
    let t = run_in_dir(&run);
    // A build without --multicore runs on one core by default.
    assert!(t.contains("core 0:") && !t.contains("core 1:"), "--report shows the one core:\n{t}");
    let want: Vec<f32> = x.iter().map(|v| v.max(0.0)).collect();
    assert_eq!(customop::npy::read(&dir.join("y.npy")).unwrap().to_f32(), want);
    run.extend(["--cores".to_string(), "1".to_string()]);
    run_in_dir(&run);
    assert_eq!(customop::npy::read(&dir.join("y.npy")).unwrap().to_f32(), want, "on 1 core");
}
