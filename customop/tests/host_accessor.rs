//! The C++ element accessor's host fast path (sim/src/host_elements.rs)
//! over tensors spanning several 16 MiB windows: the same output, the same
//! translate counts (one translate per element access, as the per-element
//! hooks counted) and the same sanitizer findings as the hooks give.

mod common;
use common::*;
use customop::npy;

/// Elements: 24 MiB of floats, so each tensor spans two or three windows.
const N: usize = 6 << 20;

fn input() -> npy::Array {
    f32s(&[N as u64], &(0..N).map(|i| (i % 1000) as f32 - 500.0).collect::<Vec<_>>())
}

/// The sum of the numbers in the report's `translate: hits [..]` and
/// `misses [..]` lists: the translates the run made.
fn translates(report: &str) -> u64 {
    let line = report.lines().find(|l| l.contains("translate: hits")).expect("a translate line");
    line.split(['[', ']']).skip(1).step_by(2).take(2).flat_map(|l| l.split(", ")).map(|v| v.trim().parse::<u64>().expect("a count")).sum()
}

#[test]
fn a_walk_over_several_windows_counts_every_access_and_finds_nothing() {
    let dir = built("host_elements", &[]);
    let x = npy_file("walk_x.npy", &input());
    let (o, t) = run_op(&dir, "walk_twice", &[x.to_str().unwrap()], 1, "walk");
    let want: Vec<f32> = (0..N).map(|i| ((i % 1000) as f32 - 500.0) * 2.0 + 1.0).collect();
    let got: Vec<f32> = o.data.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect();
    assert!(got == want, "walk_twice: wrong output");
    // A load of the input, then a store, a load and a store of the output.
    assert_eq!(translates(&t), 4 * N as u64, "{t}");
}

#[test]
fn findings_past_the_fast_path_are_the_hooks() {
    let dir = built("host_elements", &[]);
    let x = npy_file("find_x.npy", &input());
    let (d, xs) = (dir.display().to_string(), x.display().to_string());
    let out = scratch("out").join("find.npy").display().to_string();
    let r = customop(&["run", d.as_str(), "walk_skipping_one", xs.as_str(), "-o", out.as_str()]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    for s in ["error 115", "1 element read(s)", &format!("first at element {}", N - 3)] {
        assert!(t.contains(s), "no {s:?} in:\n{t}");
    }
    let r = customop(&["run", d.as_str(), "write_input_last", xs.as_str(), "-o", out.as_str()]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    for s in ["error 114", &format!("wrote into argument 0 at element {}", N - 1), "1 element write(s)"] {
        assert!(t.contains(s), "no {s:?} in:\n{t}");
    }
}

/// A frame deep in the kernel that reaches the library only through an
/// element read (the accessor made, and its window opened, in a shallow
/// frame): the read's check in place notes the stack depth as its hook
/// would, so the stack rule (error 112) sees the frame; the twin, 1 KiB
/// deep there, passes.
#[test]
fn a_deep_frame_seen_only_by_an_element_read_is_judged() {
    let dir = built("host_elements", &[]);
    let x = npy_file("deep_x.npy", &f32s(&[64], &(0..64).map(|i| i as f32).collect::<Vec<_>>()));
    let (d, xs) = (dir.display().to_string(), x.display().to_string());
    let out = scratch("out").join("deep.npy").display().to_string();
    let r = customop(&["run", d.as_str(), "deep_element", xs.as_str(), "-o", out.as_str()]);
    let t = text(&r);
    assert_eq!(r.status.code(), Some(7), "{t}");
    for s in ["error 112", "op `deep_element`, core 0", "local stack of 8192 B"] {
        assert!(t.contains(s), "no {s:?} in:\n{t}");
    }
    let (o, _) = run_op(&dir, "shallow_element", &[xs.as_str()], 1, "shallow");
    let got: Vec<f32> = o.data.as_chunks::<4>().0.iter().map(|c| f32::from_le_bytes(*c)).collect();
    assert_eq!(got[..3], [64.0, 1.0, 2.0]);
}
