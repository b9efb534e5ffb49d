//! The Rust relu examples (`examples/rust/relu.rs`) on the simulator:
//! the per-element form on 1 core, the TCM form on 8 cores with
//! numel % 8 != 0, both against a reference; the TCM form moves every
//! byte once by DMA and never touches a dynamic window.

// Linked for its op table (`custom_ops!`), never named otherwise.
extern crate relu_example;

use neuroncustomop::host::Simulator;
use neuroncustomop::kernel::Dtype;

fn run(op: &str, cores: u32, n: usize) -> neuroncustomop::host::RunReport {
    let mut sim = Simulator::new().unwrap();
    assert_eq!(sim.register_linked().unwrap(), 2);
    let x: Vec<f32> = (0..n).map(|i| ((i % 97) as f32 - 48.0) * 0.5).collect();
    let bytes: Vec<u8> = x.iter().flat_map(|v| v.to_le_bytes()).collect();
    sim.arg_tensor(Dtype::Fp32, &[n as u64], &bytes).unwrap();
    sim.set_output(Dtype::Fp32, &[n as u64]).unwrap();
    let rep = sim.run(op, cores).unwrap();
    assert!(rep.ok(), "{rep:?}");
    let got: Vec<f32> = sim.read_output().unwrap().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    for i in 0..n {
        assert_eq!(got[i], x[i].max(0.0), "{op}: element {i}");
    }
    rep
}

#[test]
fn relu_per_element_on_one_core() {
    let rep = run("relu", 1, 1000);
    let c = &rep.cores[0];
    let translates = c.translate.hits.iter().sum::<u64>() + c.translate.misses.iter().sum::<u64>();
    assert_eq!(translates, 2000, "one translate per element access: {:?}", c.translate);
}

#[test]
fn relu_tcm_on_eight_cores() {
    let n = 8 * 1500 + 3;
    let rep = run("relu_tcm", 8, n);
    let out: u64 = rep.cores.iter().map(|c| c.dma_out).sum();
    assert_eq!(out, n as u64 * 4, "every output byte written once by DMA");
    assert!(rep.cores.iter().all(|c| c.translate.misses.iter().sum::<u64>() == 0), "no dynamic window touched");
}
