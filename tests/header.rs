//! The committed C header must be what the Rust exports generate.

const GENERATED: &str = include_str!(concat!(env!("OUT_DIR"), "/neuroncustomop.h"));
const COMMITTED: &str = "include/neuroncustomop.h";

#[test]
fn committed_header_is_current() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED);
    if std::env::var_os("UPDATE_HEADER").is_some() {
        std::fs::write(&path, GENERATED).unwrap();
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(committed == GENERATED, "{COMMITTED} is stale: regenerate it with `UPDATE_HEADER=1 cargo test --test header` and commit it");
}

#[test]
fn header_declares_the_spec_symbols() {
    for sym in [
        "neuron_translate(",
        "neuron_hbm_allocate(",
        "neuron_dataram_allocate(",
        "tcm_malloc(",
        "tcm_free(",
        "register_funcs(",
        "switch_stack_or_call_wrapper(",
        "get_cpu_id(",
        "get_cpu_count(",
        "neuron_last_error(",
        "neuron_error_message(",
    ] {
        assert!(GENERATED.contains(sym), "header lacks {sym}");
    }
}
