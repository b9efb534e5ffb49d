//! Which directories the tools read code and cached results from: a build
//! directory is code (its library is loaded and run as you, its stamps
//! decide what is not rebuilt), so one that another user owns or can
//! write to is refused before anything in it is read, as git refuses a
//! repository another user owns and OpenSSH a key in a place others can
//! write.
//!
//! A directory passes when the effective user (or root, who can change
//! any of the user's files anyway) owns it and neither group nor others
//! can write it; a group write bit is accepted for the owner's private
//! group (the group of the owner's name whose only member the owner is,
//! as Debian and Ubuntu make one for every user with umask 002). Each
//! directory above it must be owned by the user or by root and not be
//! writable by others, unless it is sticky (`/tmp`: no one can rename
//! another user's entry there): whoever can rename the directory away can
//! put their own in its place.
//!
//! `NEURONCUSTOMOP_TRUST_DIR` trusts more, as git's `safe.directory`: a
//! colon-separated list of directories (each trusts itself and everything
//! in it), or `*` for every directory.

use crate::error::{Error, ErrorKind, Result};
use crate::users;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The variable that trusts directories the check would refuse.
pub const TRUST_ENV: &str = "NEURONCUSTOMOP_TRUST_DIR";

/// Creates `dir` (and the directories above it that are missing) with
/// mode 0700 when it does not exist, then [`check`]s it. Nothing is
/// created inside a directory the check would refuse as a place for it.
pub fn create(dir: &Path) -> Result<()> {
    if std::fs::symlink_metadata(dir).is_err() {
        let abs = std::path::absolute(dir).map_err(|e| Error::io("create", dir, e))?;
        if let Some(existing) = abs.ancestors().skip(1).find(|a| a.is_dir()) {
            let real = std::fs::canonicalize(existing).map_err(|e| Error::io("read", existing, e))?;
            if !trusted_by_env(&abs) {
                for above in real.ancestors() {
                    check_above(dir, &abs, above)?;
                }
            }
        }
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(|e| Error::io("create", dir, e))?;
    }
    check(dir)
}

/// Refuses `dir` (which must exist) unless this user may trust it (see
/// the module's documentation), with an error that names it, its owner
/// and how to trust it.
pub fn check(dir: &Path) -> Result<()> {
    let real = std::fs::canonicalize(dir).map_err(|e| Error::io("read", dir, e))?;
    if trusted_by_env(&real) {
        return Ok(());
    }
    let me = users::euid();
    let m = std::fs::metadata(&real).map_err(|e| Error::io("read", &real, e))?;
    if !m.is_dir() {
        return Err(Error::new(ErrorKind::BadInput, format!("{} is not a directory", dir.display())));
    }
    if m.uid() != me && m.uid() != 0 {
        return Err(untrusted(dir, &real, format!("is owned by {}, not by you ({})", users::describe(m.uid()), users::describe(me))));
    }
    if writable_by_others(&m, false) {
        return Err(untrusted(dir, &real, format!("(owner {}, mode {:04o}) can be written by other users", users::describe(m.uid()), mode(&m))));
    }
    for above in real.ancestors().skip(1) {
        check_above(dir, &real, above)?;
    }
    check_links(dir, &real)
}

/// Refuses `dir` when the path as given passes through a symbolic link
/// that another user owns, or that sits in a directory they could replace
/// it in: they could point it elsewhere after this check.
fn check_links(dir: &Path, real: &Path) -> Result<()> {
    let abs = std::path::absolute(dir).map_err(|e| Error::io("read", dir, e))?;
    for p in abs.ancestors() {
        let Ok(m) = std::fs::symlink_metadata(p) else { continue };
        if !m.file_type().is_symlink() {
            continue;
        }
        if m.uid() != users::euid() && m.uid() != 0 {
            return Err(untrusted(dir, real, format!("is reached through the link {}, which is owned by {}", p.display(), users::describe(m.uid()))));
        }
        if let Some(parent) = p.parent().and_then(|q| std::fs::canonicalize(q).ok()) {
            for above in parent.ancestors() {
                if let Some(why) = above_problem(above)? {
                    return Err(untrusted(dir, real, format!("is reached through the link {}, inside {why}: they can point it elsewhere", p.display())));
                }
            }
        }
    }
    Ok(())
}

/// Refuses `dir` (canonical `real`) when `above`, a directory it is in,
/// is another user's or others can write it (not sticky).
fn check_above(dir: &Path, real: &Path, above: &Path) -> Result<()> {
    match above_problem(above)? {
        Some(why) => Err(untrusted(dir, real, format!("is inside {why}: they can rename it away and put their own in its place"))),
        None => Ok(()),
    }
}

/// What makes `above` a place another user could replace an entry of:
/// `DIR, which is owned by U` or `DIR (owner U, mode M), which other
/// users can write`; None when it is safe.
fn above_problem(above: &Path) -> Result<Option<String>> {
    let me = users::euid();
    let a = std::fs::metadata(above).map_err(|e| Error::io("read", above, e))?;
    if a.uid() != me && a.uid() != 0 {
        return Ok(Some(format!("{}, which is owned by {}", above.display(), users::describe(a.uid()))));
    }
    if writable_by_others(&a, true) {
        return Ok(Some(format!("{} (owner {}, mode {:04o}), which other users can write", above.display(), users::describe(a.uid()), mode(&a))));
    }
    Ok(None)
}

fn mode(m: &std::fs::Metadata) -> u32 {
    m.permissions().mode() & 0o7777
}

/// Whether someone other than the owner can write in the directory `m`
/// (`sticky_ok`: a sticky directory keeps each entry its owner's).
fn writable_by_others(m: &std::fs::Metadata, sticky_ok: bool) -> bool {
    let mode = mode(m);
    if sticky_ok && mode & 0o1000 != 0 {
        return false;
    }
    mode & 0o002 != 0 || (mode & 0o020 != 0 && !private_group(m.uid(), m.gid()))
}

/// Whether `gid` is the private group of user `uid`: its primary group,
/// of the same name, listing no other member.
fn private_group(uid: u32, gid: u32) -> bool {
    let (Some(u), Some(g)) = (users::user(uid), users::group(gid)) else { return false };
    u.gid == gid && g.name == u.name && g.members.iter().all(|m| *m == u.name)
}

/// Whether `real` (canonical) is in a directory `NEURONCUSTOMOP_TRUST_DIR`
/// lists, or the list is `*`.
fn trusted_by_env(real: &Path) -> bool {
    let Some(list) = std::env::var_os(TRUST_ENV) else { return false };
    std::env::split_paths(&list).filter(|p| !p.as_os_str().is_empty()).any(|p| {
        if p == Path::new("*") {
            return true;
        }
        let p = std::fs::canonicalize(&p).unwrap_or(p);
        p.is_absolute() && real.starts_with(&p)
    })
}

fn untrusted(dir: &Path, real: &Path, why: String) -> Error {
    let shown: PathBuf = if real == dir { dir.to_path_buf() } else { real.to_path_buf() };
    Error::new(
        ErrorKind::Untrusted,
        format!(
            "{} {why}; a build directory is code (its library is loaded and run as you, its stamps decide what is rebuilt), \
             so it is refused before anything in it is read. If you trust who controls it, set {TRUST_ENV}={} \
             (a colon-separated list of directories, or * for any); otherwise build into a directory of your own",
            shown.display(),
            shown.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_private_directory_passes_and_a_writable_one_is_refused() {
        let d = tempfile::tempdir().unwrap();
        let own = d.path().join("mine");
        create(&own).unwrap();
        assert_eq!(std::fs::metadata(&own).unwrap().permissions().mode() & 0o777, 0o700);
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check(&own).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Untrusted);
        assert!(e.message.contains("mode 0777) can be written by other users") && e.message.contains(&format!("{TRUST_ENV}=")), "{e}");
        // Inside a directory others can write (not sticky): refused too.
        std::fs::create_dir(own.join("in")).unwrap();
        let e = check(&own.join("in")).unwrap_err();
        assert!(e.message.contains("which other users can write"), "{e}");
        // Sticky, as /tmp: passes.
        std::fs::set_permissions(&own, std::fs::Permissions::from_mode(0o1777)).unwrap();
        check(&own.join("in")).unwrap();
        // Reached through a link in a directory others can write (not
        // sticky): refused, though the directory it points to is fine.
        let open = d.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::os::unix::fs::symlink(own.join("in"), open.join("link")).unwrap();
        check(&open.join("link")).unwrap();
        std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
        let e = check(&open.join("link")).unwrap_err();
        assert!(e.message.contains("which other users can write"), "{e}");
    }
}
