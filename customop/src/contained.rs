//! A run's shape function and kernel in a child process (`isolate`):
//! what crosses the pipe, and the error each way the child can end
//! gives. `customop run` and the Python ops run through here, so a crash
//! is an error naming the op and the signal with the crash report, a
//! timeout or Ctrl-C stops the run, and the caller's process goes on.

use crate::byte_record::{put_bytes, Reader};
use crate::error::{Error, ErrorKind, Result};
use crate::isolate::{self, Channel, Ended};
use crate::npy::Dtype;
use crate::run::{run_sim, shape_values, Files, Placed};
use crate::schema::Op;
use crate::shape::{self, OutputSpec};
use crate::sim::SimApi;
use std::time::Duration;

/// The phase the child is in: the shape function.
const SHAPE: u8 = 1;
/// The phase the child is in: the kernel.
const KERNEL: u8 = 2;

pub use crate::run::SimRun;

/// How a run is bounded.
pub struct Bounds<'a> {
    /// The time it may take (None: no bound).
    pub timeout: Option<Duration>,
    /// How the bound is spelt in messages (`--timeout`, `timeout=`).
    pub option: &'a str,
    /// Asked while the run goes on: true stops it (Ctrl-C).
    pub interrupted: &'a mut dyn FnMut() -> bool,
}

/// Evaluates `op`'s shape function on `placed` and (with `cores`) runs the
/// kernel on a fresh simulator, in a child process within `bounds`: the
/// output's spec and the kernel run's status, report and output.
/// `labels` name the arguments in messages; `files`: the tensors mapped
/// from their files and the output's file (`customop run`'s).
pub fn shape_and_run(
    api: SimApi,
    op: &Op,
    labels: &[String],
    placed: &[Placed],
    files: &Files,
    cores: Option<u32>,
    bounds: Bounds<'_>,
) -> Result<(OutputSpec, Option<SimRun>)> {
    in_child(op, cores, bounds, |ch| shape_then_kernel(api, op, labels, placed, files, cores, Some(ch)))
}

/// Evaluates `op`'s shape function alone on `values` in a child process
/// within `bounds`: what a fake tensor needs while PyTorch traces
/// (`torch.compile`, `torch.export`). A crash or a hang there ends the
/// child, and is the same error as in an eager call, not the caller's
/// death.
pub fn shape_only(api: SimApi, op: &Op, values: &[shape::Value], bounds: Bounds<'_>) -> Result<OutputSpec> {
    let (spec, _) = in_child(op, None, bounds, |ch| {
        ch.phase(SHAPE);
        shape::evaluate(&api, op, values).map(|spec| (spec, None))
    })?;
    Ok(spec)
}

/// `job` in a child process within `bounds`, its result sent back whole;
/// the child's end judged as [`judge`] says (`cores`: the kernel's, when
/// the job runs one).
fn in_child(
    op: &Op,
    cores: Option<u32>,
    bounds: Bounds<'_>,
    job: impl FnOnce(&mut Channel) -> Result<(OutputSpec, Option<SimRun>)>,
) -> Result<(OutputSpec, Option<SimRun>)> {
    let o = isolate::run(|ch| encode(&job(ch)), bounds.timeout, bounds.interrupted)
        .map_err(|e| Error::new(ErrorKind::Environment, format!("op `{}`: cannot start the run's process: {e}", op.name)))?;
    let bytes = judge(op, cores, bounds.timeout, bounds.option, o)?;
    decode(&bytes).unwrap_or_else(|| Err(Error::new(ErrorKind::Environment, format!("op `{}`: the run's process sent a result that does not decode", op.name))))
}

/// [`shape_and_run`] in this process, with no isolation (`customop run
/// --no-fork`): a debugger attached to the tool stops in the kernel's
/// code; a crash ends the tool, and there is no time bound.
pub fn shape_and_run_here(
    api: SimApi,
    op: &Op,
    labels: &[String],
    placed: &[Placed],
    files: &Files,
    cores: Option<u32>,
) -> Result<(OutputSpec, Option<SimRun>)> {
    shape_then_kernel(api, op, labels, placed, files, cores, None)
}

/// The run's job: the shape function, then (with `cores`) the kernel on a
/// fresh simulator; each phase told to `ch`, the parent's channel when
/// the job runs in a child.
fn shape_then_kernel(
    api: SimApi,
    op: &Op,
    labels: &[String],
    placed: &[Placed],
    files: &Files,
    cores: Option<u32>,
    mut ch: Option<&mut Channel>,
) -> Result<(OutputSpec, Option<SimRun>)> {
    if let Some(ch) = ch.as_deref_mut() {
        ch.phase(SHAPE);
    }
    let spec = shape::evaluate(&api, op, &shape_values(placed))?;
    let run = match cores {
        Some(c) => {
            if let Some(ch) = ch {
                ch.phase(KERNEL);
            }
            Some(run_sim(api, op, labels, placed, files, &spec, c)?)
        }
        None => None,
    };
    Ok((spec, run))
}

/// What the end of a run's process means: its result's bytes, or the
/// error naming the op, the stage it was in, the signal or the bound,
/// with its crash report (also a persistent worker's, `worker`).
pub(crate) fn judge(op: &Op, cores: Option<u32>, timeout: Option<Duration>, option: &str, o: isolate::Outcome) -> Result<Vec<u8>> {
    let stage = |phase: u8| match (phase, cores) {
        (KERNEL, Some(c)) => format!("the kernel on {c} core(s)"),
        _ => format!("the shape function `{}`", op.shape_fn),
    };
    let report =
        if o.stderr.trim().is_empty() { String::from("(the run's process wrote no crash report)") } else { crate::crash_site::symbolize(o.stderr.trim_end()) };
    match o.ended {
        Ended::Finished(bytes) => {
            if !o.stderr.is_empty() {
                eprint!("{}", o.stderr);
            }
            Ok(bytes)
        }
        // Ctrl-C at a terminal reaches the whole process group.
        Ended::Killed { signal: libc::SIGINT } => {
            Err(Error::new(ErrorKind::Interrupted, format!("op `{}`: interrupted (SIGINT) during {}; the run was stopped", op.name, stage(o.phase))))
        }
        Ended::Killed { signal } => {
            Err(Error::new(ErrorKind::Crashed, format!("op `{}`: {} crashed ({}):\n{report}", op.name, stage(o.phase), isolate::signal_name(signal))))
        }
        Ended::Exited { code } => {
            Err(Error::new(ErrorKind::Crashed, format!("op `{}`: {} ended the run's process (exit status {code}):\n{report}", op.name, stage(o.phase))))
        }
        Ended::TimedOut => Err(Error::new(
            ErrorKind::TimedOut,
            format!(
                "op `{}`: {} did not finish within {} s ({}); the run was stopped",
                op.name,
                stage(o.phase),
                timeout.map_or(0.0, |t| t.as_secs_f64()),
                option
            ),
        )),
        Ended::Interrupted => Err(Error::new(ErrorKind::Interrupted, format!("op `{}`: interrupted during {}; the run was stopped", op.name, stage(o.phase)))),
    }
}

/// Parses a time bound in seconds (`what` names it): a positive finite
/// number.
pub fn parse_timeout(text: &str, what: &str) -> Result<Duration> {
    match text.trim().parse::<f64>() {
        Ok(s) if s > 0.0 && s.is_finite() && s <= 1e9 => Ok(Duration::from_secs_f64(s)),
        _ => Err(Error::new(ErrorKind::Usage, format!("{what} {text}: give a number of seconds above 0"))),
    }
}

/// The child's result as bytes.
pub(crate) fn encode(r: &Result<(OutputSpec, Option<SimRun>)>) -> Vec<u8> {
    let mut b = Vec::new();
    match r {
        Ok((spec, run)) => {
            b.push(0);
            b.push(spec.dtype.code());
            put_bytes(&mut b, &spec.shape.iter().flat_map(|d| d.to_le_bytes()).collect::<Vec<_>>());
            if let Some(SimRun { rc, report, data, timings: t, writers }) = run {
                b.push(1);
                b.extend_from_slice(&rc.to_le_bytes());
                put_bytes(&mut b, report.as_bytes());
                put_bytes(&mut b, data);
                let ns: Vec<u64> = [t.setup, t.copy_in, t.verdict, t.copy_out].iter().chain(&t.kernel).map(|d| d.as_nanos() as u64).collect();
                put_bytes(&mut b, &ns.iter().flat_map(|n| n.to_le_bytes()).collect::<Vec<_>>());
                match writers {
                    Some((elements, cells)) => {
                        b.push(1);
                        b.extend_from_slice(&elements.to_le_bytes());
                        put_bytes(&mut b, &cells.iter().flat_map(|c| c.to_le_bytes()).collect::<Vec<_>>());
                    }
                    None => b.push(0),
                }
            } else {
                b.push(0);
            }
        }
        Err(e) => {
            b.push(1);
            b.extend_from_slice(&e.kind.exit_code().to_le_bytes());
            put_bytes(&mut b, e.message.as_bytes());
        }
    }
    b
}

/// Reads what [`encode`] wrote (None: it does not decode).
pub(crate) fn decode(b: &[u8]) -> Option<Result<(OutputSpec, Option<SimRun>)>> {
    let mut r = Reader::new(b);
    let text = |s: &[u8]| String::from_utf8_lossy(s).into_owned();
    match r.u8()? {
        0 => {
            let dtype = Dtype::marshallable(r.u8()?)?;
            let shape = r.u64s()?;
            let run = match r.u8()? {
                0 => None,
                _ => {
                    let rc = r.i32()?;
                    let report = text(r.bytes()?);
                    let data = r.bytes()?.to_vec();
                    let ns: Vec<Duration> = r.u64s()?.into_iter().map(Duration::from_nanos).collect();
                    let (head, kernel) = ns.split_at_checked(4)?;
                    let timings = crate::run::Timings {
                        setup: head[0],
                        copy_in: head[1],
                        verdict: head[2],
                        copy_out: head[3],
                        kernel: kernel.to_vec(),
                        ..Default::default()
                    };
                    let writers = match r.u8()? {
                        0 => None,
                        _ => Some((r.u64()?, r.u16s()?)),
                    };
                    Some(SimRun { rc, report, data, timings, writers })
                }
            };
            Some(Ok((OutputSpec { dtype, shape }, run)))
        }
        _ => {
            let kind = ErrorKind::from_exit_code(r.i32()?)?;
            Some(Err(Error::new(kind, text(r.bytes()?))))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(rc: i32, report: &str, data: Vec<u8>) -> SimRun {
        let ms = Duration::from_millis;
        let timings = crate::run::Timings { setup: ms(1), copy_in: ms(2), verdict: ms(3), copy_out: ms(4), kernel: vec![ms(5), ms(6)], ..Default::default() };
        SimRun { rc, report: report.into(), data, timings, writers: None }
    }

    #[test]
    fn results_and_errors_cross_the_pipe_whole() {
        let ok: Result<(OutputSpec, Option<SimRun>)> =
            Ok((OutputSpec { dtype: Dtype::Fp32, shape: vec![2, 3] }, Some(run(85, "core 0: ...\n", vec![1, 2, 3]))));
        let back = decode(&encode(&ok)).unwrap().unwrap();
        assert_eq!(back.0, OutputSpec { dtype: Dtype::Fp32, shape: vec![2, 3] });
        assert_eq!(back.1, Some(run(85, "core 0: ...\n", vec![1, 2, 3])));
        let shape_only: Result<(OutputSpec, Option<SimRun>)> = Ok((OutputSpec { dtype: Dtype::Int32, shape: vec![4] }, None));
        assert_eq!(decode(&encode(&shape_only)).unwrap().unwrap().1, None);
        let e = decode(&encode(&Err(Error::new(ErrorKind::ShapeFailed, "op `x`: no")))).unwrap().unwrap_err();
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::ShapeFailed, "op `x`: no"));
        assert!(decode(&encode(&ok)[..10]).is_none());
        // The writer map, when the run kept one.
        let mapped = SimRun { writers: Some((9, vec![1, 0x200, 0x80])), ..run(0, "", vec![]) };
        let back = decode(&encode(&Ok((OutputSpec { dtype: Dtype::Fp32, shape: vec![9] }, Some(mapped.clone()))))).unwrap().unwrap();
        assert_eq!(back.1, Some(mapped));
    }

    #[test]
    fn a_timeout_is_a_positive_number_of_seconds() {
        assert_eq!(parse_timeout("1.5", "--timeout").unwrap(), Duration::from_millis(1500));
        for bad in ["0", "-1", "inf", "nan", "x", ""] {
            assert_eq!(parse_timeout(bad, "--timeout").unwrap_err().kind, ErrorKind::Usage, "{bad}");
        }
    }
}
