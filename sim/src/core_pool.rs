//! Run threads kept between runs, for a simulator that serves many runs
//! (one that was reset, issue 28): a new thread per core per run costs a
//! thread start and, above all, the stack paint's page faults on a fresh
//! stack; a parked thread's painted pages stay in. A simulator that runs
//! once (`customop run`) spawns its run threads as before.

use std::boxed::Box;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::vec::Vec;

/// A job: one core's part of a run. It borrows the simulator's cores;
/// [`CorePool::run`] waits for every job it sent before returning.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// One parked run thread: jobs in, "finished without a panic" out.
struct Parked {
    jobs: Sender<Job>,
    done: Receiver<bool>,
}

impl Parked {
    fn start(i: usize) -> std::io::Result<Self> {
        let (jobs, rx) = channel::<Job>();
        let (tx, done) = channel();
        std::thread::Builder::new().name(std::format!("sim-core-{i}")).stack_size(super::diagnostics::RUN_THREAD_STACK).spawn(move || {
            for job in rx {
                let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job)).is_ok();
                if tx.send(ok).is_err() {
                    return;
                }
            }
        })?;
        Ok(Self { jobs, done })
    }
}

/// Up to eight parked run threads (made on first use).
#[derive(Default)]
pub(crate) struct CorePool {
    threads: Vec<Option<Parked>>,
}

impl CorePool {
    /// Runs `jobs` (core index, job), each on its own parked thread, and
    /// waits for all of them: the cores whose thread could not start or
    /// whose job panicked.
    pub(crate) fn run<'a>(&mut self, jobs: Vec<(usize, Box<dyn FnOnce() + Send + 'a>)>) -> Vec<u32> {
        let mut failed = Vec::new();
        let mut sent = Vec::new();
        for (i, job) in jobs {
            if self.threads.len() <= i {
                self.threads.resize_with(i + 1, || None);
            }
            if self.threads[i].is_none() {
                self.threads[i] = Parked::start(i).ok();
            }
            // SAFETY: only the lifetime is erased. Every job sent here is
            // waited for below before this function returns (a thread
            // that dies mid-job drops its channel, which ends the wait),
            // so nothing it borrows is used after its owner lets go.
            let job: Job = unsafe { core::mem::transmute::<Box<dyn FnOnce() + Send + 'a>, Job>(job) };
            match self.threads[i].as_ref().map(|p| p.jobs.send(job)) {
                Some(Ok(())) => sent.push(i),
                _ => {
                    self.threads[i] = None;
                    failed.push(i as u32);
                }
            }
        }
        for i in sent {
            match self.threads[i].as_ref().map(|p| p.done.recv()) {
                Some(Ok(true)) => {}
                // The job panicked: its thread goes on.
                Some(Ok(false)) => failed.push(i as u32),
                // The thread is gone: a new one next time.
                _ => {
                    self.threads[i] = None;
                    failed.push(i as u32);
                }
            }
        }
        failed
    }
}
