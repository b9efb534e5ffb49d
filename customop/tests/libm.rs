//! The C math library of a kernel on the simulator: `customop build`
//! binds a kernel's `expf`, `logf`, `powf`, ... to the device's libm
//! (`neuron-libm`, a port of musl's) inside the kernel's shared object, so
//! the simulator computes the device's bits, not the host's glibc's; and
//! nothing of it is exported for the rest of the process. (The same kernel
//! on the emulated device, `--on both`: `device_qemu.rs`.)

mod common;
use common::*;
use neuron_libm::elementary::expf;
use object::{Object, ObjectSymbol};
use std::collections::HashMap;

/// The symbol tables of the built kernel library: (name -> (address,
/// global), the dynamic symbols' names).
fn symbols(so: &std::path::Path) -> (HashMap<String, (u64, bool)>, Vec<String>) {
    let bytes = std::fs::read(so).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let defined = file.symbols().filter(|s| s.is_definition()).filter_map(|s| Some((s.name().ok()?.to_string(), (s.address(), s.is_global())))).collect();
    let dynamic = file.dynamic_symbols().filter_map(|s| s.name().ok().map(str::to_string)).collect();
    (defined, dynamic)
}

/// The kernel's shared object defines every C math name itself, at the
/// address of the device libm's function, as a local symbol; it neither
/// imports one from the host's libm.so.6 nor exports one (`nm -D` shows
/// none), so neither the kernel's calls reach glibc nor does the loading
/// process see an `expf` of ours.
#[test]
fn a_kernel_binds_the_math_names_to_the_device_libm_inside_its_object() {
    let so = built("libm", &[]).join("liblibm.so");
    let (defined, dynamic) = symbols(&so);
    let names: Vec<&str> = neuron_libm::host_names().collect();
    assert!(names.len() > 100, "{names:?}");
    for n in &names {
        assert!(!dynamic.iter().any(|d| d == n), "{n} is in the dynamic symbol table of {} (imported or exported)", so.display());
        let ours = defined.get(&format!("{}{n}", neuron_libm::HOST_PREFIX));
        let (at, global) = *defined.get(*n).unwrap_or_else(|| panic!("{n} is not defined in {}", so.display()));
        assert_eq!(Some(at), ours.map(|o| o.0), "{n} is not neuron-libm's");
        assert!(!global, "{n} is a global symbol of {}", so.display());
    }
    assert!(!dynamic.iter().any(|d| d.starts_with(neuron_libm::HOST_PREFIX)), "{dynamic:?}");
}

fn bits(v: &[f32]) -> Vec<u32> {
    v.iter().map(|f| f.to_bits()).collect()
}

/// Inputs whose `expf` differs between the host's libm (`f32::exp` is
/// glibc's here) and the device's: the simulator gives the device's bits
/// for every one, so a kernel bound to glibc again fails here.
#[test]
fn the_simulators_expf_is_the_device_libms_where_glibc_differs() {
    let differ: Vec<f32> = values(400_000, -87.0, 88.0, 71).into_iter().filter(|&x| x.exp().to_bits() != expf(x).to_bits()).take(2000).collect();
    assert!(differ.len() >= 200, "only {} inputs where glibc's expf differs from musl's", differ.len());
    let dir = built("libm", &[]);
    let xs = npy_file("differ.npy", &f32s(&[differ.len() as u64], &differ)).display().to_string();
    let (out, _) = run_op(&dir, "exp_each", &[&xs], 1, "differ");
    let got = out.to_f32();
    assert_eq!(bits(&got), differ.iter().map(|&x| expf(x).to_bits()).collect::<Vec<_>>());
    let glibc = differ.iter().map(|x| x.exp().to_bits()).collect::<Vec<_>>();
    assert!(bits(&got).iter().zip(&glibc).all(|(g, h)| g != h));
}

/// The softmax and the elementwise functions on the simulator give the
/// device libm's bits (the references replay the kernel's arithmetic).
#[test]
fn softmax_and_elementwise_functions_give_the_device_libms_bits() {
    let dir = built("libm", &[]);
    let (r, c) = (16u64, 1024u64);
    let x = values((r * c) as usize, -8.0, 8.0, 72);
    let xs = npy_file("softmax.npy", &f32s(&[r, c], &x)).display().to_string();
    let (out, _) = run_op(&dir, "row_softmax", &[&xs], 1, "softmax");
    assert_eq!(bits(&out.to_f32()), bits(&libm_softmax_rows(&x, c as usize)));
    let y = values(3000, -6.0, 6.0, 73);
    let ys = npy_file("mix.npy", &f32s(&[3000], &y)).display().to_string();
    let (out, _) = run_op(&dir, "math_mix", &[&ys], 1, "mix");
    assert_eq!(bits(&out.to_f32()), bits(&y.iter().map(|&v| libm_math_mix(v)).collect::<Vec<_>>()));
}
