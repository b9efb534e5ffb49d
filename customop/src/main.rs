//! `customop build` / `customop run`: see `customop help` and
//! `docs/kernel-guide.md`. The logic is in the `customop` library.

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    std::process::exit(customop::cli::main(&args));
}
