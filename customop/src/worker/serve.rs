//! The worker's side: it serves one request after another on a thread
//! with a run thread's stack, with one simulator reset after each reply.

use super::doorbell::{spin_until, Doorbell};
use super::early_output::{output_ready, Notice};
use super::phase::Phase;
use super::shm::Shm;
use super::wire::{decode_request, read_exact};
use super::{Staged, ALIGN, KERNEL, SHAPE};
use crate::contained::{self, SimRun};
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::{Channel, FRAME_RESULT};
use crate::schema::Op;
use crate::shape::{OutputSpec, Value};
use crate::shape_cache::ShapeCache;
use crate::sim::{Sim, SimApi};
use std::os::fd::RawFd;

/// The worker's side: the forked child's prologue (`isolate::child_prologue`:
/// dies with the parent, stderr into the pipe, SIGINT to its default, no
/// descriptor but its own); then serves requests until the socket ends.
#[allow(clippy::too_many_arguments)]
pub(super) fn serve(
    parent: libc::pid_t,
    api: SimApi,
    ops: &[Op],
    ctl: RawFd,
    err_r: RawFd,
    err_w: RawFd,
    mut shm: Shm,
    phase: Phase,
    bell: Doorbell,
    fill_delay: Option<std::time::Duration>,
) -> ! {
    // (The parent's end of the socket goes with every other descriptor
    // the worker does not use.)
    crate::isolate::child_prologue(parent, err_r, err_w, &[ctl, shm.fd]);
    // Served on a thread with a run thread's stack and more: a one-core
    // kernel then runs on it (`Simulator::launch`), whose painted stack
    // pages stay in from one call to the next.
    let ops = ops.to_vec();
    let serving = std::thread::Builder::new()
        .stack_size(neuroncustomop::host::diagnostics::RUN_THREAD_STACK + (4 << 20))
        .spawn(move || {
            keep_alt_stack();
            serve_loop(api, &ops, ctl, &mut shm, &phase, &bell, fill_delay)
        })
        .map(|t| t.join().unwrap_or(101));
    let code = serving.unwrap_or(1);
    // SAFETY: ends the worker without unwinding into the parent's frames.
    unsafe { libc::_exit(code) }
}

/// Gives the serving thread an alternate signal stack for its life: a
/// run finds one and does not make and remove its own (five system calls
/// per call, issue 28). Best effort: without it each run makes its own.
fn keep_alt_stack() {
    const SIZE: usize = 64 << 10;
    // SAFETY: a fresh private mapping installed as this thread's alternate
    // signal stack; never unmapped (the worker `_exit`s with it installed).
    unsafe {
        let map = libc::mmap(std::ptr::null_mut(), SIZE, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if map != libc::MAP_FAILED {
            let st = libc::stack_t { ss_sp: map, ss_flags: 0, ss_size: SIZE };
            if libc::sigaltstack(&st, std::ptr::null_mut()) != 0 {
                libc::munmap(map, SIZE);
            }
        }
    }
}

/// Answers requests until the socket ends: the worker's exit status.
fn serve_loop(api: SimApi, ops: &[Op], ctl: RawFd, shm: &mut Shm, phase: &Phase, bell: &Doorbell, fill_delay: Option<std::time::Duration>) -> i32 {
    let mut ch = Channel { fd: ctl };
    // Before the simulator: it outlives the simulator it is given to.
    let notice = Notice { ctl };
    let mut sim: Option<Sim> = None;
    let mut shapes = ShapeCache::default();
    let mut served = 0u64;
    // The last call's output (offset, bytes), to fill ahead for the next.
    let mut ahead: Option<(usize, usize)> = None;
    loop {
        // The next call with the same shapes places its output where the
        // last one's was: once the caller has read that, it is filled with
        // the sentinel now, while the caller copies the next arguments in,
        // rather than in the run.
        if let (Some((at, len)), Some(s)) = (ahead.take(), sim.as_mut()) {
            if spin_until(bell.released(), served) {
                if let Some(d) = fill_delay {
                    std::thread::sleep(d);
                }
                // A failed fill ahead leaves the fill to the run.
                let _ = s.prefill_output(at as u64, len as u64);
            }
        }
        // Done with the call memory until the next request: the caller may
        // stage over the last output's place.
        bell.settled().store(served, std::sync::atomic::Ordering::Release);
        // A short spin for the next request before the blocking read (see
        // `doorbell`): a caller that calls again at once finds this side awake.
        spin_until(bell.posted(), served + 1);
        let mut head = [0u8; 9];
        if !read_exact(ctl, &mut head) {
            return 0;
        }
        let mut req = vec![0u8; u64::from_le_bytes(head[1..9].try_into().expect("8 bytes")) as usize];
        if !read_exact(ctl, &mut req) {
            return 1;
        }
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(api, ops, &req, shm, &mut sim, &notice, &mut shapes, phase)));
        // What the kernel printed reaches the terminal with its call.
        // SAFETY: fflush(NULL) flushes every C stream.
        unsafe { libc::fflush(std::ptr::null_mut()) };
        match r {
            Ok((reply, out)) => {
                ch.frame(FRAME_RESULT, &reply);
                ahead = out.filter(|o| o.1 >= AHEAD_BYTES);
            }
            Err(_) => return 101,
        }
        served += 1;
        bell.replied().store(served, std::sync::atomic::Ordering::Release);
        // The reset for the next call, while the caller reads this one's
        // output (and the memory the run took is given back now): a
        // failed or missing reset leaves a new simulator to the next call.
        if !sim.as_mut().is_some_and(Sim::reset) {
            sim = None;
        }
    }
}

/// Outputs filled ahead for the next call: smaller ones cost the run
/// little to fill.
const AHEAD_BYTES: usize = 256 << 10;

/// One request: the shape function, the kernel on the (reset) simulator,
/// the output into the region. The reply: output place and region size,
/// then `contained`'s encoding; and where a passed run left its output in
/// the simulator's HBM (staged), the place the next call's output may
/// take.
#[allow(clippy::too_many_arguments)]
fn job(
    api: SimApi,
    ops: &[Op],
    req: &[u8],
    shm: &mut Shm,
    sim: &mut Option<Sim>,
    notice: &Notice,
    shapes: &mut ShapeCache,
    phase: &Phase,
) -> (Vec<u8>, Option<(usize, usize)>) {
    let mut out = (0usize, 0usize);
    // How much of the region the parent maps to read the output.
    let mut mapped = shm.len;
    let r = (|| {
        let (index, cores, writer_map, region, staged, labels) =
            decode_request(req).ok_or_else(|| Error::new(ErrorKind::Environment, "the run's worker got a request that does not decode"))?;
        let op = ops.get(index).ok_or_else(|| Error::new(ErrorKind::Environment, "the run's worker got an unknown op"))?;
        // Staged: the arguments are in the simulator's HBM already.
        let staged_hbm = api.staging.is_some();
        if !staged_hbm {
            shm.follow(region).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot map the run's arguments: {e}")))?;
        }
        phase.set(SHAPE);
        let values: Vec<Value> = staged
            .iter()
            .map(|s| match s {
                Staged::Tensor { dtype, shape, .. } => Value::Tensor(*dtype, shape.clone()),
                Staged::Value { value, .. } => value.clone(),
            })
            .collect();
        let spec = shapes.evaluate(&api, op, index, values)?;
        phase.set(KERNEL);
        // The simulator of the last call, reset; a new one when there is
        // none or the reset failed (the old one freed first).
        // Fresh: made, or reset after the last call's reply.
        let s = match sim {
            Some(s) => s,
            None if staged_hbm => {
                let s = sim.insert(Sim::new_staged(api, shm.fd)?);
                // A large output is copied by the parent while the verdict
                // runs (`early_output`).
                // SAFETY: `output_ready` only reads the Notice, which the
                // serving loop made before this simulator and drops after it.
                unsafe { s.set_output_ready(output_ready, std::ptr::from_ref(notice).cast_mut().cast())? };
                s
            }
            None => sim.insert(Sim::new(api)?),
        };
        for (i, p) in staged.iter().enumerate() {
            let what = format!("argument {} of op `{}` ({})", i + 1, op.name, labels[i]);
            match p {
                Staged::Tensor { dtype, shape, at, len } if staged_hbm => {
                    // The bytes the parent wrote are the shape's (the
                    // simulator places what the shape says).
                    if shape.iter().try_fold(u64::from(dtype.elem_size()), |n, &d| n.checked_mul(d)) != Some(*len as u64) {
                        return Err(Error::new(ErrorKind::Environment, format!("{what}: {len} bytes staged for shape {shape:?}")));
                    }
                    s.arg_tensor_staged(dtype.code(), shape, *at as u64, &what)?
                }
                Staged::Tensor { dtype, shape, at, len } => {
                    // SAFETY: the worker's turn: the caller staged before
                    // its request and touches the call memory again only
                    // after the reply.
                    let data = unsafe { shm.range(*at, *len) }.ok_or_else(|| Error::new(ErrorKind::Environment, "an argument outside the run's memory"))?;
                    s.arg_tensor(dtype.code(), shape, data, &what)?
                }
                Staged::Value { kind, dtype, bytes, .. } => s.arg_value(kind.code(), dtype.code(), bytes, &what)?,
            }
        }
        s.set_output(spec.dtype.code(), &spec.shape)?;
        let mapped_writers = writer_map && s.keep_writer_map();
        let (rc, report) = s.run(&op.name, cores);
        let writers = if mapped_writers { s.writer_map() } else { None };
        if rc == 0 && staged_hbm {
            // The parent reads it where the run left it.
            let len = spec.shape.iter().product::<u64>() as usize * usize::from(spec.dtype.elem_size());
            let at = s.output_offset()? as usize;
            out = (at, len);
            mapped = at + len;
        } else if rc == 0 {
            let len = spec.shape.iter().product::<u64>() as usize * usize::from(spec.dtype.elem_size());
            let at = region.next_multiple_of(ALIGN);
            shm.grow(at + len).map_err(|e| Error::new(ErrorKind::Environment, format!("cannot grow the run's output memory: {e}")))?;
            // SAFETY: the worker's turn, as above.
            let dst = unsafe { shm.range_mut(at, len) }.ok_or_else(|| Error::new(ErrorKind::Environment, "the output outside the run's memory"))?;
            s.read_output_into(dst)?;
            out = (at, len);
        }
        // A failed run: the output as the kernel left it, in the reply
        // (the parent's error carries it), when the library can say.
        let len = spec.shape.iter().product::<u64>() as usize * usize::from(spec.dtype.elem_size());
        let data = if rc == 0 { Vec::new() } else { s.inspect_output(len).ok().filter(|k| k.len() == len).unwrap_or_default() };
        Ok((spec, Some(SimRun { rc, report, data, timings: Default::default(), writers })))
    })();
    let r: Result<(OutputSpec, Option<SimRun>)> = r;
    let mut b = Vec::new();
    for v in [out.0, out.1, mapped.max(shm.len)] {
        b.extend_from_slice(&(v as u64).to_le_bytes());
    }
    b.extend_from_slice(&contained::encode(&r));
    let staged_out = (api.staging.is_some() && out.1 > 0).then_some(out);
    (b, staged_out)
}
