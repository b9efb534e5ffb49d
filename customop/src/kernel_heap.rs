//! The kernel's allocations on the simulator come from the core's libc
//! heap, as on the device (SPEC §12): the compute objects' references to
//! the C and C++ allocation functions are renamed to the simulator's
//! `neuron_kernel_*` (`sim/src/kernel_heap.rs`) in a copy of each object
//! that only the link uses. The shape functions, the generated wrappers
//! and the host's C++ library keep the process's allocator.
//!
//! `objcopy --redefine-syms` does it: an undefined reference to `malloc`
//! becomes one to `neuron_kernel_malloc` (renaming at the link is no
//! alternative: `--wrap` would also catch the runtime's own allocations).

use crate::compiler::run_tool;
use crate::error::Result;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Each allocation symbol a kernel object may reference; each is renamed
/// to `neuron_kernel_<symbol>` (objcopy wants one target per symbol).
pub const RENAMED: &[&str] = &[
    "malloc",
    "calloc",
    "realloc",
    "free",
    "aligned_alloc",
    "memalign",
    "posix_memalign",
    // operator new / new[]: plain, nothrow, aligned, aligned nothrow.
    "_Znwm",
    "_Znam",
    "_ZnwmRKSt9nothrow_t",
    "_ZnamRKSt9nothrow_t",
    "_ZnwmSt11align_val_t",
    "_ZnamSt11align_val_t",
    "_ZnwmSt11align_val_tRKSt9nothrow_t",
    "_ZnamSt11align_val_tRKSt9nothrow_t",
    // operator delete / delete[]: every sized, aligned and nothrow form.
    "_ZdlPv",
    "_ZdaPv",
    "_ZdlPvm",
    "_ZdaPvm",
    "_ZdlPvSt11align_val_t",
    "_ZdaPvSt11align_val_t",
    "_ZdlPvmSt11align_val_t",
    "_ZdaPvmSt11align_val_t",
    "_ZdlPvRKSt9nothrow_t",
    "_ZdaPvRKSt9nothrow_t",
    "_ZdlPvSt11align_val_tRKSt9nothrow_t",
    "_ZdaPvSt11align_val_tRKSt9nothrow_t",
];

/// The rename list as `objcopy --redefine-syms` reads it.
fn rename_file(dir: &Path) -> Result<PathBuf> {
    let path = dir.join("kernel-heap.syms");
    let text: String = RENAMED.iter().map(|s| format!("{s} neuron_kernel_{s}\n")).collect();
    crate::atomic::write_if_changed(&path, &text)?;
    Ok(path)
}

/// A copy of compute object `obj` whose allocations go to the core's libc
/// heap: in the folder `kernel-heap` beside it (apart from the compiler's
/// objects), written whole or not at all.
pub fn redirect(obj: &Path) -> Result<PathBuf> {
    let dir = obj.parent().unwrap_or(Path::new(".")).join("kernel-heap");
    std::fs::create_dir_all(&dir).map_err(|e| crate::error::Error::io("create", &dir, e))?;
    let syms = rename_file(&dir)?;
    let name = obj.file_name().map(PathBuf::from).unwrap_or_else(|| PathBuf::from("kernel.o"));
    let out = dir.join(&name);
    let tmp = crate::atomic::temp_in(&dir, &format!(".{}.", name.display()), ".tmp")?;
    let mut cmd = Command::new(std::env::var_os("OBJCOPY").unwrap_or_else(|| "objcopy".into()));
    cmd.arg(format!("--redefine-syms={}", syms.display())).arg(obj).arg(&tmp);
    run_tool(&mut cmd, &format!("renaming the allocations of {}", obj.display()), "install binutils (objcopy)")?;
    crate::atomic::persist(tmp, &out)?;
    Ok(out)
}
