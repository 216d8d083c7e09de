//! Which CPU cores a run's workers are pinned to. A core is claimed with
//! an exclusive lock on a file per core (in `$TMPDIR/sluice-cores`, the
//! holder's pid inside), so that two runs at once take different cores;
//! the kernel drops the lock when the process ends, however it ends.
//! Engines of one process share the cores it holds (runs from several
//! threads of one program), and a run finds no free core only when other
//! processes hold them all: then it is refused with their pids.

use std::collections::HashMap;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::PathBuf;
use std::sync::Mutex;

use crate::error::{Error, Result};

/// Cores this process holds: core index → (its lock file, engines using it).
static HELD: Mutex<Option<HashMap<usize, (File, usize)>>> = Mutex::new(None);

/// The cores one engine holds; they are released when it is dropped.
pub struct Cores {
    /// Core indices (into `core_affinity::get_core_ids()`), at least one.
    ids: Vec<core_affinity::CoreId>,
    held: Vec<usize>,
}

impl Cores {
    /// Claims up to `workers` cores no other process holds (this process's
    /// own count as free). Refuses when there is none.
    pub fn claim(workers: usize) -> Result<Self> {
        let all = core_affinity::get_core_ids().unwrap_or_default();
        if all.is_empty() {
            return Ok(Self { ids: Vec::new(), held: Vec::new() });
        }
        let folder = lock_folder();
        let _ = std::fs::create_dir_all(&folder);
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let held = held.get_or_insert_with(HashMap::new);
        let mut mine = Vec::new();
        let mut taken = Vec::new();
        for (i, _) in all.iter().enumerate() {
            if mine.len() == workers {
                break;
            }
            if let Some((_, users)) = held.get_mut(&i) {
                *users += 1;
                mine.push(i);
                continue;
            }
            match lock(&folder, i) {
                Ok(Some(file)) => {
                    held.insert(i, (file, 1));
                    mine.push(i);
                }
                Ok(None) => taken.push((i, holder(&folder, i))),
                // A core whose lock file cannot be made at all (a read-only
                // temporary folder) is used without a claim.
                Err(_) => mine.push(i),
            }
        }
        if mine.is_empty() {
            let list: Vec<String> = taken.iter().map(|(core, pid)| format!("core {core} (pid {pid})")).collect();
            return Err(Error::Pipeline(format!(
                "every CPU core is taken by another sluice run: {}; wait for one to end or stop it",
                list.join(", ")
            )));
        }
        let ids = mine.iter().map(|&i| all[i]).collect();
        Ok(Self { ids, held: mine })
    }

    /// The core worker `w` runs on (workers share cores round-robin when
    /// there are more of them), or `None` where cores cannot be told apart.
    pub fn of_worker(&self, w: usize) -> Option<core_affinity::CoreId> {
        (!self.ids.is_empty()).then(|| self.ids[w % self.ids.len()])
    }

    /// Cores held (at least one where cores can be told apart).
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no core could be told apart (workers are then not pinned).
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }
}

impl Drop for Cores {
    fn drop(&mut self) {
        let mut held = HELD.lock().unwrap_or_else(|e| e.into_inner());
        let Some(held) = held.as_mut() else { return };
        for i in &self.held {
            if let Some((_, users)) = held.get_mut(i) {
                *users -= 1;
                if *users == 0 {
                    // Dropping the file releases its lock.
                    held.remove(i);
                }
            }
        }
    }
}

fn lock_folder() -> PathBuf {
    std::env::temp_dir().join("sluice-cores")
}

/// The lock of core `i`: `Some(file)` when this process now holds it,
/// `None` when another process does.
fn lock(folder: &std::path::Path, i: usize) -> std::io::Result<Option<File>> {
    let mut file = File::options().read(true).write(true).create(true).truncate(false).open(folder.join(format!("core-{i}")))?;
    match file.try_lock() {
        Ok(()) => {
            file.set_len(0)?;
            file.seek(SeekFrom::Start(0))?;
            write!(file, "{}", std::process::id())?;
            Ok(Some(file))
        }
        Err(std::fs::TryLockError::WouldBlock) => Ok(None),
        Err(std::fs::TryLockError::Error(e)) => Err(e),
    }
}

/// The pid written in core `i`'s lock file ("?" when unreadable).
fn holder(folder: &std::path::Path, i: usize) -> String {
    let mut pid = String::new();
    match File::open(folder.join(format!("core-{i}"))).and_then(|mut f| f.read_to_string(&mut pid)) {
        Ok(_) if !pid.trim().is_empty() => pid.trim().to_string(),
        _ => "?".into(),
    }
}
