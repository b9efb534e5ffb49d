//! What an emulated run may touch on the host. QEMU's semihosting
//! (`-semihosting-config target=native`, which the runner needs for its
//! console, its arguments and its exit status) also gives the guest the
//! host's `open`, `read`, `write`, `lseek` and `close`, as the user who
//! runs it: a kernel could read `~/.ssh` or rewrite `~/.bashrc`. So QEMU
//! runs confined by Linux's Landlock (5.13 and later): it may read its own
//! program and the system's libraries, read the files of its run, write
//! the few files its plugin writes, and nothing else; no TCP either.
//!
//! Where the kernel has no Landlock the run goes on unconfined, and
//! [`Confinement::apply`] says so ([`Enforced::None`]).

use landlock::{Access, AccessFs, AccessNet, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreatedAttr, ABI};
use std::os::fd::{AsRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The newest Landlock ABI whose rights are handled (older kernels get
/// what they support).
const ABI_USED: ABI = ABI::V5;

/// What QEMU reads of the system: its libraries and the loader's cache.
const SYSTEM: &[&str] = &["/usr", "/lib", "/lib64", "/etc/ld.so.cache"];

/// How far a confinement is enforced.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Enforced {
    /// Every right the ABI handles.
    Full,
    /// The rights this kernel's Landlock knows (an older ABI).
    Partial,
    /// No Landlock in this kernel: the run is unconfined.
    None,
}

/// The files one emulated run may use.
#[derive(Clone, Debug, Default)]
pub struct Confinement {
    read: Vec<PathBuf>,
    write: Vec<PathBuf>,
}

impl Confinement {
    /// Nothing but the system's libraries (and the emulator itself, found
    /// on `PATH` when [`apply`](Self::apply) runs).
    pub fn new() -> Self {
        Self::default()
    }

    /// `path` (a file, or a directory and what is under it) may be read.
    pub fn read(&mut self, path: &Path) -> &mut Self {
        self.read.push(path.to_path_buf());
        self
    }

    /// The file `path` (which exists) may be read, written and truncated.
    pub fn write(&mut self, path: &Path) -> &mut Self {
        self.write.push(path.to_path_buf());
        self
    }

    /// Has `cmd` (a QEMU command) exec its program confined to these
    /// files. The rules are made here, before the fork; the child only
    /// makes the two system calls that enter them.
    pub fn apply(&self, cmd: &mut Command) -> Result<Enforced, String> {
        let ruleset = |e: landlock::RulesetError| format!("cannot confine the emulator (Landlock): {e}");
        let read = AccessFs::from_read(ABI_USED);
        let file = AccessFs::from_file(ABI_USED);
        let mut rules = Ruleset::default()
            .set_compatibility(CompatLevel::BestEffort)
            .handle_access(AccessFs::from_all(ABI_USED))
            .map_err(ruleset)?
            .handle_access(AccessNet::from_all(ABI_USED))
            .map_err(ruleset)?
            .create()
            .map_err(ruleset)?;
        let program = cmd.get_program().to_owned();
        let emulator = which(Path::new(&program));
        let system = SYSTEM.iter().map(PathBuf::from).filter(|p| p.exists());
        for p in system.chain(emulator).chain(self.read.iter().cloned()) {
            let fd = PathFd::new(&p).map_err(|e| format!("cannot confine the emulator to {}: {e}", p.display()))?;
            rules = rules.add_rule(PathBeneath::new(fd, read)).map_err(ruleset)?;
        }
        for p in &self.write {
            let fd = PathFd::new(p).map_err(|e| format!("cannot confine the emulator to {}: {e}", p.display()))?;
            rules = rules.add_rule(PathBeneath::new(fd, file & !AccessFs::Execute)).map_err(ruleset)?;
        }
        let enforced = match kernel_abi() {
            v if v >= ABI_USED as i64 => Enforced::Full,
            v if v >= 1 => Enforced::Partial,
            _ => Enforced::None,
        };
        let Some(fd) = Option::<OwnedFd>::from(rules).filter(|_| enforced != Enforced::None) else { return Ok(Enforced::None) };
        let enter = move || {
            // SAFETY: prctl with integer arguments: no new privileges (what
            // an unprivileged landlock_restrict_self requires).
            if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // SAFETY: landlock_restrict_self(ruleset fd, flags 0) on the fd
            // this closure owns.
            if unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd.as_raw_fd(), 0) } != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        };
        // SAFETY: the hook runs in the child between fork and exec. It
        // allocates nothing and takes no lock: two system calls on an fd
        // the closure owns (closed in the parent when `cmd` is dropped).
        unsafe { cmd.pre_exec(enter) };
        Ok(enforced)
    }
}

/// The Landlock ABI version of the running kernel (0 or less: none).
pub fn kernel_abi() -> i64 {
    const LANDLOCK_CREATE_RULESET_VERSION: u32 = 1;
    // SAFETY: landlock_create_ruleset(NULL, 0, VERSION) only returns the
    // version (or -1 with errno when Landlock is absent); it reads nothing.
    unsafe { libc::syscall(libc::SYS_landlock_create_ruleset, std::ptr::null::<u8>(), 0usize, LANDLOCK_CREATE_RULESET_VERSION) }
}

/// The file `program` names: itself when it has a slash, else the first
/// match on `PATH`.
fn which(program: &Path) -> Option<PathBuf> {
    if program.components().count() > 1 {
        return Some(program.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join(program)).find(|p| p.is_file())
}
