//! The loader's side of an invocation, as a test harness on QEMU: tensors
//! and the invocation block are placed in HBM inside hbm_scratch (the only
//! HBM QEMU backs with memory), in the part of it the Q7 keeps for code
//! windows, which QEMU images do not use; registration goes through
//! `register_funcs` with a callback that records each op.

use core::ffi::{c_char, c_void, CStr};
use neuroncustomop::hal::platform::{qemu, CODE_REGION_SIZE};
use neuroncustomop::hal::QEMU;
use neuroncustomop::runtime::marshal::descriptor::{Location, RawTensorDesc};
use neuroncustomop::runtime::marshal::invocation::{ArgKind, InvocationBuilder};

/// Start of the loader's HBM area (SoC): the second half of the code region.
pub const AREA_SOC: u64 = QEMU.scratch_soc_base + CODE_REGION_SIZE / 2;
/// Bytes of the loader's area.
pub const AREA_BYTES: u64 = CODE_REGION_SIZE / 2;

/// Where the core reaches SoC `soc` (inside hbm_scratch).
pub fn nx(soc: u64) -> *mut u8 {
    debug_assert!(soc >= QEMU.scratch_soc_base);
    (qemu::SCRATCH_NX as u64 + (soc - QEMU.scratch_soc_base)) as usize as *mut u8
}

/// A bump allocator over a part of the loader's area.
pub struct Bump {
    next: u64,
    end: u64,
}

impl Bump {
    /// Over `[AREA_SOC + off, AREA_SOC + off + len)`.
    pub const fn new(off: u64, len: u64) -> Self {
        assert!(off + len <= AREA_BYTES);
        Self { next: AREA_SOC + off, end: AREA_SOC + off + len }
    }

    /// `bytes` of HBM, 64-byte aligned; panics when the area is full.
    pub fn alloc(&mut self, bytes: u64) -> u64 {
        let at = (self.next + 63) & !63;
        assert!(at + bytes <= self.end, "loader area full");
        self.next = at + bytes;
        at
    }

    /// Places f32 `data` as a 1-D tensor; returns its descriptor.
    pub fn f32_tensor(&mut self, n: u64, f: impl Fn(u64) -> f32) -> RawTensorDesc {
        let soc = self.alloc(n * 4);
        let p = nx(soc).cast::<f32>();
        for i in 0..n {
            // SAFETY: `soc..soc+4n` was just allocated in hbm_scratch,
            // which is RAM on QEMU; 64-byte aligned.
            unsafe { p.add(i as usize).write_volatile(f(i)) };
        }
        RawTensorDesc::contiguous(Location::Hbm, 12, soc, &[n]).expect("valid f32 shape")
    }

    /// An uninitialised f32 tensor of `n` elements (the output).
    pub fn f32_output(&mut self, n: u64) -> RawTensorDesc {
        let soc = self.alloc(n * 4);
        RawTensorDesc::contiguous(Location::Hbm, 12, soc, &[n]).expect("valid f32 shape")
    }

    /// Builds the block and copies it to HBM; returns its SoC address.
    pub fn block(&mut self, b: &mut InvocationBuilder) -> u64 {
        let bytes = b.build();
        let soc = self.alloc(bytes.len() as u64);
        // SAFETY: freshly allocated, RAM on QEMU, `bytes.len()` long.
        unsafe { core::ptr::copy_nonoverlapping(bytes.as_ptr(), nx(soc), bytes.len()) };
        soc
    }
}

/// The axpy invocation `(a, b, alpha) -> out`.
pub fn axpy_block(bump: &mut Bump, a: RawTensorDesc, b: RawTensorDesc, alpha: f32, out: RawTensorDesc) -> u64 {
    let alpha_t = bump.f32_tensor(1, |_| alpha);
    let mut ib = InvocationBuilder::new();
    ib.arg(ArgKind::Tensor, a).expect("arg");
    ib.arg(ArgKind::Tensor, b).expect("arg");
    ib.arg(ArgKind::Float, alpha_t).expect("arg");
    ib.output(out);
    bump.block(&mut ib)
}

/// Reads f32 element `i` of a tensor at SoC `soc`.
pub fn read_f32(soc: u64, i: u64) -> f32 {
    // SAFETY: the caller names a tensor the loader placed in hbm_scratch.
    unsafe { nx(soc + 4 * i).cast::<f32>().read_volatile() }
}

pub type OpFn = unsafe extern "C" fn() -> i32;
type RegisterCb = unsafe extern "C" fn(*mut c_void, *const c_char, OpFn) -> i32;

unsafe extern "C" {
    fn register_funcs(handle: *mut c_void, cb: RegisterCb) -> i32;
}

/// What registration recorded.
pub struct Registry {
    pub names: [[u8; 32]; 4],
    pub fns: [Option<OpFn>; 4],
    pub count: usize,
}

unsafe extern "C" fn record(handle: *mut c_void, name: *const c_char, f: OpFn) -> i32 {
    // SAFETY: `handle` is the &mut Registry `register` passed; `name` is a
    // NUL-terminated string from the op table.
    let (r, name) = unsafe { (&mut *handle.cast::<Registry>(), CStr::from_ptr(name).to_bytes()) };
    if r.count == r.fns.len() || name.len() >= 32 {
        return 1;
    }
    r.names[r.count][..name.len()].copy_from_slice(name);
    r.fns[r.count] = Some(f);
    r.count += 1;
    0
}

impl Registry {
    /// `register_funcs` through the C ABI; returns the registry and the
    /// count it returned.
    pub fn register() -> (Self, i32) {
        let mut r = Registry { names: [[0; 32]; 4], fns: [None; 4], count: 0 };
        // SAFETY: `record` matches the callback type; `r` outlives the call.
        let n = unsafe { register_funcs((&mut r as *mut Registry).cast(), record) };
        (r, n)
    }

    /// The launcher registered under `name`.
    pub fn find(&self, name: &str) -> Option<OpFn> {
        (0..self.count).find(|&i| &self.names[i][..name.len()] == name.as_bytes() && self.names[i][name.len()] == 0).and_then(|i| self.fns[i])
    }
}
