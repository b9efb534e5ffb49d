//! The kernel's run on the emulated cluster (a `--target qemu` build's
//! image under QEMU), optionally under the profile instrument.

use super::*;

/// Runs the op on the emulated cluster (the build's image).
#[allow(clippy::too_many_arguments)] // one private call site pair; a struct would only rename them
pub(super) fn run_qemu(
    dir: &Path,
    schema: &Schema,
    op: &Op,
    placed: &[Placed],
    spec: &OutputSpec,
    cores: u32,
    timeout: Option<Duration>,
    profile: Option<&Path>,
    profiled: &mut Option<String>,
) -> Result<crate::qemu_run::QemuRun> {
    let args: Vec<crate::qemu_blob::Arg> = placed
        .iter()
        .map(|p| match p {
            Placed::Tensor(a) => crate::qemu_blob::Arg { kind: ArgKind::Tensor.code(), dtype: a.dtype.code(), shape: &a.shape, data: &a.data },
            Placed::Value { kind, dtype, bytes, .. } => crate::qemu_blob::Arg { kind: kind.code(), dtype: dtype.code(), shape: &[1], data: bytes },
        })
        .collect();
    let blob = crate::qemu_blob::build(&op.name, &args, spec.dtype.code(), &spec.shape, usize::from(spec.dtype.elem_size()))?;
    let image = dir.join(&schema.images[0]);
    let work = dir.join(crate::workdir::WORK_DIR);
    let session = profile.map(|_| crate::profile::start(&work, &image)).transpose()?;
    // The check rides on the profile's plugin (one instrument); a plugin
    // the environment asks for (`cargo xtask perf`'s counts) runs alone.
    let check = (crate::device_check::enabled() && std::env::var_os(crate::qemu_run::PLUGIN_ENV).is_none())
        .then(|| crate::device_check::start(&work, &blob))
        .transpose()?;
    // What the confined emulator may touch besides the image and the
    // invocation: the plugin and its files.
    let mut files = customop_emulator::sandbox::Confinement::new();
    if let Some(s) = &session {
        s.confine(&mut files);
    }
    let plugin = match (&session, &check) {
        (Some(s), Some(c)) => {
            c.confine(&mut files);
            Some(format!("{},{}", s.plugin_arg, c.args))
        }
        (Some(s), None) => Some(s.plugin_arg.clone()),
        // Without a C compiler to build the plugin the run goes on
        // unchecked, as before the check existed, and says so.
        (None, Some(c)) => match crate::profile::plugin::built(&work) {
            Ok(so) => {
                c.confine(&mut files);
                files.read(&so);
                Some(format!("{},{}", so.display(), c.args))
            }
            Err(e) => {
                eprintln!("customop: warning: the emulated cores' check is off for this run: {}", e.message);
                None
            }
        },
        (None, None) => None,
    };
    let findings = check.as_ref().filter(|_| plugin.is_some()).map(|c| (c.findings.as_ref(), op.name.as_str()));
    let r = crate::qemu_run::run(&image, &blob, dir, cores, timeout.map(|t| (t, "--timeout")), plugin.as_deref().map(|p| (p, files)), findings)?;
    if let (Some(s), Some(out)) = (session, profile) {
        if r.code() == 0 {
            *profiled = Some(crate::profile::finish(s, &image, cores, out)?);
        }
    }
    Ok(r)
}
