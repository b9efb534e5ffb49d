//! Records the cargo profile directory this extension is built in: the
//! host `libneuroncustomop.a` that kernels link against is built there
//! (in `deps/`) together with the extension, and `load()` finds it there
//! at run time (see `src/staticlib_path.rs`).

fn main() {
    let out = std::env::var("OUT_DIR").expect("cargo sets OUT_DIR");
    // OUT_DIR is <target>/<profile>/build/<package>-<hash>/out.
    let profile = std::path::Path::new(&out).ancestors().nth(3).expect("OUT_DIR is inside the profile directory");
    println!("cargo:rustc-env=NEURONCUSTOMOP_PROFILE_DIR={}", profile.display());
    println!("cargo:rerun-if-changed=build.rs");
}
