//! The init functions of SPEC §7 (each safe to call again).

use crate::binding::with_core;

/// `init_neuron_hbm_allocator`.
#[unsafe(no_mangle)]
pub extern "C" fn init_neuron_hbm_allocator() {
    let _ = with_core(|b| {
        b.state.init_hbm_allocator();
        Ok(())
    });
}

/// `init_neuron_dataram_allocator`.
#[unsafe(no_mangle)]
pub extern "C" fn init_neuron_dataram_allocator() {
    let _ = with_core(|b| {
        b.state.init_dataram_allocator();
        Ok(())
    });
}

/// `_init_libc_heap_allocator`.
#[unsafe(no_mangle)]
pub extern "C" fn _init_libc_heap_allocator() {
    let _ = with_core(|b| {
        b.state.init_libc_heap();
        Ok(())
    });
}

/// `_init_translate_ctx`.
#[unsafe(no_mangle)]
pub extern "C" fn _init_translate_ctx() {
    let _ = with_core(|b| {
        b.state.init_translate_ctx();
        Ok(())
    });
}

/// The whole init prologue (heaps with the default malloc forced during
/// init, then the translate context).
#[unsafe(no_mangle)]
pub extern "C" fn neuron_runtime_init() {
    let _ = with_core(|b| {
        b.state.init_prologue();
        Ok(())
    });
}
