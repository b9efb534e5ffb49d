//! Translate address sequences on a mock core, against a model of the
//! five records (SPEC §3).
//!
//! Each step builds an address from a class byte (anywhere in 64 bits,
//! above 2^57, around the ends of HBM, in hbm_scratch, in SBUF and just
//! past it, near a previous address) and translates it. The model says
//! whether it must hit a record, miss and take the round-robin victim,
//! or be refused. Checked: the error is `AddressUnmapped` exactly when
//! the address is in no region a window can show; a success is the
//! record's `window + (addr & !mask)`; only a miss writes a window
//! register; and the pointer really shows that SoC byte (a marker
//! written through the SoC side is read back through it).

use crate::input::Input;
use neuron_hal::platform::{DYNAMIC_WINDOWS, DYNAMIC_WINDOW_SIZE, PINNED_WINDOW_SIZE};
use neuron_hal::Hal;
use neuron_hal_mock::{MockCore, MockSoc};
use neuron_runtime::translate::{SBUF_RECORD, SCRATCH_RECORD};
use neuron_runtime::{CoreState, Error};
use std::cell::RefCell;
use std::sync::Arc;

const MAX_STEPS: usize = 256;

struct Fixture {
    soc: Arc<MockSoc>,
    state: Box<CoreState<MockCore>>,
    runs: u32,
}

thread_local! {
    static FIX: RefCell<Option<Fixture>> = const { RefCell::new(None) };
}

fn fresh() -> Fixture {
    let soc = MockSoc::new().expect("mock SoC");
    let mut state = Box::new(CoreState::new(soc.core(0).expect("mock core")));
    state.init_prologue();
    Fixture { soc, state, runs: 0 }
}

/// The model: which record (if any) a hit uses, else whether the address
/// is mappable at all.
enum Expect {
    Hit(usize),
    Miss,
    Refused,
}

pub fn run(data: &[u8]) {
    FIX.with(|f| {
        let mut f = f.borrow_mut();
        // A fresh SoC now and then bounds the memory the markers commit.
        if f.as_ref().is_none_or(|x| x.runs >= 512) {
            *f = Some(fresh());
        }
        let fx = f.as_mut().unwrap();
        fx.runs += 1;
        steps(fx, data);
    })
}

fn steps(fx: &mut Fixture, data: &[u8]) {
    let p = *fx.state.hal().platform();
    let hbm_end = p.hbm_soc_base + p.hbm_size;
    let sbuf_end = p.sbuf_soc_base + p.sbuf_size;
    let mut inp = Input::new(data);
    let mut prev = p.hbm_soc_base + (1 << 30);
    let mut n = 0;
    while !inp.is_empty() && n < MAX_STEPS {
        n += 1;
        let class = inp.u8();
        let r = inp.u64();
        let addr = match class % 10 {
            0 => r,
            1 => (1u64 << 57) | r,
            2 => p.hbm_soc_base.wrapping_add(r % p.hbm_size),
            3 => hbm_end.wrapping_sub(1 + r % (64 << 20)),
            4 => hbm_end.wrapping_add(r % (64 << 20)),
            5 => p.scratch_soc_base + r % PINNED_WINDOW_SIZE,
            6 => p.sbuf_soc_base + r % PINNED_WINDOW_SIZE,
            7 => p.hbm_soc_base.wrapping_sub(1 + r % (64 << 20)),
            8 => prev.wrapping_add(r % (4 * DYNAMIC_WINDOW_SIZE)),
            _ => p.hbm_soc_base + (1 << 30) + (r % 6) * DYNAMIC_WINDOW_SIZE + (r >> 40) % DYNAMIC_WINDOW_SIZE,
        };
        prev = addr;
        let ctx = *fx.state.translator().ctx();
        let in_hbm = p.is_hbm(addr);
        let in_sbuf = addr >= p.sbuf_soc_base && addr < sbuf_end;
        let expect = match ctx.lookup(addr) {
            // A pinned record may only hit for bytes that exist behind it.
            Some((i, _)) if i == SBUF_RECORD && !in_sbuf => Expect::Refused,
            Some((i, _)) => Expect::Hit(i),
            None if in_hbm => Expect::Miss,
            None => Expect::Refused,
        };
        let programs = fx.state.hal().counters().total_window_programs();
        let victim = (ctx.next_alloc as usize) % DYNAMIC_WINDOWS;
        let got = fx.state.translate(addr);
        let programs_now = fx.state.hal().counters().total_window_programs();
        let rec = match expect {
            Expect::Refused => {
                assert_eq!(got, Err(Error::AddressUnmapped), "address {addr:#x} must be refused");
                assert_eq!(programs_now, programs, "a refused address programmed a window");
                assert_eq!(*fx.state.translator().ctx(), ctx, "a refused address changed the context");
                continue;
            }
            Expect::Hit(i) => {
                assert_eq!(programs_now, programs, "a hit programmed a window");
                assert_eq!(*fx.state.translator().ctx(), ctx, "a hit changed the context");
                i
            }
            Expect::Miss => {
                assert_eq!(programs_now, programs + 1, "a miss must program exactly one window");
                let c = fx.state.translator().ctx();
                assert_eq!(c.records[victim].ptr, addr & !(DYNAMIC_WINDOW_SIZE - 1), "miss installed the wrong region");
                assert_eq!(c.next_alloc as usize, (victim + 1) % DYNAMIC_WINDOWS, "round robin");
                assert_eq!(c.records[SBUF_RECORD], ctx.records[SBUF_RECORD]);
                assert_eq!(c.records[SCRATCH_RECORD], ctx.records[SCRATCH_RECORD]);
                victim
            }
        };
        let ptr = got.unwrap_or_else(|e| panic!("address {addr:#x}: {e:?}"));
        let r = fx.state.translator().ctx().records[rec];
        assert_eq!(ptr as usize as u64, r.window + (addr & !r.mask), "pointer arithmetic");
        // The pointer shows the SoC byte: write a marker on the SoC side,
        // read it through the window.
        let marker = [class ^ 0x5A];
        // SAFETY: the harness's core is idle while it places its bytes.
        unsafe { fx.soc.write(addr, &marker) }.expect("SoC write");
        // SAFETY: the translate mapped this byte's region (checked above
        // against the model); no other translate runs before the read.
        let seen = unsafe { ptr.read_volatile() };
        assert_eq!(seen, marker[0], "window shows the wrong byte for {addr:#x}");
    }
}
