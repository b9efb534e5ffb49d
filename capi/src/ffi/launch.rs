//! Registration and launch: `register_funcs`, the entry hand-off block and
//! `switch_stack_or_call_wrapper` (SPEC §6, §7).

use crate::binding::with_core;
use core::ffi::{c_char, c_void};
use core::mem::{offset_of, size_of};
use neuron_runtime::stack::{plan, StackPlan, DEFAULT_STACK_SIZE};
use neuron_runtime::Error;
use static_assertions::const_assert_eq;

/// An op's launcher, `<fn>_stack_switch`.
pub type OpFn = unsafe extern "C" fn() -> i32;
/// A generated `<fn>_wrapper`.
pub type WrapperFn = unsafe extern "C" fn();
/// The loader's registration callback: `cb(handle, name, fn)`; non-zero
/// return refuses the op.
pub type RegisterCb = unsafe extern "C" fn(handle: *mut c_void, name: *const c_char, f: OpFn) -> i32;

/// Ops must number fewer than this (reference).
pub const MAX_OPS: i32 = 0x8000;
/// The hand-off block must be at least this long (reference).
pub const MIN_ENTRY_BLOCK: u32 = 36;
/// ABI version of [`EntryBlock`] we define.
pub const ENTRY_ABI_VERSION: u32 = 1;

/// The entry hand-off block the loader passes to [`neuron_entry`]
/// (layout defined here; pointers travel as u64 so the layout is the same
/// for the 32-bit device and a 64-bit host).
#[derive(Clone, Copy, Debug)]
#[repr(C)]
pub struct EntryBlock {
    /// Bytes of the block as the loader built it; below 36 is refused.
    pub size: u32,
    /// [`ENTRY_ABI_VERSION`].
    pub abi_version: u32,
    /// Opaque loader handle passed back to the callback.
    pub handle: u64,
    /// The [`RegisterCb`], as an address.
    pub register_cb: u64,
    /// Loader-defined flags (unused; must be 0).
    pub flags: u32,
    /// Reserved, must be 0.
    pub reserved: [u32; 2],
}

const_assert_eq!(offset_of!(EntryBlock, handle), 8);
const_assert_eq!(offset_of!(EntryBlock, register_cb), 16);
const_assert_eq!(offset_of!(EntryBlock, flags), 24);
const_assert_eq!(offset_of!(EntryBlock, reserved) + 8, MIN_ENTRY_BLOCK as usize);
const_assert_eq!(size_of::<EntryBlock>(), 40);

unsafe extern "C" {
    /// Generated with the kernel: how many ops.
    fn get_func_cnt() -> i32;
    /// Generated: the name of op `i`.
    fn get_func_name(i: i32) -> *const c_char;
    /// Generated: the launcher of op `i`.
    fn get_func_ptr(i: i32) -> Option<unsafe extern "C" fn() -> i32>;
}

/// The kernel's op table, as the generated functions describe it.
#[derive(Clone, Copy)]
pub struct OpTable {
    /// `get_func_cnt`.
    pub count: unsafe extern "C" fn() -> i32,
    /// `get_func_name`.
    pub name: unsafe extern "C" fn(i32) -> *const c_char,
    /// `get_func_ptr`.
    pub ptr: unsafe extern "C" fn(i32) -> Option<OpFn>,
}

impl OpTable {
    /// The table the kernel image links in.
    pub fn linked() -> Self {
        Self { count: get_func_cnt, name: get_func_name, ptr: get_func_ptr }
    }

    /// Walks the table and registers every op through `cb`. Returns the
    /// number registered.
    ///
    /// # Safety
    /// The table's functions and `cb` must be sound to call as declared.
    pub unsafe fn register(&self, handle: *mut c_void, cb: RegisterCb) -> Result<i32, Error> {
        // SAFETY: the caller vouches for the table.
        let n = unsafe { (self.count)() };
        if !(0..MAX_OPS).contains(&n) {
            return Err(Error::TooManyOps);
        }
        for i in 0..n {
            // SAFETY: i is in 0..count.
            let (name, f) = unsafe { ((self.name)(i), (self.ptr)(i)) };
            let Some(f) = f.filter(|_| !name.is_null()) else {
                return Err(Error::WrongArgKind);
            };
            // SAFETY: the caller vouches for cb.
            if unsafe { cb(handle, name, f) } != 0 {
                return Err(Error::AbiMismatch);
            }
        }
        Ok(n)
    }
}

/// `register_funcs(handle, cb)`: registers every op of the kernel's
/// generated table. Returns the op count, or -1 (`TooManyOps` when the
/// count is not below 0x8000).
///
/// # Safety
/// `cb` must be a valid callback; the generated table must be linked.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn register_funcs(handle: *mut c_void, cb: RegisterCb) -> i32 {
    // SAFETY: forwarded from the caller.
    record(unsafe { OpTable::linked().register(handle, cb) })
}

/// The library's entry: checks the hand-off block (at least 36 bytes,
/// else `FAILURE_ABI_MISMATCH`), then registers the ops. Returns the op
/// count or -1.
///
/// # Safety
/// `block` must be null (refused) or point to `block.size` readable bytes
/// laid out as [`EntryBlock`] (at least its first 36).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn neuron_entry(block: *const EntryBlock) -> i32 {
    // SAFETY: forwarded from the caller.
    record(unsafe { check_entry(block) }.and_then(|(h, cb)| {
        // SAFETY: as above; cb was checked non-null.
        unsafe { OpTable::linked().register(h, cb) }
    }))
}

/// Validates a hand-off block; returns the handle and callback.
///
/// # Safety
/// As for [`neuron_entry`].
pub unsafe fn check_entry(block: *const EntryBlock) -> Result<(*mut c_void, RegisterCb), Error> {
    if block.is_null() {
        return Err(Error::AbiMismatch);
    }
    // SAFETY: the first field is readable in any block the caller passes.
    let size = unsafe { core::ptr::addr_of!((*block).size).read_unaligned() };
    if size < MIN_ENTRY_BLOCK {
        return Err(Error::AbiMismatch);
    }
    // SAFETY: size >= 36 covers every field we read (reserved ends at 36).
    let b = unsafe { block.read_unaligned() };
    if b.abi_version != ENTRY_ABI_VERSION || b.register_cb == 0 {
        return Err(Error::AbiMismatch);
    }
    // SAFETY: a non-zero callback address from the loader is a RegisterCb.
    let cb: RegisterCb = unsafe { core::mem::transmute::<usize, RegisterCb>(b.register_cb as usize) };
    Ok((b.handle as usize as *mut c_void, cb))
}

fn record(r: Result<i32, Error>) -> i32 {
    match r {
        Ok(n) => n,
        Err(e) => {
            let _ = with_core(|_| Err::<(), _>(e));
            -1
        }
    }
}

/// `switch_stack_or_call_wrapper(wrapper, stack_size)`: runs the init
/// prologue, then calls `wrapper` on the current stack when
/// `SP - ISL >= stack_size` (0 means the default 4196), else on a fresh
/// HBM stack of up to 4 MiB, which it frees afterwards. Returns 0. With
/// no HBM stack available it aborts (the library's one abort).
///
/// # Safety
/// `wrapper` must be a valid function; it runs with the calling core
/// bound, as a generated `<fn>_wrapper`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn switch_stack_or_call_wrapper(wrapper: Option<unsafe extern "C" fn()>, stack_size: u32) -> i32 {
    let Some(wrapper) = wrapper else {
        return record(Err(Error::WrongArgKind));
    };
    let need = if stack_size == 0 { DEFAULT_STACK_SIZE } else { stack_size };
    let decided = decide(need);
    match decided {
        Ok(None) => {
            // SAFETY: the caller vouches for wrapper.
            crate::trace::on_kernel_stack!(0, need, unsafe { wrapper() });
            0
        }
        Ok(Some(stack)) => {
            // SAFETY: the stack was just allocated for this call and is
            // mapped through the pinned window; the caller vouches for wrapper.
            crate::trace::on_kernel_stack!(stack.top, need, unsafe { crate::switch::run_on(stack, wrapper) });
            let _ = with_core(|b| b.state.free_hbm_stack(stack));
            0
        }
        Err(e @ (Error::NoHbmStack | Error::StackTooLarge)) => crate::abort::abort_with(e, "switch_stack_or_call_wrapper", core::panic::Location::caller()),
        Err(e) => record(Err(e)),
    }
}

/// The launcher's decision: the init prologue, then run on the current
/// stack (`None`) or on this HBM stack. Not inlined, so that the
/// launcher's own frame, which stays under the whole custom-op path, is
/// small.
#[inline(never)]
fn decide(need: u32) -> Result<Option<neuron_runtime::stack::HbmStack>, Error> {
    with_core(|b| {
        b.state.init_prologue();
        let sp = neuron_hal::Hal::stack_pointer(b.state.hal());
        #[cfg(not(target_arch = "xtensa"))]
        {
            b.launch_stack = (need, sp);
        }
        let isl = neuron_hal::Hal::stack_limit(b.state.hal());
        let p = plan(sp, isl, need)?;
        match p {
            StackPlan::Current => Ok(None),
            StackPlan::Switch { bytes } => b.state.alloc_hbm_stack(bytes, crate::switch::MIN_HBM_STACK.max(need)).map(Some),
        }
    })
}
