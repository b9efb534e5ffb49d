//! `customop build` / `customop run`: see `customop help` and
//! `docs/kernel-guide.md`. The logic is in the `customop` library.

fn main() {
    // Output piped into a reader that stops early (`| head`) ends this
    // process quietly, as it does `cat`: Rust ignores SIGPIPE, so the next
    // write to stderr failed and its panic aborted the run.
    // SAFETY: restoring a signal's default disposition at startup, before
    // any other thread exists.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(customop::cli::main(&args));
}
