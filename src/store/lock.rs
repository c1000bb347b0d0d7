//! The sidecar lock: an exclusive advisory lock (`flock` through fd-lock) on a small file beside
//! the state it guards, with a bounded wait.
//!
//! Locks are advisory: they order taskhook processes among themselves, not other writers. The
//! lock file is never deleted (deleting it would let two holders lock different inodes). Locks
//! are taken only on paths that will write; read-only paths never create a lock file.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::env::{Env, TASKHOOK_LOCK_TIMEOUT};
use crate::error::{Error, Result};
use crate::store::fs;

/// Default longest wait for a lock.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Reads `TASKHOOK_LOCK_TIMEOUT` (seconds, decimals allowed); unset means 10 s.
pub fn timeout_from_env(env: &Env) -> Result<Duration> {
    match env.get(TASKHOOK_LOCK_TIMEOUT) {
        None => Ok(DEFAULT_TIMEOUT),
        Some(raw) => raw
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite() && *s >= 0.0 && *s <= 86_400.0)
            .map(Duration::from_secs_f64)
            .ok_or_else(|| {
                Error::BadInput(format!(
                    "{TASKHOOK_LOCK_TIMEOUT} must be a number of seconds between 0 and 86400, got {raw:?}"
                ))
            }),
    }
}

/// Runs `f` while holding the exclusive lock on `lock_path`, waiting until `window.1` at most.
/// `window.0` is when the invocation's first lock wait began: every lock of one invocation
/// shares one deadline, so several contended stores cannot add up their waits.
///
/// The wait retries a non-blocking lock with jittered exponential backoff (1 ms up to 50 ms), so
/// it never blocks past the deadline. The lock is always tried once, even past it. On timeout
/// nothing ran and the error names the lock file and the time waited since the first lock.
pub fn with_lock<R>(
    lock_path: &Path,
    window: (Instant, Instant),
    f: impl FnOnce() -> Result<R>,
) -> Result<R> {
    let (start, deadline) = window;
    let file = fs::open_lock_file(lock_path)?;
    let mut lock = fd_lock::RwLock::new(file);
    let mut backoff = Duration::from_millis(1);
    loop {
        match lock.try_write() {
            Ok(guard) => {
                let out = f();
                drop(guard);
                return out;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => return Err(Error::io("lock", lock_path, e)),
        }
        let now = Instant::now();
        if now >= deadline {
            return Err(Error::LockTimeout {
                path: lock_path.to_path_buf(),
                waited_secs: now.duration_since(start).as_secs_f64(),
            });
        }
        let sleep = jitter(backoff).min(deadline - now);
        std::thread::sleep(sleep);
        backoff = (backoff * 2).min(Duration::from_millis(50));
    }
}

/// Returns a duration between half and all of `d`, varying between calls and processes.
fn jitter(d: Duration) -> Duration {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|t| t.subsec_nanos())
        .unwrap_or(0)
        ^ std::process::id().wrapping_mul(2_654_435_761);
    let frac = 0.5 + f64::from(nanos % 1000) / 2000.0;
    d.mul_f64(frac)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timeout_parsing() {
        assert_eq!(timeout_from_env(&Env::default()).unwrap(), DEFAULT_TIMEOUT);
        let env = Env::from_pairs([(TASKHOOK_LOCK_TIMEOUT, "0.25")]);
        assert_eq!(timeout_from_env(&env).unwrap(), Duration::from_millis(250));
        for bad in ["abc", "-1", "NaN", "1e9"] {
            let env = Env::from_pairs([(TASKHOOK_LOCK_TIMEOUT, bad)]);
            assert!(timeout_from_env(&env).is_err(), "{bad}");
        }
    }
}
