//! What the process-level benches share: reaping a child with `wait4` for its own resource
//! usage (CPU time and peak memory, the child's alone).
#![allow(dead_code)]

use std::process::Child;
use std::time::Duration;

/// A reaped child's exit and resource usage.
pub struct Usage {
    /// Whether it exited with status 0.
    pub ok: bool,
    /// The raw wait status, for messages.
    pub status: i32,
    /// User + system CPU time.
    pub cpu: Duration,
    /// Peak resident memory, in bytes.
    pub max_rss: u64,
}

/// Waits for `child` with `wait4` (which reaps it) and returns its own usage.
pub fn wait_usage(child: &Child) -> Usage {
    let pid = child.id() as libc::pid_t;
    let mut status = 0;
    // SAFETY: rusage is plain data that wait4 fills; `pid` is our own unreaped child.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let got = unsafe { libc::wait4(pid, &mut status, 0, &mut ru) };
    assert_eq!(got, pid, "wait4");
    let tv = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    Usage {
        ok: libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        status,
        cpu: tv(ru.ru_utime) + tv(ru.ru_stime),
        max_rss: ru.ru_maxrss as u64 * 1024,
    }
}
