//! The invocation block, the descriptors and the argument readers of a
//! `CoreState` on a mock core, fed arbitrary bytes.
//!
//! Input: byte 0 picks how the block is bound (bytes in core memory, or
//! a SoC address read with one of the three memcpy methods) and byte 1..3
//! a script of reader calls; the rest is the block. Checked against an
//! independent reading of `docs/abi.md` (the reference gates below):
//! `setup` accepts exactly the headers the reference accepts, with its
//! error; every reader accepts exactly what the reference accepts for
//! that argument (kind, then the descriptor gates), a failing reader does
//! not advance the cursor, a tensor view has the shape, contiguous
//! strides and byte count of its descriptor; `get_dst_tensor` validates
//! the output descriptor; a return of the wrong dtype is refused; and
//! `cleanup` reports an unwritten output.

use crate::input::Input;
use neuron_hal::platform::Platform;
use neuron_hal::Hal;
use neuron_hal_mock::{MockCore, MockSoc};
use neuron_runtime::marshal::descriptor::DESC_BYTES;
use neuron_runtime::marshal::invocation::{desc_offset, ArgKind, HEADER_BYTES};
use neuron_runtime::marshal::{BlockSource, TensorView};
use neuron_runtime::{CoreState, Error};
use std::cell::RefCell;
use std::sync::Arc;

/// Where a block given by SoC address is placed.
const BLOCK_AT: u64 = neuron_hal::platform::Q7.hbm_soc_base + (2 << 30);
/// Largest output a return copies (keeps an execution short).
const MAX_RETURN_BYTES: u64 = 64 << 10;

struct Fixture {
    soc: Arc<MockSoc>,
    state: Box<CoreState<MockCore>>,
}

thread_local! {
    static FIX: RefCell<Option<Fixture>> = const { RefCell::new(None) };
}

fn fresh() -> Fixture {
    let soc = MockSoc::new().expect("mock SoC");
    let mut state = Box::new(CoreState::new(soc.core(0).expect("mock core")));
    state.init_prologue();
    Fixture { soc, state }
}

// ---- the reference gates (docs/abi.md §1 and §3, written independently) ----

fn ref_header(b: &[u8]) -> Result<(usize, [u8; 10]), Error> {
    if b.len() < HEADER_BYTES {
        return Err(Error::BadBlockSize);
    }
    if b[0..4] != *b"NCOP" || b[4] != 1 || b[5] != 0 {
        return Err(Error::BadAbiVersion);
    }
    let argc = b[6] as usize;
    if argc > 10 {
        return Err(Error::TooManyArgs);
    }
    if b[7] != 0 || b[18] != 0 || b[19] != 0 || b[24..32].iter().any(|&x| x != 0) {
        return Err(Error::ReservedNotZero);
    }
    let mut kinds = [0u8; 10];
    kinds.copy_from_slice(&b[8..18]);
    if kinds[argc..].iter().any(|&k| k != 0) {
        return Err(Error::ReservedNotZero);
    }
    if kinds[..argc].iter().any(|&k| !(1..=6).contains(&k)) {
        return Err(Error::BadArgKind);
    }
    let n = 32 + 48 * (argc + 1);
    if u32::from_le_bytes([b[20], b[21], b[22], b[23]]) as usize != n {
        return Err(Error::BadBlockSize);
    }
    Ok((argc, kinds))
}

/// `(addr, numel, elem_size, dtype, sizes)` of a descriptor the gates admit.
#[derive(Debug, PartialEq)]
struct RefDesc {
    addr: u64,
    numel: u64,
    elem: u64,
    dtype: u8,
    sizes: Vec<u64>,
}

fn ref_desc(d: &[u8], p: &Platform) -> Result<RefDesc, Error> {
    let u64at = |at: usize| u64::from_le_bytes(d[at..at + 8].try_into().unwrap());
    if d[5..8].iter().any(|&x| x != 0) || u64at(40) != 0 {
        return Err(Error::ReservedNotZero);
    }
    let (location, shape_type, dtype, num_dim, width) = (d[0], d[1], d[2], d[3] as usize, d[4]);
    if location > 1 || width > 1 || shape_type > 1 {
        return Err(Error::BadDescriptorCode);
    }
    if shape_type == 1 {
        return Err(Error::OutOfLineShape);
    }
    let elem: u64 = match dtype {
        2 | 3 => 1,
        4 | 8 | 10 => 2,
        6 | 12 => 4,
        7 => 8,
        _ => return Err(Error::DtypeNotMarshallable),
    };
    let max = if width == 0 { 8 } else { 4 };
    if num_dim == 0 || num_dim > max {
        return Err(Error::BadRank);
    }
    let entry = |i: usize| -> u64 {
        if width == 0 {
            u16::from_le_bytes([d[16 + 2 * i], d[17 + 2 * i]]) as u64
        } else {
            u32::from_le_bytes(d[16 + 4 * i..20 + 4 * i].try_into().unwrap()) as u64
        }
    };
    if (num_dim..max).any(|i| entry(i) != 0) {
        return Err(Error::ReservedNotZero);
    }
    let sizes: Vec<u64> = (0..num_dim).map(entry).collect();
    if sizes.contains(&0) {
        return Err(Error::BadShape);
    }
    let numel = sizes.iter().try_fold(1u128, |a, &s| a.checked_mul(s as u128)).ok_or(Error::BadShape)?;
    let bytes = numel.saturating_mul(elem as u128);
    if numel > u64::MAX as u128 || bytes > i64::MAX as u128 {
        return Err(Error::BadShape);
    }
    let (numel, bytes) = (numel as u64, bytes as u64);
    let storage = u64at(8);
    if storage == 0 {
        return Err(Error::NullStorage);
    }
    let buffer = u64at(32);
    if buffer == 0 || buffer < bytes {
        return Err(Error::BufferTooSmall);
    }
    let addr = if location == 1 {
        if storage as u128 + bytes as u128 > p.sbuf_size as u128 {
            return Err(Error::AddressUnmapped);
        }
        p.sbuf_soc_base + storage
    } else {
        storage
    };
    Ok(RefDesc { addr, numel, elem, dtype, sizes })
}

fn check_view(v: &TensorView, r: &RefDesc) {
    assert_eq!(v.storage.addr, r.addr);
    assert_eq!(v.numel as u64, r.numel);
    assert_eq!(v.nbytes as u64, r.numel * r.elem);
    assert_eq!(v.dtype, r.dtype);
    assert_eq!(v.num_dim as usize, r.sizes.len());
    assert_eq!(v.elem_size as u64, r.elem);
    let mut stride = 1i64;
    for k in (0..r.sizes.len()).rev() {
        assert_eq!(v.sizes[k] as u64, r.sizes[k]);
        assert_eq!(v.strides[k], stride, "strides are contiguous row-major");
        stride = stride.wrapping_mul(v.sizes[k]);
    }
    assert!(v.sizes[r.sizes.len()..].iter().all(|&s| s == 0));
    assert!(v.strides[r.sizes.len()..].iter().all(|&s| s == 0));
}

/// Whether a value argument's one element can be read: it must lie in HBM
/// or SBUF (the window paths refuse anything else).
fn readable(r: &RefDesc, p: &Platform) -> bool {
    let end = r.addr.checked_add(r.elem);
    let hbm = p.is_hbm(r.addr) && end.is_some_and(|e| p.is_hbm(e - 1));
    let sbuf = r.addr >= p.sbuf_soc_base && end.is_some_and(|e| e <= p.sbuf_soc_base + p.sbuf_size);
    hbm || sbuf
}

pub fn run(data: &[u8]) {
    FIX.with(|f| {
        let mut f = f.borrow_mut();
        // The value reads commit mock HBM pages: start over past 256 MiB.
        if f.as_ref().is_none_or(|x| x.soc.hbm().resident_bytes() > (256 << 20)) {
            *f = Some(fresh());
        }
        one(f.as_mut().unwrap(), data);
    })
}

fn one(fx: &mut Fixture, data: &[u8]) {
    let mut inp = Input::new(data);
    let mode = inp.u8();
    let script = [inp.u8(), inp.u8(), inp.u8()];
    let block = inp.rest();
    let p = *fx.state.hal().platform();
    let s = &mut fx.state;
    let _ = s.cleanup();

    // From SoC memory the runtime reads 560 bytes whatever the block says.
    let mut padded = block.to_vec();
    padded.resize(padded.len().max(560), 0);
    let expect = ref_header(if mode.is_multiple_of(4) { block } else { &padded });
    let got = match mode % 4 {
        0 => s.setup(mode & 0x80 != 0, BlockSource::Bytes(block)),
        m => {
            // Through SoC memory: the block (padded to the largest size)
            // at a fixed HBM address, read with method m - 1.
            let mut b = block.to_vec();
            b.resize(b.len().max(560), 0);
            // SAFETY: the harness's core is idle while it places its bytes.
            unsafe { fx.soc.write(BLOCK_AT, &b[..560]) }.expect("SoC write");
            s.set_memcpy_method(m as u32 - 1).unwrap();
            let r = s.setup(mode & 0x80 != 0, BlockSource::Soc(BLOCK_AT));
            s.set_memcpy_method(2).unwrap();
            r
        }
    };
    let (argc, kinds) = match (expect, got) {
        (Ok((argc, kinds)), Ok(())) => {
            if mode.is_multiple_of(4) && block.len() < 32 + 48 * (argc + 1) {
                // The header is fine but the bytes are too few.
                unreachable!("setup accepted a short block");
            }
            (argc, kinds)
        }
        (Ok((argc, _)), Err(Error::BadBlockSize)) if mode.is_multiple_of(4) && block.len() < 32 + 48 * (argc + 1) => {
            assert!(!s.args().is_bound());
            return;
        }
        (Err(e), Err(g)) => {
            assert_eq!(g, e, "setup error");
            assert!(!s.args().is_bound(), "a refused block stays unbound");
            return;
        }
        (e, g) => panic!("setup: reference {e:?}, runtime {g:?}"),
    };
    assert_eq!(s.args().argc(), argc);
    // The bytes the runtime bound (for SoC mode, those written).
    let mut bound = block.to_vec();
    bound.resize(bound.len().max(560), 0);
    let desc = |i: usize| -> Vec<u8> { bound[desc_offset(i)..desc_offset(i) + DESC_BYTES].to_vec() };

    let mut returned_or_claimed = false;
    let mut last_tensor: Option<TensorView> = None;
    for step in script.iter().flat_map(|b| [b & 0xF, b >> 4]) {
        let cur = s.args().cursor();
        let kind_code = if cur < argc { Some(kinds[cur]) } else { None };
        let want = match step % 9 {
            0 => Some(ArgKind::Tensor),
            1 => Some(ArgKind::Scalar),
            2 => Some(ArgKind::Int),
            3 => Some(ArgKind::Float),
            4 => Some(ArgKind::LongLong),
            5 => Some(ArgKind::Double),
            _ => None,
        };
        if let Some(want) = want {
            let reference = match kind_code {
                None => Err(Error::NoMoreArgs),
                Some(k) if k != want as u8 => Err(Error::WrongArgKind),
                Some(_) => ref_desc(&desc(cur), &p).and_then(|r| if want != ArgKind::Tensor && r.numel != 1 { Err(Error::ScalarNotOneElement) } else { Ok(r) }),
            };
            // A value read through the windows is refused outside HBM/SBUF.
            let reference = match reference {
                Ok(r) if want != ArgKind::Tensor && !readable(&r, &p) => Err(Error::AddressUnmapped),
                other => other,
            };
            let got: Result<Option<TensorView>, Error> = match want {
                ArgKind::Tensor => s.next_tensor().map(Some),
                ArgKind::Scalar => s.next_scalar().map(|_| None),
                ArgKind::Int => s.next_int().map(|_| None),
                ArgKind::Float => s.next_float().map(|_| None),
                ArgKind::LongLong => s.next_long_long().map(|_| None),
                ArgKind::Double => s.next_double().map(|_| None),
            };
            match (reference, got) {
                (Ok(r), Ok(v)) => {
                    assert_eq!(s.args().cursor(), cur + 1, "a successful reader advances");
                    if let Some(v) = v {
                        check_view(&v, &r);
                        last_tensor = Some(v);
                    }
                }
                (Err(e), Err(g)) => {
                    assert_eq!(g, e, "reader {want:?} at argument {cur}");
                    assert_eq!(s.args().cursor(), cur, "a failing reader does not advance");
                }
                (r, g) => panic!("reader {want:?} at argument {cur}: reference {r:?}, runtime {:?}", g.map(|_| ())),
            }
            continue;
        }
        match step % 9 {
            6 => {
                let reference = ref_desc(&desc(argc), &p);
                match (reference, s.get_dst_tensor()) {
                    (Ok(r), Ok(v)) => {
                        check_view(&v, &r);
                        returned_or_claimed = true;
                    }
                    (Err(e), Err(g)) => assert_eq!(g, e, "get_dst_tensor"),
                    (r, g) => panic!("get_dst_tensor: reference {r:?}, runtime {:?}", g.map(|_| ())),
                }
            }
            7 => {
                // Return the last tensor read (if small), else a view of
                // the output itself with another dtype.
                let Some(t) = last_tensor else { continue };
                let out = ref_desc(&desc(argc), &p);
                let claimed = s.args().dst_claimed();
                let small = out.as_ref().is_ok_and(|o| o.numel * o.elem <= MAX_RETURN_BYTES);
                if !claimed && !small && out.is_ok() {
                    continue;
                }
                let r = s.return_tensor(&t);
                if claimed {
                    assert_eq!(r, Ok(()), "a claimed output returns without a copy");
                    continue;
                }
                match out {
                    Err(e) => assert_eq!(r, Err(e), "return checks the output descriptor"),
                    Ok(o) => {
                        let same_shape =
                            usize::from(t.num_dim) == o.sizes.len() && t.sizes.iter().zip(&o.sizes).all(|(&a, &b)| u64::try_from(a).ok() == Some(b));
                        if t.dtype != o.dtype {
                            assert_eq!(r, Err(Error::DtypeMismatch));
                        } else if !same_shape {
                            // SPEC §12: the output's shape exactly, not merely as many bytes.
                            assert_eq!(r, Err(Error::ReturnShapeMismatch));
                        } else if (t.nbytes as u64) < o.numel * o.elem {
                            assert_eq!(r, Err(Error::BufferTooSmall));
                        } else if r.is_ok() {
                            returned_or_claimed = true;
                        } else {
                            // The copy itself may be refused (storage outside HBM/SBUF).
                            assert!(
                                matches!(r, Err(Error::AddressUnmapped | Error::DmaFault | Error::DmaUnreachable | Error::SizeOverflow | Error::OutOfMemory)),
                                "{r:?}"
                            );
                        }
                    }
                }
            }
            _ => {
                let has_return = mode & 0x80 != 0;
                let r = s.cleanup();
                if has_return && !returned_or_claimed {
                    assert_eq!(r, Err(Error::OutputNotWritten));
                } else {
                    assert!(r.is_ok() || r == Err(Error::DmaFault), "{r:?}");
                }
                assert!(!s.args().is_bound());
                return;
            }
        }
    }
}
