//! Where `load()` builds when no build directory is given: the user's
//! cache, by the XDG base directory rules — `$XDG_CACHE_HOME` when it is
//! an absolute path (an empty or relative one is ignored, as the rules
//! say), else `.cache` in `$HOME` when that is absolute, else in the home
//! directory of the effective user's passwd entry (a systemd unit or
//! `env -i` sets no `HOME`). Never a shared directory such as `/tmp`, where whoever
//! made the name first would own the cache.

use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};

/// The cache directory of this tool, `<cache home>/neuroncustomop`,
/// created 0700 when missing and checked ([`crate::owned_dir`]).
pub fn base() -> Result<PathBuf> {
    let var = |v: &str| std::env::var_os(v).map(PathBuf::from);
    let dir = cache_home(var("XDG_CACHE_HOME").as_deref(), var("HOME").as_deref())?.join("neuroncustomop");
    crate::owned_dir::create(&dir)?;
    Ok(dir)
}

/// The user's cache home given `$XDG_CACHE_HOME` (`xdg`) and `$HOME`.
fn cache_home(xdg: Option<&Path>, home: Option<&Path>) -> Result<PathBuf> {
    if let Some(x) = xdg.filter(|x| x.is_absolute()) {
        return Ok(x.to_path_buf());
    }
    if let Some(h) = home.filter(|h| h.is_absolute()) {
        return Ok(h.join(".cache"));
    }
    let uid = crate::users::euid();
    match crate::users::user(uid) {
        Some(u) if u.home.is_absolute() => Ok(u.home.join(".cache")),
        _ => Err(Error::new(
            ErrorKind::Environment,
            format!(
                "no cache directory for the default build directory: neither XDG_CACHE_HOME nor HOME is an absolute path and uid {uid} has no home directory in the user database; \
                 give build_directory= or set XDG_CACHE_HOME"
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_empty_or_relative_xdg_cache_home_is_ignored() {
        let home = crate::users::user(crate::users::euid()).unwrap().home.join(".cache");
        let h = Some(Path::new("/h"));
        assert_eq!(cache_home(Some(Path::new("/x/cache")), h).unwrap(), PathBuf::from("/x/cache"));
        assert_eq!(cache_home(Some(Path::new("")), h).unwrap(), PathBuf::from("/h/.cache"));
        assert_eq!(cache_home(Some(Path::new("rel/cache")), h).unwrap(), PathBuf::from("/h/.cache"));
        // No HOME (or a relative one): the passwd entry's, never /tmp.
        assert_eq!(cache_home(Some(Path::new("")), Some(Path::new("rel"))).unwrap(), home);
        assert_eq!(cache_home(None, None).unwrap(), home);
    }
}
