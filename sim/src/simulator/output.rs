//! The run's output: where it is written as the kernels end (a sink), and
//! reading it back after a run (a failed run's output only through
//! [`inspect_output`](Simulator::inspect_output)).

use super::*;

impl Simulator {
    /// Writes each run's output into `file` from byte `offset` as soon as
    /// its kernels end, on a thread of its own while the verdict runs (and
    /// again after a verdict that ran the kernels again), with its disk
    /// writes started: when [`run`](Self::run) returns, a run that passed
    /// has its output in the file ([`sink_result`](Self::sink_result)).
    pub fn set_output_sink(&mut self, file: std::fs::File, offset: u64) {
        self.sink = Some(crate::output_sink::Sink::new(file, offset));
    }

    /// How the last run's write into the output sink ended (None: no sink,
    /// or a run that did not get as far as its kernels).
    pub fn sink_result(&self) -> Option<&std::io::Result<()>> {
        self.sink_result.as_ref()
    }

    /// Sets a raw output descriptor (tests of the gates). Coverage is still
    /// checked on the output [`set_output`](Self::set_output) placed, if any.
    ///
    /// # Safety
    /// As [`push_arg`](Self::push_arg): every byte `d`'s view reaches is
    /// simulator HBM that nothing else uses (the kernel and the run's
    /// sentinel fill write it).
    ///
    /// ```compile_fail,E0133
    /// # use neuron_sim::simulator::Simulator;
    /// # use neuron_runtime::marshal::descriptor::RawTensorDesc;
    /// # fn f(s: &mut Simulator, d: RawTensorDesc) {
    /// s.set_output_raw(d);
    /// # }
    /// ```
    pub unsafe fn set_output_raw(&mut self, d: RawTensorDesc) {
        self.output = Some(d);
        self.last_ok = false;
    }

    /// The pending output.
    pub fn output(&self) -> Option<RawTensorDesc> {
        self.output
    }

    /// Keeps the next run's writer map ([`writer_map`](Self::writer_map)):
    /// it costs a copy of the output's per-element writers, so only a
    /// caller that draws it asks. Applies to one run.
    pub fn keep_writer_map(&mut self) {
        self.keep_writer_map = true;
    }

    /// Who wrote the last run's output, per element or run of elements,
    /// when the run was asked to keep it and placed an output.
    pub fn writer_map(&self) -> Option<&crate::writer_map::WriterMap> {
        self.writer_map.as_ref()
    }

    /// Reads SoC memory.
    pub fn read(&self, addr: u64, buf: &mut [u8]) -> Result<(), Error> {
        self.soc.read(addr, buf).map_err(|_| Error::AddressUnmapped)
    }

    /// Fills the output tensor's storage (`buffer_bytes` of it) with
    /// `byte`, and makes `byte` the sentinel later runs fill it with (so a
    /// caller can check that a rejected run wrote nothing).
    pub fn fill_output(&mut self, byte: u8) -> Result<(), Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        if self.soc.resolve(d.storage, d.buffer_bytes).is_none() {
            return Err(Error::AddressUnmapped);
        }
        // SAFETY: no core runs now (the simulator runs them only inside a run, under `&mut self`); whoever else holds the SoC writes it only under the same contract.
        unsafe { coverage::fill(&self.soc, d.storage, d.buffer_bytes, byte) }.map_err(|_| Error::AddressUnmapped)?;
        self.sentinel = byte;
        Ok(())
    }

    /// Reads the output tensor's bytes: only after a run that passed.
    pub fn read_output(&self) -> Result<Vec<u8>, Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        let mut v = std::vec![0u8; usize::try_from(d.buffer_bytes).map_err(|_| Error::TensorTooLarge)?];
        self.read_output_into(&mut v)?;
        Ok(v)
    }

    /// Copies the first `dst.len()` bytes of the output (at most its size)
    /// into `dst`; returns how many. Only after a run that passed.
    pub fn read_output_into(&self, dst: &mut [u8]) -> Result<usize, Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        if !self.last_ok {
            return Err(Error::NoRunResult);
        }
        let k = (d.buffer_bytes.min(dst.len() as u64)) as usize;
        self.read(d.storage, &mut dst[..k])?;
        Ok(k)
    }

    /// Copies `dst.len()` bytes of the output from byte `offset` on (a
    /// caller that writes it out a piece at a time); only after a run
    /// that passed. `BufferTooSmall` when the range passes its end.
    pub fn read_output_at(&self, offset: u64, dst: &mut [u8]) -> Result<(), Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        if !self.last_ok {
            return Err(Error::NoRunResult);
        }
        if offset.checked_add(dst.len() as u64).is_none_or(|end| end > d.buffer_bytes) {
            return Err(Error::BufferTooSmall);
        }
        self.read(d.storage + offset, dst)
    }

    /// Copies the first `dst.len()` bytes of the output as they are now
    /// (at most its size), whatever the last run did; returns how many.
    pub fn inspect_output(&self, dst: &mut [u8]) -> Result<usize, Error> {
        let d = self.output.ok_or(Error::NoOutput)?;
        let k = (d.buffer_bytes.min(dst.len() as u64)) as usize;
        self.read(d.storage, &mut dst[..k])?;
        Ok(k)
    }
}
