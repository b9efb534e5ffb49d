//! The loader and reporter (see the crate documentation for the protocol).

use core::ffi::{c_char, c_void, CStr};
use core::fmt::Write;
use core::sync::atomic::{AtomicU32, Ordering};
use neuroncustomop::hal::platform::{qemu, CODE_REGION_SIZE};
use neuroncustomop::hal::xtensa::trace;
use neuroncustomop::hal::QEMU;
use q7_qemu_board as board;

/// SoC address of the loader area: the second half of the code region of
/// hbm_scratch, which QEMU images do not use (the image lives in sysram).
const AREA_SOC: u64 = QEMU.scratch_soc_base + CODE_REGION_SIZE / 2;
const AREA_BYTES: u64 = CODE_REGION_SIZE / 2;
const MAGIC: &[u8; 4] = b"CQ01";
const NAME_AT: usize = 32;
const NAME_LEN: usize = 64;
/// Output bytes per `customop-out` line.
const OUT_CHUNK: usize = 256;

static FINISHED: AtomicU32 = AtomicU32::new(0);

type OpFn = unsafe extern "C" fn() -> i32;
type RegisterCb = unsafe extern "C" fn(*mut c_void, *const c_char, OpFn) -> i32;

unsafe extern "C" {
    fn register_funcs(handle: *mut c_void, cb: RegisterCb) -> i32;
    fn customop_status() -> i32;
    fn neuron_last_error() -> i32;
    fn neuron_first_unhandled_error() -> i32;
}

/// Where the core reaches SoC `soc` of hbm_scratch.
fn nx(soc: u64) -> *const u8 {
    (qemu::SCRATCH_NX as u64 + (soc - QEMU.scratch_soc_base)) as usize as *const u8
}

fn area() -> &'static [u8] {
    // SAFETY: the loader area is RAM inside hbm_scratch that nothing in the
    // image allocates; QEMU filled it before the cores started and the run
    // only reads the header through this slice (the kernel writes the
    // output, which is read volatile below, not through this slice).
    unsafe { core::slice::from_raw_parts(nx(AREA_SOC), 128) }
}

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut w = [0u8; 8];
    w.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(w)
}

/// The op the registration is looking for, and the launcher once found.
struct Wanted<'a> {
    name: &'a [u8],
    found: Option<OpFn>,
}

unsafe extern "C" fn record(handle: *mut c_void, name: *const c_char, f: OpFn) -> i32 {
    // SAFETY: `handle` is the `&mut Wanted` that `launcher` passes and
    // `name` a NUL-terminated name from the kernel's op table.
    let (w, name) = unsafe { (&mut *handle.cast::<Wanted>(), CStr::from_ptr(name).to_bytes()) };
    if name == w.name {
        w.found = Some(f);
    }
    0
}

fn launcher(name: &[u8]) -> (Option<OpFn>, i32) {
    let mut w = Wanted { name, found: None };
    // SAFETY: `record` has the callback's type; `w` outlives the call.
    let n = unsafe { register_funcs((&mut w as *mut Wanted).cast(), record) };
    (w.found, n)
}

/// Prints this core's flushed printf entries, one line each.
fn print_ring(cpu: u32) {
    neuroncustomop::device::with_state(|s| {
        let d = s.printf_ring().drain(|entry| {
            let text = core::str::from_utf8(entry).unwrap_or("<not UTF-8>");
            for line in text.split('\n').filter(|l| !l.is_empty()) {
                // One write per line, prefix included (the board's console
                // splits lines longer than its buffer, and a continuation
                // without the prefix would be lost to the host's parser).
                let mut buf = [0u8; 320];
                let mut c = Cursor { buf: &mut buf, len: 0 };
                let _ = write!(c, "customop-printf {cpu}: ");
                let room = c.buf.len() - c.len - 1;
                let _ = c.write_str(&line[..floor_char_boundary(line, room)]);
                let _ = c.write_str("\n");
                let n = c.len;
                board::semihosting::write(1, &buf[..n]);
            }
        });
        if d.lost > 0 {
            board::println!("customop-printf-lost {cpu}: {}", d.lost);
        }
    });
}

/// The largest char boundary of `s` at most `max`.
fn floor_char_boundary(s: &str, max: usize) -> usize {
    let mut i = max.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn dump_output(out_soc: u64, bytes: u64) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut line = [0u8; 32 + 2 * OUT_CHUNK];
    let mut off = 0u64;
    while off < bytes {
        let k = (bytes - off).min(OUT_CHUNK as u64) as usize;
        let mut c = Cursor { buf: &mut line, len: 0 };
        let _ = write!(c, "customop-out {off} ");
        let mut len = c.len;
        for i in 0..k {
            // SAFETY: the output tensor lies in the loader area (the host
            // placed it there and checked it fits); read volatile because
            // the kernel on other cores wrote it.
            let b = unsafe { nx(out_soc + off + i as u64).read_volatile() };
            line[len] = HEX[(b >> 4) as usize];
            line[len + 1] = HEX[(b & 15) as usize];
            len += 2;
        }
        line[len] = b'\n';
        board::semihosting::write(1, &line[..len + 1]);
        off += k as u64;
    }
}

struct Cursor<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Write for Cursor<'_> {
    fn write_str(&mut self, s: &str) -> core::fmt::Result {
        let b = s.as_bytes();
        let end = self.len + b.len();
        if end > self.buf.len() {
            return Err(core::fmt::Error);
        }
        self.buf[self.len..end].copy_from_slice(b);
        self.len = end;
        Ok(())
    }
}

/// The board's entry, on every core.
#[unsafe(no_mangle)]
pub extern "C" fn q7_board_main(cpu: u32) -> u32 {
    // SAFETY: the board's on-core stack of `cpu` starts there; this
    // entry runs on it.
    unsafe { neuroncustomop::device::set_stack_limit(board::stack_bounds(cpu).0) };
    let h = area();
    if &h[..4] != MAGIC {
        board::println!("customop-error {cpu}: no invocation at the loader area (QEMU was not given the blob)");
        return 1;
    }
    let (block, out, out_bytes) = (u64_at(h, 8), u64_at(h, 16), u64_at(h, 24));
    let name_field = &h[NAME_AT..NAME_AT + NAME_LEN];
    let name = &name_field[..name_field.iter().position(|&c| c == 0).unwrap_or(NAME_LEN)];
    if out < AREA_SOC || out + out_bytes > AREA_SOC + AREA_BYTES || block < AREA_SOC || block >= AREA_SOC + AREA_BYTES {
        board::println!("customop-error {cpu}: the invocation's addresses are outside the loader area");
        return 1;
    }
    neuroncustomop::device::post_invocation(block);
    let (f, count) = launcher(name);
    let Some(f) = f else {
        board::println!("customop-error {cpu}: op {} not in the op table (register_funcs = {count})", core::str::from_utf8(name).unwrap_or("?"));
        return 1;
    };
    // The checking plugin watches the kernel's loads and stores between
    // these two events (the runner's own reads of the output are not).
    trace::event(trace::kind::RUN_START, block as u32, 0, 0);
    // SAFETY: a launcher of the kernel's op table, called as the loader
    // calls it, with this core's invocation posted.
    let rc = unsafe { f() };
    trace::event(trace::kind::RUN_END, 0, 0, 0);
    // SAFETY: plain C accessors of the library, on this core.
    let (status, last, unhandled) = unsafe { (customop_status(), neuron_last_error(), neuron_first_unhandled_error()) };
    // As the simulator's verdict: an error the kernel went on past (a
    // refused accessor, say) fails the run even when the marshalling
    // status is clean.
    let status = if status == 0 { unhandled } else { status };
    board::println!("customop-core {cpu}: returned {rc} status {status} last_error {last}");
    print_ring(cpu);
    FINISHED.fetch_add(1, Ordering::AcqRel);
    if cpu == 0 {
        while FINISHED.load(Ordering::Acquire) < board::cpu_count() {
            core::hint::spin_loop();
        }
        dump_output(out, out_bytes);
        board::println!("customop-done");
    }
    0
}
