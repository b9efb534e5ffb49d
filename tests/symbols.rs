//! `nm` on the host staticlib: the C symbols SPEC names are defined text
//! symbols with C linkage (unmangled), and the kernel's generated table is
//! left for the kernel to define.

mod cpp;

use std::collections::HashMap;

/// Every C symbol the library exports under the names of SPEC (and the
/// rest of the documented C surface).
const EXPORTED: &[&str] = &[
    // translation (SPEC 3)
    "neuron_translate",
    "neuron_translate_ctx",
    "neuron_translate_pinned",
    "_init_translate_ctx",
    // heaps (SPEC 4)
    "neuron_hbm_allocate",
    "neuron_hbm_deallocate",
    "neuron_dataram_allocate",
    "neuron_dataram_deallocate",
    "tcm_malloc",
    "tcm_free",
    "init_neuron_hbm_allocator",
    "init_neuron_dataram_allocator",
    "_init_libc_heap_allocator",
    "neuron_runtime_init",
    // transfers (SPEC 5)
    "neuron_memcpy_from_soc",
    "neuron_memcpy_to_soc",
    "neuron_memcpy_soc_to_soc",
    "neuron_set_memcpy_method",
    "neuron_get_memcpy_method",
    "init_dma_queue",
    "neuron_dma_drain",
    // invocation (SPEC 6)
    "customop_setup",
    "customop_status",
    "customop_next_tensor",
    "customop_next_scalar",
    "customop_next_int",
    "customop_next_float",
    "customop_next_long_long",
    "customop_next_int64",
    "customop_next_double",
    "customop_return_tensor",
    "customop_cleanup",
    "get_dst_tensor",
    "register_funcs",
    "neuron_entry",
    // stack switch (SPEC 7)
    "switch_stack_or_call_wrapper",
    // multicore
    "get_cpu_id",
    "get_cpu_count",
    // errors and versions
    "neuron_last_error",
    "neuron_error_message",
    "neuron_clear_error",
    "neuron_customop_version",
    "neuron_ucode_lib_version",
];

/// The generated op table: the kernel defines it, the library calls it.
const KERNEL_PROVIDES: &[&str] = &["get_func_cnt", "get_func_name", "get_func_ptr"];

/// Symbol name → the types `nm` gives it across the archive's members.
fn symbols() -> HashMap<String, Vec<char>> {
    let lib = cpp::path();
    let out = std::process::Command::new("nm").arg(&lib).output().expect("nm (binutils) must be installed");
    assert!(out.status.success(), "nm {}: {}", lib.display(), String::from_utf8_lossy(&out.stderr));
    let mut m: HashMap<String, Vec<char>> = HashMap::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let f: Vec<&str> = line.split_whitespace().collect();
        let (ty, name) = match f.as_slice() {
            [_, ty, name] | [ty, name] if ty.len() == 1 => (ty.chars().next().unwrap(), *name),
            _ => continue,
        };
        m.entry(name.to_owned()).or_default().push(ty);
    }
    m
}

#[test]
fn spec_symbols_are_defined_text_symbols() {
    let syms = symbols();
    let mut missing = Vec::new();
    for s in EXPORTED {
        match syms.get(*s) {
            Some(types) if types.contains(&'T') => {
                assert_eq!(types.iter().filter(|t| **t == 'T').count(), 1, "{s} is defined more than once: {types:?}");
            }
            other => missing.push(format!("{s}: {other:?}")),
        }
    }
    assert!(missing.is_empty(), "not defined as global text symbols (nm type T): {missing:#?}");
}

#[test]
fn version_functions_give_the_spec_versions() {
    let syms = symbols();
    for s in ["neuron_customop_version", "neuron_ucode_lib_version"] {
        assert!(syms.get(s).is_some_and(|t| t.contains(&'T')), "{s}");
    }
    // SAFETY: both return static NUL-terminated strings.
    let (pkg, ucode) = unsafe {
        (
            std::ffi::CStr::from_ptr(neuroncustomop::ffi::version::neuron_customop_version()),
            std::ffi::CStr::from_ptr(neuroncustomop::ffi::version::neuron_ucode_lib_version()),
        )
    };
    assert_eq!(pkg.to_str().unwrap(), "0.21.2.0");
    assert_eq!(ucode.to_str().unwrap(), "1.21.1.0");
}

#[test]
fn the_op_table_is_left_to_the_kernel() {
    let syms = symbols();
    for s in KERNEL_PROVIDES {
        let types = syms.get(*s).unwrap_or_else(|| panic!("{s} is not referenced"));
        assert!(types.iter().all(|t| *t == 'U'), "{s} must be undefined in the library (the kernel defines it): {types:?}");
    }
}

#[test]
fn the_host_library_does_not_replace_the_c_allocator() {
    // On the device the library provides malloc and friends over its libc
    // heap; a host program linking the staticlib keeps its own.
    let syms = symbols();
    for s in ["malloc", "free", "calloc", "realloc"] {
        assert!(!syms.get(s).is_some_and(|t| t.contains(&'T')), "host staticlib defines {s}");
    }
}
