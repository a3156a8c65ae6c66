//! The result cache: Verilator models, lint verdicts and Yosys results, each filed under a hash
//! of everything it depends on (the Verilog text, the tool's version, the options), so an
//! unchanged design costs nothing the second time, in this clone or in a fresh one.
//!
//! It lives outside the clone by default: `$FERROCE_CACHE`, else `$XDG_CACHE_HOME/ferroce`,
//! else `~/.cache/ferroce`. Deleting it is always safe; `ferroce cache` shows its size and
//! `ferroce cache --clear` empties it. Entries are written in a scratch name and renamed into
//! place, so an interrupted run never leaves a half-made entry that looks finished.
//!
//! Inside one process, two threads that need the same entry do not both make it: the second
//! waits for the first ([`Cache::once`]). Two processes may both make it; the first rename wins
//! and the other copy is dropped.

use crate::{Result, SimError};
use sha2::{Digest, Sha256};
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Condvar, Mutex, OnceLock};

/// The cache's root directory (see the module docs).
pub fn root() -> PathBuf {
    if let Some(d) = std::env::var_os("FERROCE_CACHE") {
        return PathBuf::from(d);
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join("ferroce");
    }
    if let Some(d) = std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(d).join(".cache").join("ferroce");
    }
    workspace().join("target").join("ferroce-cache")
}

/// The workspace root (the directory holding `spec/`, `hdl/`, `sim/`, ...).
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// A `map_err` for an I/O error on `path`.
pub fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> SimError + '_ {
    move |source| SimError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// A content hash being built: every part that decides the result goes in.
pub struct Key(Sha256);

impl Key {
    pub fn new(kind: &str) -> Key {
        let mut h = Sha256::new();
        h.update(kind.as_bytes());
        h.update([0u8]);
        Key(h)
    }
    pub fn text(mut self, s: &str) -> Key {
        self.0.update(s.as_bytes());
        self.0.update([0u8]);
        self
    }
    /// A file's content (not its name or time).
    pub fn file(mut self, path: &Path) -> Result<Key> {
        self.0.update(std::fs::read(path).map_err(io_err(path))?);
        self.0.update([0u8]);
        Ok(self)
    }
    pub fn files(self, paths: &[PathBuf]) -> Result<Key> {
        paths.iter().try_fold(self, |k, p| k.file(p))
    }
    /// The first line `cmd --version` (or the given argument) prints: results made by another
    /// version of a tool are never reused.
    pub fn tool(self, cmd: &str, arg: &str) -> Result<Key> {
        let v = tool_version(cmd, arg)?;
        Ok(self.text(&v))
    }
    /// 16 hex digits of the hash.
    pub fn hex(self) -> String {
        self.0
            .finalize()
            .iter()
            .take(8)
            .map(|b| format!("{b:02x}"))
            .collect()
    }
}

/// `cmd arg`'s first output line, asked once per process.
pub fn tool_version(cmd: &str, arg: &str) -> Result<String> {
    static SEEN: OnceLock<Mutex<HashMap<String, String>>> = OnceLock::new();
    let seen = SEEN.get_or_init(Default::default);
    let id = format!("{cmd} {arg}");
    if let Some(v) = seen.lock().map_err(|_| poisoned())?.get(&id) {
        return Ok(v.clone());
    }
    let out = Command::new(cmd)
        .arg(arg)
        .output()
        .map_err(|source| SimError::Spawn {
            cmd: id.clone(),
            source,
        })?;
    let mut text = String::from_utf8_lossy(&out.stdout).into_owned();
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    let v = text.lines().next().unwrap_or("").trim().to_string();
    seen.lock().map_err(|_| poisoned())?.insert(id, v.clone());
    Ok(v)
}

pub(crate) fn poisoned() -> SimError {
    SimError::Design("a thread panicked while holding the cache's lock".into())
}

/// The cache's directories under [`root`]: Verilator models, lint verdicts, Yosys checks,
/// synthesis results and ECP5 place-and-route reports.
pub const DIRS: [&str; 5] = ["models", "lint", "check", "synth", "pnr"];

/// One directory of the cache ([`DIRS`]).
pub struct Cache {
    pub dir: PathBuf,
}

impl Cache {
    /// `root()/<name>`, created if missing.
    pub fn open(name: &str) -> Result<Cache> {
        Cache::at(root().join(name))
    }
    pub fn at(dir: PathBuf) -> Result<Cache> {
        std::fs::create_dir_all(&dir).map_err(io_err(&dir))?;
        sweep(&dir);
        Ok(Cache { dir })
    }

    /// Run `make` unless another thread of this process is already making `entry`; then wait
    /// for it and run `make` again, which by then finds its result in place. `make` may fail
    /// with any error a [`SimError`] converts into (the FPGA flow's, for one).
    pub fn once<T, E: From<SimError>>(
        &self,
        entry: &str,
        make: impl FnOnce() -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        static BUSY: OnceLock<(Mutex<HashSet<PathBuf>>, Condvar)> = OnceLock::new();
        let (busy, cv) = BUSY.get_or_init(Default::default);
        let id = self.dir.join(entry);
        {
            let mut set = busy.lock().map_err(|_| poisoned())?;
            while set.contains(&id) {
                set = cv.wait(set).map_err(|_| poisoned())?;
            }
            set.insert(id.clone());
        }
        struct Release<'a>(&'a Mutex<HashSet<PathBuf>>, &'a Condvar, PathBuf);
        impl Drop for Release<'_> {
            fn drop(&mut self) {
                if let Ok(mut set) = self.0.lock() {
                    set.remove(&self.2);
                }
                self.1.notify_all();
            }
        }
        let _release = Release(busy, cv, id);
        make()
    }

    /// A fresh scratch directory beside the entries, for making one in.
    pub fn scratch(&self, entry: &str) -> Result<PathBuf> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!("{entry}.tmp{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&tmp);
        std::fs::create_dir_all(&tmp).map_err(io_err(&tmp))?;
        Ok(tmp)
    }

    /// Move a finished scratch directory or file into place as `entry`. If another process
    /// got there first, keep its copy.
    pub fn publish(&self, tmp: &Path, entry: &str) -> Result<PathBuf> {
        let dst = self.dir.join(entry);
        match std::fs::rename(tmp, &dst) {
            Ok(()) => Ok(dst),
            Err(_) if dst.exists() => {
                let _ = std::fs::remove_dir_all(tmp);
                let _ = std::fs::remove_file(tmp);
                Ok(dst)
            }
            Err(e) => Err(io_err(&dst)(e)),
        }
    }

    /// Write a small text entry atomically.
    pub fn put_text(&self, entry: &str, text: &str) -> Result<PathBuf> {
        static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let tmp = self
            .dir
            .join(format!("{entry}.tmp{}-t{n}", std::process::id()));
        std::fs::write(&tmp, text).map_err(io_err(&tmp))?;
        self.publish(&tmp, entry)
    }

    pub fn get_text(&self, entry: &str) -> Option<String> {
        std::fs::read_to_string(self.dir.join(entry)).ok()
    }
}

/// Remove scratch entries (`<entry>.tmp<pid>-<n>`) left by processes that no longer run: a
/// build that failed keeps its scratch for its logs until then. Once per directory per process.
fn sweep(dir: &Path) {
    static SWEPT: OnceLock<Mutex<HashSet<PathBuf>>> = OnceLock::new();
    let swept = SWEPT.get_or_init(Default::default);
    let first = swept
        .lock()
        .map(|mut s| s.insert(dir.to_path_buf()))
        .unwrap_or(false);
    if !first {
        return;
    }
    // Whether a process runs is read from /proc; without it, sweep nothing.
    if !Path::new("/proc/self").exists() {
        return;
    }
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.filter_map(|e| e.ok()) {
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((_, rest)) = name.rsplit_once(".tmp") else {
            continue;
        };
        let pid: String = rest.chars().take_while(char::is_ascii_digit).collect();
        let Ok(pid) = pid.parse::<u32>() else {
            continue;
        };
        if pid != std::process::id() && !Path::new(&format!("/proc/{pid}")).exists() {
            let p = e.path();
            let _ = std::fs::remove_dir_all(&p);
            let _ = std::fs::remove_file(&p);
        }
    }
}

/// The cache's size in bytes and its number of entries (files and directories directly under
/// each of [`DIRS`]).
pub fn usage() -> (u64, usize) {
    fn size(p: &Path) -> u64 {
        match std::fs::symlink_metadata(p) {
            Ok(m) if m.is_dir() => std::fs::read_dir(p)
                .map(|rd| rd.filter_map(|e| e.ok()).map(|e| size(&e.path())).sum())
                .unwrap_or(0),
            Ok(m) => m.len(),
            Err(_) => 0,
        }
    }
    let r = root();
    DIRS.iter()
        .map(|d| r.join(d))
        .fold((0, 0), |(bytes, n), d| {
            let entries = std::fs::read_dir(&d).map_or(0, |rd| rd.count());
            (bytes + size(&d), n + entries)
        })
}

/// Bound the number of compiler and synthesis processes this process runs at once (the
/// machine's cores, or `$FERROCE_JOBS`), whichever threads ask.
pub fn job<T>(f: impl FnOnce() -> T) -> T {
    static SLOTS: OnceLock<(Mutex<usize>, Condvar)> = OnceLock::new();
    let (free, cv) = SLOTS.get_or_init(|| {
        let n = std::env::var("FERROCE_JOBS")
            .ok()
            .and_then(|s| s.parse().ok())
            .filter(|&n: &usize| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
        (Mutex::new(n), Condvar::new())
    });
    {
        let mut g = free.lock().unwrap_or_else(|e| e.into_inner());
        while *g == 0 {
            g = cv.wait(g).unwrap_or_else(|e| e.into_inner());
        }
        *g -= 1;
    }
    struct Give<'a>(&'a Mutex<usize>, &'a Condvar);
    impl Drop for Give<'_> {
        fn drop(&mut self) {
            *self.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
            self.1.notify_one();
        }
    }
    let _give = Give(free, cv);
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn once_runs_one_maker_at_a_time_per_entry() {
        let dir = std::env::temp_dir().join(format!("ferroce-cache-test-{}", std::process::id()));
        let c = Cache::at(dir.clone()).unwrap();
        let active = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    c.once("x", || {
                        let n = active.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                        assert_eq!(n, 0, "two makers of one entry at once");
                        std::thread::sleep(std::time::Duration::from_millis(20));
                        active.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
                        Ok::<(), SimError>(())
                    })
                    .unwrap();
                });
            }
        });
        let p = c.put_text("t", "hello").unwrap();
        assert_eq!(c.get_text("t").as_deref(), Some("hello"));
        assert!(p.ends_with("t"));
        let _ = std::fs::remove_dir_all(dir);
    }

    #[test]
    fn keys_change_with_every_part() {
        let a = Key::new("k").text("a").hex();
        assert_eq!(a, Key::new("k").text("a").hex());
        assert_ne!(a, Key::new("k").text("b").hex());
        assert_ne!(a, Key::new("j").text("a").hex());
        // Parts are delimited: ("ab", "") differs from ("a", "b").
        assert_ne!(
            Key::new("k").text("ab").text("").hex(),
            Key::new("k").text("a").text("b").hex()
        );
    }
}
