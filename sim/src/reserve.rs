//! Reserving the simulated SoC's address space, with a message that says
//! what could not be reserved. A simulator maps 64 GiB of sparse HBM and a
//! 4 GiB NX space per core: nothing is committed until touched, but a
//! `ulimit -v` counts it all, and then every run failed as "no core is
//! bound". `NEURON_SIM_HBM_GIB` asks for less HBM.

use neuron_hal::platform::{Platform, Q7};
use neuron_hal_mock::MockSoc;
use std::io;
use std::string::{String, ToString};
use std::sync::Arc;

/// The environment variable that sets the simulated HBM's size in GiB.
pub const HBM_ENV: &str = "NEURON_SIM_HBM_GIB";
/// The least HBM a simulator works with: the tensor area starts at 1 GiB.
pub const MIN_HBM_GIB: u64 = 2;

/// The simulated HBM's size in GiB: `NEURON_SIM_HBM_GIB` if set, else
/// the device's 64.
pub fn hbm_gib() -> io::Result<u64> {
    let max = Q7.hbm_size >> 30;
    let Some(v) = std::env::var_os(HBM_ENV) else { return Ok(max) };
    let s = v.to_string_lossy();
    match s.trim().parse::<u64>() {
        Ok(g) if (MIN_HBM_GIB..=max).contains(&g) => Ok(g),
        _ => Err(io::Error::new(io::ErrorKind::InvalidInput, std::format!("{HBM_ENV}={s}: give a whole number of GiB from {MIN_HBM_GIB} to {max}"))),
    }
}

/// A mock SoC with the Q7 address map and the HBM size [`hbm_gib`] gives;
/// a failure names what could not be reserved and how to ask for less.
pub(crate) fn soc() -> io::Result<Arc<MockSoc>> {
    soc_on(None)
}

/// [`soc`], its HBM the caller's file `hbm_fd` when given
/// ([`MockSoc::with_platform_on`]).
pub(crate) fn soc_on(hbm_fd: Option<libc::c_int>) -> io::Result<Arc<MockSoc>> {
    let gib = hbm_gib()?;
    let platform = Platform { hbm_size: gib << 30, ..Q7 };
    match hbm_fd {
        Some(fd) => MockSoc::with_platform_on(platform, fd),
        None => MockSoc::with_platform(platform),
    }
    .map_err(|e| {
        io::Error::new(
            e.kind(),
            std::format!(
                "cannot reserve {gib} GiB of address space for the simulated HBM ({e}); a `ulimit -v` limit or the memory overcommit policy refuses it: \
                 set {HBM_ENV} to fewer GiB (at least {MIN_HBM_GIB}; a simulator also reserves 4 GiB of NX space per core, 32 GiB in all)"
            ),
        )
    })
}

/// Core `cpu`'s NX space could not be reserved: the message.
pub(crate) fn nx_failure(cpu: u32, e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        std::format!(
            "cannot reserve core {cpu}'s 4 GiB NX address space ({e}); a simulator reserves 4 GiB per core (32 GiB) besides the simulated HBM: \
             raise the `ulimit -v` limit, or set {HBM_ENV} to fewer GiB of HBM (at least {MIN_HBM_GIB})"
        ),
    )
}

/// Why no simulator can be made in this process now (None: one can).
/// What a tool says when `neuron_sim_new` or `neuron_sim_call` fails.
pub fn why_no_simulator() -> Option<String> {
    super::Simulator::new().err().map(|e| e.to_string())
}
