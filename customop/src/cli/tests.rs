use super::*;

fn v(a: &[&str]) -> Vec<String> {
    a.iter().map(|s| (*s).to_owned()).collect()
}

fn parse_run(a: &[&str]) -> Result<(RunOptions, bool)> {
    match parse(&[&["run"], a].concat().iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())? {
        Parsed::Run(o, r, _, _) => Ok((o, r)),
        _ => panic!("not a run"),
    }
}

fn parse_build(a: &[&str]) -> Result<BuildOptions> {
    match parse(&[&["build"], a].concat().iter().map(|s| (*s).to_owned()).collect::<Vec<_>>())? {
        Parsed::Build(o, _) => Ok(o),
        _ => panic!("not a build"),
    }
}

#[test]
fn the_command_line_is_consistent() {
    <Cli as clap::CommandFactory>::command().debug_assert();
}

#[test]
fn run_takes_negative_numbers_as_arguments_and_needs_an_output() {
    let (o, report) = parse_run(&["d", "op", "x.npy", "-1.5", "-3", "-o", "y.npy", "--report", "-1e-5", "-inf", "-.5"]).unwrap();
    assert_eq!(o.args, ["x.npy", "-1.5", "-3", "-1e-5", "-inf", "-.5"]);
    assert!(report && o.cores.is_none() && o.on == crate::run::On::Sim);
    let e = parse_run(&["d", "op", "x.npy"]).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Usage);
    assert!(e.message.contains("--out <OUT.npy>"), "{e}");
    assert!(parse_run(&["d", "op", "--bogus", "-o", "y"]).unwrap_err().message.contains("unexpected argument '--bogus'"));
}

#[test]
fn options_take_their_values_either_way_and_check_them() {
    let (o, _) = parse_run(&["d", "op", "--out=y.npy", "--cores=8", "--on", "both", "--timeout=2.5"]).unwrap();
    assert_eq!((o.out, o.cores, o.on, o.timeout), (Some(PathBuf::from("y.npy")), Some(8), crate::run::On::Both, Some(Duration::from_millis(2500))));
    let e = parse_run(&["d", "op", "-o", "y", "--cores", "x"]).unwrap_err();
    assert!(e.kind == ErrorKind::Usage && e.message.contains("--cores x: expected a number of cores, 1 or 8"), "{e}");
    assert!(parse_run(&["d", "op", "-o", "y", "--on", "gpu"]).unwrap_err().message.contains("--on gpu: expected sim, qemu or both"));
    assert!(parse_run(&["d", "op", "-o", "y", "--timeout", "0"]).unwrap_err().message.contains("--timeout 0: give a number of seconds above 0"));
}

#[test]
fn build_needs_a_name_and_defaults_its_directory() {
    let o = parse_build(&["--name", "k", "--compute", "a.cpp", "--shape", "s.cpp", "--cflags", "-DX=1 -O3", "--cflags=-g"]).unwrap();
    assert_eq!(o.out, PathBuf::from("build/k"));
    assert_eq!(o.cflags, ["-DX=1", "-O3", "-g"]);
    assert_eq!(o.target, Target::Sim);
    let e = parse_build(&["--compute", "a.cpp"]).unwrap_err();
    assert!(e.kind == ErrorKind::Usage && e.message.contains("--name <NAME>"), "{e}");
    let e = parse_build(&["--name", "k", "--target", "x86"]).unwrap_err();
    assert!(e.message.contains("unknown target `x86` (expected sim, qemu or q7)"), "{e}");
    assert_eq!(main(&v(&["frobnicate"])), 2);
    assert_eq!(main(&v(&[])), 2);
}

#[test]
fn help_is_printed_per_command_and_exits_zero() {
    for cmd in [&["--help"][..], &["help"], &["build", "--help"], &["run", "-h"], &["help", "run"]] {
        let Ok(Parsed::Print(text)) = parse(&v(cmd)) else { panic!("{cmd:?} is not help") };
        assert!(text.contains("Usage: customop") && text.contains("EXIT STATUS:\n  0 ok, 2 usage") && text.contains("ENVIRONMENT:"), "{cmd:?}: {text}");
    }
    let Ok(Parsed::Print(run)) = parse(&v(&["run", "--help"])) else { panic!() };
    assert!(run.contains("--timeout <SECONDS>") && run.contains("<DIR> <OP> [ARG]..."), "{run}");
    assert_eq!(main(&v(&["build", "--help"])), 0);
}

#[test]
fn help_shows_possible_values_and_required_flags() {
    let Ok(Parsed::Print(run)) = parse(&v(&["run", "--help"])) else { panic!() };
    assert!(run.contains("Possible values:") && run.contains("- qemu:") && run.contains("- both:"), "{run}");
    let Ok(Parsed::Print(build)) = parse(&v(&["build", "--help"])) else { panic!() };
    assert!(build.contains("--name <NAME> --compute <A.cpp> --shape <S.cpp>"), "the usage line shows the required flags: {build}");
    assert!(build.contains("- q7:") && build.contains("-v, --verbose"), "{build}");
    // The short form (-h) lists them in brackets.
    let Ok(Parsed::Print(short)) = parse(&v(&["run", "-h"])) else { panic!() };
    assert!(short.contains("[possible values: sim, qemu, both]"), "{short}");
    let e = parse_build(&["--name", "k", "--compute", "a.cpp"]).unwrap_err();
    assert!(e.kind == ErrorKind::Usage && e.message.contains("--shape <S.cpp>"), "{e}");
}

#[test]
fn the_exit_status_footer_lists_exactly_the_statuses_the_tool_returns() {
    let footer = EXIT_STATUS.split("\n\n").next().unwrap();
    let mut listed: Vec<i32> = footer.split([',', '\n', ':']).filter_map(|item| item.split_whitespace().next()?.parse().ok()).collect();
    listed.sort_unstable();
    let mut want: Vec<i32> = std::iter::once(0).chain(ErrorKind::ALL.iter().map(|k| k.exit_code())).collect();
    want.sort_unstable();
    assert_eq!(listed, want, "{footer}");
}

#[test]
fn the_environment_section_names_the_variables_the_tool_reads() {
    for var in [
        "CXX",
        "NEURON_INCLUDE",
        crate::staticlib::ENV_OVERRIDE,
        "NEURON_SIM_HBM_GIB",
        "NEURON_SIM_SANITIZE",
        crate::device_check::ENV,
        "CUSTOMOP_QEMU_TIMEOUT",
        crate::qemu_run::PLUGIN_ENV,
        crate::qemu_run::ARGS_ENV,
        crate::xtensa::devlib::ENV_DIR,
        "PYTHON",
        "OBJCOPY",
        crate::owned_dir::TRUST_ENV,
        crate::dir_lock::WAIT_ENV,
    ] {
        let listed = EXIT_STATUS.contains(&format!("\n  {var} ")) || EXIT_STATUS.contains(&format!("\n  {var}="));
        assert!(listed, "{var} is not in ENVIRONMENT");
    }
}
