//! The `customop` tool's parsers of user input, fed arbitrary bytes: the
//! `.npy` reader, the C++ scanner, `customop.json`, and the dependency
//! file / stamp / manifest readers of the build cache. Each must give a
//! value or a clear error, never panic, and what it accepts must survive
//! its writer: render then parse gives the same value back.

use customop::cache::{depfile_inputs, Stamp};
use customop::npy;
use customop::scan::{self, lexer, Source};
use customop::Schema;
use std::path::Path;

/// The `.npy` reader.
pub fn npy_read(data: &[u8]) {
    if let Ok(a) = npy::parse_bytes(data) {
        assert_eq!(a.data.len() as u64, a.numel() * u64::from(a.dtype.elem_size()), "accepted data of the wrong length");
        let again = npy::parse_bytes(&npy::render(&a).expect("a parsed array renders")).expect("a rendered array parses");
        assert_eq!(again, a, "render/parse round trip");
    }
}

/// The C++ scanner: the bytes as a shape source and as a compute source,
/// with and without a `-D` definition (first byte picks).
pub fn scan_source(data: &[u8]) {
    let (defines, text) = match data.split_first() {
        Some((b, rest)) if b & 1 == 1 => (vec!["FAST=1".to_owned()], rest),
        Some((_, rest)) => (Vec::new(), rest),
        None => (Vec::new(), data),
    };
    let text = Source::decode(text);
    let _ = lexer::lex(&text, &defines);
    let src = Source { path: "fuzz.cpp".into(), text };
    if let Ok(s) = scan::scan_with(std::slice::from_ref(&src), std::slice::from_ref(&src), &defines) {
        assert!(!s.ops.is_empty() && s.ops.len() <= customop::schema::MAX_OPS);
        for op in &s.ops {
            assert!(op.params.len() <= customop::schema::MAX_ARGS);
        }
    }
}

/// `customop.json`.
pub fn schema_json(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(s) = Schema::parse(Path::new("customop.json"), text) {
        assert!(!s.library_file.contains('/'), "a schema naming a file outside its directory was accepted");
        let again = Schema::parse(Path::new("customop.json"), &serde_json::to_string(&s).expect("serialises")).expect("a saved schema parses");
        assert_eq!(again, s, "save/parse round trip");
    }
}

/// The build cache's dependency files, stamps and manifest.
pub fn depfile_stamp(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for p in depfile_inputs(&text) {
        assert!(!p.as_os_str().is_empty(), "an empty path from a depfile");
    }
    if let Some(s) = Stamp::parse(&text) {
        assert_eq!(Stamp::parse(&s.render()), Some(s), "render/parse round trip");
    }
    let _ = customop::workdir::parse_manifest(&text);
}
