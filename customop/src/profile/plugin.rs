//! The profile's TCG plugin, as customop-emulator builds it: in the build
//! directory's work folder (`profile/`), once per source version.

use crate::error::{Error, ErrorKind, Result};
use std::path::{Path, PathBuf};

/// The built plugin under `work` (built if missing or stale).
pub fn built(work: &Path) -> Result<PathBuf> {
    customop_emulator::plugin::built(&work.join("profile")).map_err(|e| Error::new(ErrorKind::Environment, e.0))
}
