//! The run directory kept as a daemon run as root must keep it: the
//! caller's own, writable by nobody else, reached through no directory
//! another user could change, and its socket made under a private name
//! and renamed into place, so that no one else can own, replace or
//! connect to it.

use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

/// Group- and other-write permission bits.
pub(crate) const WRITABLE_BY_OTHERS: u32 = 0o022;
/// The sticky bit: in a directory, only an entry's owner may rename or remove it.
const STICKY: u32 = 0o1000;

/// Makes `dir` (mode 0700, with any missing parents) if it is not there;
/// then checks that it is safe for a daemon's socket and reports: a
/// directory, not a link; owned by the caller; writable by no one else;
/// and every directory above it owned by root or the caller and writable
/// by no one else unless sticky (as `/tmp`). The error names the
/// directory and what is wrong with it.
pub fn prepare(dir: &Path) -> Result<PathBuf, String> {
    let shown = dir.display();
    let absolute = std::path::absolute(dir).map_err(|e| format!("run directory {shown}: {e}"))?;
    if std::fs::symlink_metadata(&absolute).is_err() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(&absolute).map_err(|e| format!("run directory {shown}: cannot make it: {e}"))?;
    }
    let me = unsafe { libc::geteuid() };
    let meta = std::fs::symlink_metadata(&absolute).map_err(|e| format!("run directory {shown}: {e}"))?;
    if meta.file_type().is_symlink() {
        return Err(format!("run directory {shown} is a symbolic link: give the directory it points to, if it is yours"));
    }
    if !meta.is_dir() {
        return Err(format!("run directory {shown} is not a directory"));
    }
    if meta.uid() != me {
        return Err(format!("run directory {shown} is owned by uid {}, not by this user (uid {me}): its owner could replace the socket or plant links; remove it or give another --run-dir", meta.uid()));
    }
    if meta.mode() & WRITABLE_BY_OTHERS != 0 {
        return Err(format!("run directory {shown} is writable by group or others (mode {:o}): they could replace the socket or plant links; chmod go-w it or give another --run-dir", meta.mode() & 0o7777));
    }
    let parent = absolute.parent().map(|p| p.canonicalize().map_err(|e| format!("run directory {shown}: {}: {e}", p.display()))).transpose()?;
    for above in parent.iter().flat_map(|p| p.ancestors()) {
        let meta = std::fs::metadata(above).map_err(|e| format!("run directory {shown}: {}: {e}", above.display()))?;
        if meta.uid() != 0 && meta.uid() != me {
            return Err(format!("run directory {shown}: {} above it is owned by uid {}, who could move it aside and put another in its place; give a --run-dir under a directory of yours or root's", above.display(), meta.uid()));
        }
        if meta.mode() & WRITABLE_BY_OTHERS != 0 && meta.mode() & STICKY == 0 {
            return Err(format!("run directory {shown}: {} above it is writable by group or others without the sticky bit (mode {:o}): they could move it aside and put another in its place", above.display(), meta.mode() & 0o7777));
        }
    }
    Ok(absolute)
}

/// Listens on `dir/name` (mode 0600): bound under a private temporary
/// name, made 0600, then renamed over a stale socket there. An error if a
/// live one answers at `dir/name` already.
pub fn listen(dir: &Path, name: &str) -> Result<(UnixListener, PathBuf), String> {
    let path = dir.join(name);
    if UnixStream::connect(&path).is_ok() {
        return Err(format!("{} answers: another sluice serve runs in {}", path.display(), dir.display()));
    }
    let private = dir.join(format!(".{name}.{}", std::process::id()));
    let _ = std::fs::remove_file(&private);
    let listener = UnixListener::bind(&private).map_err(|e| format!("cannot listen on {}: {e}", private.display()))?;
    let placed = std::fs::set_permissions(&private, std::fs::Permissions::from_mode(0o600)).and_then(|()| std::fs::rename(&private, &path));
    if let Err(e) = placed {
        let _ = std::fs::remove_file(&private);
        return Err(format!("cannot listen on {}: {e}", path.display()));
    }
    Ok((listener, path))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sluice-run-dir-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_missing_directory_is_made_private_and_a_shared_one_refused() {
        let dir = scratch("fresh").join("inner");
        prepare(&dir).expect("made");
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = prepare(&dir).expect_err("writable by others");
        assert!(refused.contains("writable by group or others (mode 777)"), "{refused}");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        prepare(&dir).expect("readable by others is fine: the socket is 0600");
        if unsafe { libc::geteuid() } == 0 {
            std::os::unix::fs::chown(&dir, Some(65534), None).unwrap();
            let refused = prepare(&dir).expect_err("another user's");
            assert!(refused.contains("is owned by uid 65534, not by this user (uid 0)"), "{refused}");
        } else {
            eprintln!("skipped: a directory of another user's needs root to make");
        }
        std::fs::remove_dir_all(dir.parent().unwrap()).unwrap();
    }

    #[test]
    fn a_link_or_a_directory_under_a_shared_one_is_refused() {
        let base = scratch("link");
        std::fs::create_dir_all(base.join("real")).unwrap();
        std::os::unix::fs::symlink(base.join("real"), base.join("link")).unwrap();
        assert!(prepare(&base.join("link")).unwrap_err().contains("is a symbolic link"));
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o777)).unwrap();
        let refused = prepare(&base.join("real")).unwrap_err();
        assert!(refused.contains("without the sticky bit"), "{refused}");
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o1777)).unwrap();
        prepare(&base.join("real")).expect("a sticky shared directory above, as /tmp");
        std::fs::remove_dir_all(&base).unwrap();
    }

    #[test]
    fn the_socket_is_private_from_the_start_and_a_live_one_is_not_replaced() {
        let dir = scratch("socket");
        let dir = prepare(&dir).unwrap();
        let (listener, path) = listen(&dir, "s.sock").expect("listens");
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        assert!(listen(&dir, "s.sock").unwrap_err().contains("another sluice serve runs"));
        drop(listener);
        listen(&dir, "s.sock").expect("a stale socket is replaced");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no private name left behind");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
