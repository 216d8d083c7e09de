//! The state file of `serve --state FILE`: the description in force
//! (see `in_force.rs`), written after every change applied and read back
//! at the next start. A daemon run as root trusts it no more than its
//! run directory: its directory must be the caller's and writable by no
//! one else (see `run_dir::prepare`), and the file the caller's, not a
//! link, writable by no one else. Each write is whole or not at all: a
//! private temporary file beside it, synced, renamed over it, the
//! directory synced.

use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use crate::run_dir;

/// The largest state file read (bytes): a million routes fit.
pub const MAX_STATE: u64 = 256 << 20;

/// A state file whose place has been checked.
#[derive(Clone, Debug)]
pub struct StateFile {
    path: PathBuf,
}

impl StateFile {
    /// The state file at `path`, its directory made (0700) if missing and
    /// checked; the file itself, if there, checked too. The error names
    /// the file and what is wrong.
    pub fn at(path: &Path) -> Result<Self, String> {
        let shown = path.display();
        let name = path.file_name().ok_or_else(|| format!("state file {shown}: not a file name"))?;
        let dir = run_dir::prepare(path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new(".")))
            .map_err(|e| format!("state file {shown}: {e}"))?;
        let file = Self { path: dir.join(name) };
        if let Ok(meta) = std::fs::symlink_metadata(&file.path) {
            let me = unsafe { libc::geteuid() };
            if meta.file_type().is_symlink() || !meta.is_file() {
                return Err(format!("state file {shown} is not a plain file (a link or something else): remove it or give another --state"));
            }
            if meta.uid() != me || meta.mode() & run_dir::WRITABLE_BY_OTHERS != 0 {
                return Err(format!("state file {shown} is owned by uid {} or writable by others (mode {:o}): someone else could choose what is served; remove it or give another --state", meta.uid(), meta.mode() & 0o7777));
            }
        }
        Ok(file)
    }

    /// Its text, if there is one.
    pub fn read(&self) -> Result<Option<String>, String> {
        let shown = self.path.display();
        let mut file = match OpenOptions::new().read(true).custom_flags(libc::O_NOFOLLOW).open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("state file {shown}: {e}")),
        };
        let mut text = String::new();
        (&mut file).take(MAX_STATE + 1).read_to_string(&mut text).map_err(|e| format!("state file {shown}: {e}"))?;
        if text.len() as u64 > MAX_STATE {
            return Err(format!("state file {shown} is over {MAX_STATE} bytes"));
        }
        Ok(Some(text))
    }

    /// Replaces it with `text`, whole or not at all.
    pub fn write(&self, text: &[u8]) -> Result<(), String> {
        let shown = self.path.display();
        let dir = self.path.parent().expect("made from a directory and a name");
        let temporary = dir.join(format!(".{}.{}", self.path.file_name().expect("a name").to_string_lossy(), std::process::id()));
        let _ = std::fs::remove_file(&temporary);
        let written = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW)
            .open(&temporary)
            .and_then(|mut f| f.write_all(text).and_then(|()| f.sync_all()))
            .and_then(|()| std::fs::rename(&temporary, &self.path))
            .and_then(|()| File::open(dir)?.sync_all());
        written.map_err(|e| {
            let _ = std::fs::remove_file(&temporary);
            format!("state file {shown}: cannot write it: {e}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sluice-state-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn a_state_is_written_whole_and_read_back() {
        let dir = scratch("written");
        let file = StateFile::at(&dir.join("state.json")).unwrap();
        assert_eq!(file.read().unwrap(), None, "none before the first write");
        file.write(b"{\"a\": 1}").unwrap();
        file.write(b"{\"a\": 2}").unwrap();
        assert_eq!(file.read().unwrap().as_deref(), Some("{\"a\": 2}"));
        let mode = std::fs::metadata(dir.join("state.json")).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1, "no temporary file left");
        std::fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_state_others_could_write_or_a_link_is_refused() {
        let dir = scratch("refused");
        StateFile::at(&dir.join("state.json")).unwrap().write(b"{}").unwrap();
        std::fs::set_permissions(dir.join("state.json"), std::fs::Permissions::from_mode(0o666)).unwrap();
        assert!(StateFile::at(&dir.join("state.json")).unwrap_err().contains("writable by others"));
        std::os::unix::fs::symlink("/etc/passwd", dir.join("link.json")).unwrap();
        assert!(StateFile::at(&dir.join("link.json")).unwrap_err().contains("not a plain file"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        assert!(StateFile::at(&dir.join("state.json")).unwrap_err().contains("writable by group or others"));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
