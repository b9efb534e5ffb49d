//! Generates the C header from the Rust exports (host builds only; the
//! Xtensa build ships the committed copy in `include/`). The exports live in
//! `neuron-capi` and `neuron-sim` (this crate only re-exports them), and
//! cbindgen declares only the functions of the crate it is given (types it
//! finds in the dependencies): it reads the C-ABI crate as the crate and the
//! simulator's sources as extra sources.

fn main() {
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=capi/src");
    println!("cargo:rerun-if-changed=sim/src");
    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=runtime/src");
    println!("cargo:rerun-if-changed=hal/src");
    let target = std::env::var("TARGET").unwrap_or_default();
    if target.contains("xtensa") {
        return;
    }
    let dir = std::env::var("CARGO_MANIFEST_DIR").expect("cargo sets CARGO_MANIFEST_DIR");
    let out = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let config = cbindgen::Config::from_file(format!("{dir}/cbindgen.toml")).expect("cbindgen.toml parses");
    let sim = format!("{dir}/sim/src/lib.rs");
    match cbindgen::Builder::new().with_crate(format!("{dir}/capi")).with_src(sim).with_config(config).generate() {
        Ok(b) => {
            b.write_to_file(out.join("neuroncustomop.h"));
        }
        Err(e) => panic!("header generation failed: {e}"),
    }
}
