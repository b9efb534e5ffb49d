//! The command line: `customop build ...` and `customop run ...`.

use crate::build::{build, BuildOptions};
use crate::compiler::{split_flags, Outcome};
use crate::error::{Error, ErrorKind, Result};
use crate::run::{run, RunOptions};
use crate::schema::Target;
use std::path::PathBuf;

/// The usage text.
pub const USAGE: &str = "\
usage:
  customop build --name NAME --compute A.cpp [--compute B.cpp ...] --shape S.cpp [--shape ...]
                 [--multicore] [--target sim|qemu|q7] [--out DIR] [--cflags \"...\"]
                 [--staticlib libneuroncustomop.a] [--include DIR]
  customop run DIR OP ARG... -o OUT.npy [--cores 1|8] [--report] [--on sim|qemu|both]
               [--timeout SECONDS] [--timings]

build: reads the ops from the shape sources' NEURON_LIBRARY blocks, generates the wrappers
       (DIR/customop-build/ops.cpp, shapes.cpp), compiles and links DIR/libNAME.so (default DIR:
       build/NAME); it replaces only files it wrote (DIR/customop-build/manifest).
run:   each ARG is a .npy file (a tensor argument) or a number (a scalar argument); the op's
       shape function gives the output's shape and dtype; the kernel runs on the simulator
       (default: 8 cores for a --multicore build, else 1); the output goes to OUT.npy.
       --on qemu runs a --target qemu build on the emulated cluster (per-core status and printf
       shown); --on both runs it on the simulator and on QEMU and compares the outputs bit for bit.
       The shape function and the simulator's run go in a child process: a crash is reported
       (core, op, signal, address), --timeout stops them after SECONDS. --timings prints where
       a run on the simulator spent its time (inputs, setup, copy-in, kernel per core, verdict,
       copy-out).
exit status: 0 ok, 2 usage, 3 refused source, 4 compile/link error, 5 I/O, 6 bad run input,
             7 kernel failed, 8 shape function failed, 9 target not supported yet, 10 environment,
             11 the simulator and the emulated device disagree (--on both), 12 the kernel or shape
             function crashed, 13 --timeout passed";

fn usage(msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Usage, format!("{}\n\n{USAGE}", msg.into()))
}

fn value(args: &[String], i: &mut usize, flag: &str) -> Result<String> {
    *i += 1;
    args.get(*i).cloned().ok_or_else(|| usage(format!("{flag} needs a value")))
}

/// Parses `build`'s arguments.
pub fn parse_build(args: &[String]) -> Result<BuildOptions> {
    let mut o = BuildOptions {
        name: String::new(),
        compute: Vec::new(),
        shape: Vec::new(),
        multicore: false,
        target: Target::Sim,
        out: PathBuf::new(),
        cflags: Vec::new(),
        staticlib: None,
        include: None,
    };
    let mut out = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "--name" => o.name = value(args, &mut i, a)?,
            "--compute" => o.compute.push(value(args, &mut i, a)?.into()),
            "--shape" => o.shape.push(value(args, &mut i, a)?.into()),
            "--multicore" => o.multicore = true,
            "--target" => o.target = Target::parse(&value(args, &mut i, a)?)?,
            "--out" => out = Some(PathBuf::from(value(args, &mut i, a)?)),
            "--cflags" => o.cflags.extend(split_flags(&value(args, &mut i, a)?)?),
            "--staticlib" => o.staticlib = Some(value(args, &mut i, a)?.into()),
            "--include" => o.include = Some(value(args, &mut i, a)?.into()),
            _ => return Err(usage(format!("build: unexpected argument `{a}`"))),
        }
        i += 1;
    }
    if o.name.is_empty() {
        return Err(usage("build: --name is required"));
    }
    o.out = out.unwrap_or_else(|| PathBuf::from("build").join(&o.name));
    Ok(o)
}

/// Whether `a` is a number (a scalar argument) rather than an option.
fn is_number(a: &str) -> bool {
    a.parse::<f64>().is_ok()
}

/// Parses `run`'s arguments; also whether `--report` was given.
pub fn parse_run(args: &[String]) -> Result<(RunOptions, bool)> {
    let mut pos = Vec::new();
    let (mut out, mut cores, mut report, mut on, mut timeout) = (None, None, false, crate::run::On::Sim, None);
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        match a {
            "-o" | "--out" => out = Some(PathBuf::from(value(args, &mut i, a)?)),
            "--cores" => {
                let v = value(args, &mut i, a)?;
                cores = Some(v.parse::<u32>().map_err(|_| usage(format!("--cores {v}: expected a number of cores, 1 or 8")))?);
            }
            "--report" => report = true,
            "--on" => on = crate::run::On::parse(&value(args, &mut i, a)?)?,
            "--timeout" => timeout = Some(crate::contained::parse_timeout(&value(args, &mut i, a)?, a)?),
            _ if a.starts_with('-') && a.len() > 1 && !is_number(a) => return Err(usage(format!("run: unknown option `{a}`"))),
            _ => pos.push(a.to_owned()),
        }
        i += 1;
    }
    if pos.len() < 2 {
        return Err(usage("run: give the build directory and the op"));
    }
    let out = out.ok_or_else(|| usage("run: -o OUT.npy is required"))?;
    let dir = PathBuf::from(pos.remove(0));
    let op = pos.remove(0);
    Ok((RunOptions { dir, op, args: pos, out: Some(out), cores, on, timeout }, report))
}

fn dispatch(args: &[String]) -> Result<()> {
    match args.first().map(String::as_str) {
        Some("build") => {
            let b = build(&parse_build(&args[1..])?)?;
            let compiled = b.objects.iter().filter(|(_, o)| *o == Outcome::Compiled).count();
            let ops: Vec<&str> = b.schema.ops.iter().map(|o| o.name.as_str()).collect();
            println!(
                "built {} ({} op(s): {}; {compiled} source(s) compiled, {} cached{})",
                b.library.display(),
                ops.len(),
                ops.join(", "),
                b.objects.len() - compiled,
                if b.linked { "" } else { ", not relinked" }
            );
            if !b.device_objects.is_empty() {
                let dc = b.device_objects.iter().filter(|(_, o)| *o == Outcome::Compiled).count();
                println!("xtensa: {dc} source(s) compiled, {} cached; image(s):", b.device_objects.len() - dc);
                for (img, stripped) in &b.images {
                    match stripped {
                        Some(s) => println!("  {} (stripped: {})", img.display(), s.display()),
                        None => println!("  {}", img.display()),
                    }
                }
            }
            let dir = b.library.parent().unwrap_or(std::path::Path::new("."));
            let work = dir.join(crate::workdir::WORK_DIR);
            println!(
                "generated {} (kernel side) and {} (host side); schema {}",
                work.join(crate::codegen::OPS_SOURCE).display(),
                work.join(crate::codegen::SHAPES_SOURCE).display(),
                dir.join(crate::schema::SCHEMA_FILE).display()
            );
            Ok(())
        }
        Some("run") => {
            let timings = args[1..].iter().any(|a| a == "--timings");
            let rest: Vec<String> = args[1..].iter().filter(|a| *a != "--timings").cloned().collect();
            let (o, report) = parse_run(&rest)?;
            let r = run(&o)?;
            // The emulated run's report is its only status: always shown.
            if report || o.on != crate::run::On::Sim {
                print!("{}", r.report);
            }
            match (&r.timings, timings) {
                (Some(t), true) => println!("{t}"),
                (None, true) => println!("timings: only for a run on the simulator alone (--on sim)"),
                _ => {}
            }
            let agreement = match r.nans_differing {
                0 => String::from(": outputs bit-identical"),
                n => format!(
                    ": outputs bit-identical but for {n} NaN(s) whose sign or payload differs (the host's default NaN is negative, the device's positive)"
                ),
            };
            println!(
                "ran {} on {} core(s){}: output {:?} {:?} written to {}",
                o.op,
                r.cores,
                match o.on {
                    crate::run::On::Sim => String::new(),
                    crate::run::On::Qemu => String::from(" of the emulated cluster"),
                    crate::run::On::Both => format!(" of the simulator and of the emulated cluster{agreement}"),
                },
                r.output.dtype,
                r.output.shape,
                o.out.as_ref().map_or_else(String::new, |p| p.display().to_string())
            );
            Ok(())
        }
        Some("help" | "--help" | "-h") => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => Err(usage(format!("unknown command `{other}`"))),
        None => Err(usage("give a command: build or run")),
    }
}

/// Runs the command line; returns the exit status (messages on stderr).
pub fn main(args: &[String]) -> i32 {
    match dispatch(args) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("customop: {e}");
            e.kind.exit_code()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn run_takes_negative_numbers_as_arguments_and_needs_an_output() {
        let (o, report) = parse_run(&v(&["d", "op", "x.npy", "-1.5", "-3", "-o", "y.npy", "--report"])).unwrap();
        assert_eq!(o.args, ["x.npy", "-1.5", "-3"]);
        assert!(report && o.cores.is_none());
        let e = parse_run(&v(&["d", "op", "x.npy"])).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Usage);
        assert!(e.message.starts_with("run: -o OUT.npy is required"), "{e}");
        assert!(parse_run(&v(&["d", "op", "--bogus", "-o", "y"])).unwrap_err().message.contains("unknown option `--bogus`"));
    }

    #[test]
    fn build_needs_a_name_and_defaults_its_directory() {
        let o = parse_build(&v(&["--name", "k", "--compute", "a.cpp", "--shape", "s.cpp", "--cflags", "-DX=1 -O3"])).unwrap();
        assert_eq!(o.out, PathBuf::from("build/k"));
        assert_eq!(o.cflags, ["-DX=1", "-O3"]);
        assert_eq!(o.target, Target::Sim);
        assert!(parse_build(&v(&["--compute", "a.cpp"])).unwrap_err().message.starts_with("build: --name is required"));
        assert_eq!(main(&v(&["frobnicate"])), 2);
    }
}
