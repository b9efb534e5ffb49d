//! The system's user and group entries (`getpwuid_r`, `getgrgid_r`): a
//! user's name and home directory, a group's name and members. Read from
//! the user database itself, never from `$HOME` or `$USER`, which the
//! environment sets (or leaves unset: a systemd unit, `env -i`).

use std::ffi::{CStr, OsString};
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

/// One passwd entry's fields this tool reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct User {
    pub name: String,
    pub home: PathBuf,
    /// The primary group.
    pub gid: u32,
}

/// One group entry's fields this tool reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    pub name: String,
    /// The users listed as members (not those whose primary group it is).
    pub members: Vec<String>,
}

/// The effective user id of this process.
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// The passwd entry of `uid`, None when there is none.
pub fn user(uid: u32) -> Option<User> {
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: passwd is plain data; all zeroes is a valid value.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::passwd = std::ptr::null_mut();
        // SAFETY: every pointer is to a live local of the size passed;
        // getpwuid_r writes the entry's strings into `buf` only.
        let rc = unsafe { libc::getpwuid_r(uid, &mut pw, buf.as_mut_ptr().cast(), buf.len(), &mut found) };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || found.is_null() || pw.pw_name.is_null() || pw.pw_dir.is_null() {
            return None;
        }
        // SAFETY: on success both point at NUL-terminated strings in `buf`.
        let (name, dir) = unsafe { (CStr::from_ptr(pw.pw_name), CStr::from_ptr(pw.pw_dir)) };
        return Some(User { name: name.to_string_lossy().into_owned(), home: PathBuf::from(OsString::from_vec(dir.to_bytes().to_vec())), gid: pw.pw_gid });
    }
}

/// The group entry of `gid`, None when there is none.
pub fn group(gid: u32) -> Option<Group> {
    let mut buf = vec![0u8; 1024];
    loop {
        // SAFETY: group is plain data; all zeroes is a valid value.
        let mut gr: libc::group = unsafe { std::mem::zeroed() };
        let mut found: *mut libc::group = std::ptr::null_mut();
        // SAFETY: as in `user`: live locals, strings written into `buf`.
        let rc = unsafe { libc::getgrgid_r(gid, &mut gr, buf.as_mut_ptr().cast(), buf.len(), &mut found) };
        if rc == libc::ERANGE && buf.len() < 1 << 20 {
            buf.resize(buf.len() * 4, 0);
            continue;
        }
        if rc != 0 || found.is_null() || gr.gr_name.is_null() {
            return None;
        }
        // SAFETY: on success gr_name is a NUL-terminated string in `buf`.
        let name = unsafe { CStr::from_ptr(gr.gr_name) }.to_string_lossy().into_owned();
        let mut members = Vec::new();
        let mut m = gr.gr_mem;
        // SAFETY: gr_mem is a NULL-terminated array of NUL-terminated
        // strings in `buf` (or NULL itself).
        unsafe {
            while !m.is_null() && !(*m).is_null() {
                members.push(CStr::from_ptr(*m).to_string_lossy().into_owned());
                m = m.add(1);
            }
        }
        return Some(Group { name, members });
    }
}

/// `uid` for a message: `name (uid N)`, or `uid N` when it has no entry.
pub fn describe(uid: u32) -> String {
    match user(uid) {
        Some(u) => format!("{} (uid {uid})", u.name),
        None => format!("uid {uid}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_found_by_its_id() {
        let root = user(0).expect("uid 0 has a passwd entry");
        assert_eq!(root.name, "root");
        assert!(root.home.is_absolute(), "{root:?}");
        assert_eq!(describe(0), "root (uid 0)");
        assert_eq!(group(0).map(|g| g.name), Some("root".to_owned()));
        assert_eq!(describe(4_000_000_000), "uid 4000000000");
    }
}
