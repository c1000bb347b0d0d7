//! Environment variables taskhook reads, as documented constants, and an injectable snapshot.
//!
//! Nothing below `cli/` calls `std::env` directly: the CLI takes one [`Env`] snapshot at start
//! and passes it down, so tests can drive every code path with an explicit environment.

use std::collections::HashMap;
use std::ffi::OsString;

/// Project folder override (after `--project-dir`).
pub const TASKHOOK_PROJECT_DIR: &str = "TASKHOOK_PROJECT_DIR";
/// Fixed clock, RFC 3339 (`2026-01-01T00:00:00Z`), for tests, replay and stale detection.
pub const TASKHOOK_NOW: &str = "TASKHOOK_NOW";
/// Longest wait for a sidecar lock, in seconds (decimals allowed); default 10.
pub const TASKHOOK_LOCK_TIMEOUT: &str = "TASKHOOK_LOCK_TIMEOUT";
/// Project folder Claude Code gives its hooks.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";
/// Claude Code's configuration folder (default `~/.claude`).
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Seed 002's named task list.
pub const CLAUDE_CODE_TASK_LIST_ID: &str = "CLAUDE_CODE_TASK_LIST_ID";
/// Seed 002's switch: `false` turns Claude Code's task system off (legacy TodoWrite instead).
pub const CLAUDE_CODE_ENABLE_TASKS: &str = "CLAUDE_CODE_ENABLE_TASKS";
/// Turns Claude Code's task tools on (TaskCreate/TaskUpdate; TodoWrite with
/// `CLAUDE_CODE_ENABLE_TASKS=0`): off by default with current models (`taskhook doctor` says so).
pub const CLAUDE_CODE_ENABLE_TODO_TOOLS: &str = "CLAUDE_CODE_ENABLE_TODO_TOOLS";
/// Seed 002's agent teams, whose teammates share one task list (one numbering).
pub const CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS: &str = "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS";
/// Seed 004's workspace.
pub const CDD_DIR: &str = "CDD_DIR";
/// The user's home folder (after `--home`).
pub const HOME: &str = "HOME";
/// Opt-in: append every hook payload to this file as JSON Lines (what `replay` consumes).
pub const TASKHOOK_CAPTURE: &str = "TASKHOOK_CAPTURE";
/// Turns colour off in human output (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";
/// Set by the shell completion scripts (`taskhook completions SHELL`) when they ask for
/// completions: the shell's name.
pub const TASKHOOK_COMPLETE: &str = "TASKHOOK_COMPLETE";
/// Where `taskhook doctor` looks for the binary (as the plugin's hooks do).
pub const PATH: &str = "PATH";
/// The Claude Code session a command runs in: Claude Code 2.1.330 sets it in the environment of
/// its hooks and of the Bash tool's commands (the payloads' `session_id`). The owner of claims.
pub const CLAUDE_CODE_SESSION_ID: &str = "CLAUDE_CODE_SESSION_ID";
/// Who a person at a terminal is, for claims made outside Claude Code (`user@host`).
pub const USER: &str = "USER";
/// Fallback for [`USER`].
pub const LOGNAME: &str = "LOGNAME";
/// Debug builds only: `taskhook board` panics after its first frame, so the tests can prove
/// the panic gives the terminal back. Release builds ignore it.
pub const TASKHOOK_BOARD_TEST_PANIC: &str = "TASKHOOK_BOARD_TEST_PANIC";

/// The ssh command git runs (sync's fetch and push); when neither this nor [`GIT_SSH`] is set,
/// taskhook's git runs set it to `ssh -o BatchMode=yes` (never a prompt).
pub const GIT_SSH_COMMAND: &str = "GIT_SSH_COMMAND";
/// The older form of [`GIT_SSH_COMMAND`] (a program, no arguments).
pub const GIT_SSH: &str = "GIT_SSH";

/// Every variable taskhook reads; [`Env::from_process`] copies these and no others.
pub const READ: &[&str] = &[
    TASKHOOK_PROJECT_DIR,
    TASKHOOK_NOW,
    TASKHOOK_LOCK_TIMEOUT,
    CLAUDE_PROJECT_DIR,
    CLAUDE_CONFIG_DIR,
    CLAUDE_CODE_TASK_LIST_ID,
    CLAUDE_CODE_ENABLE_TASKS,
    CLAUDE_CODE_ENABLE_TODO_TOOLS,
    CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS,
    CDD_DIR,
    HOME,
    TASKHOOK_CAPTURE,
    NO_COLOR,
    TASKHOOK_COMPLETE,
    PATH,
    CLAUDE_CODE_SESSION_ID,
    USER,
    LOGNAME,
    TASKHOOK_BOARD_TEST_PANIC,
    GIT_SSH_COMMAND,
    GIT_SSH,
];

/// A snapshot of the environment, taken once by the CLI.
#[derive(Debug, Clone, Default)]
pub struct Env {
    vars: HashMap<String, OsString>,
}

impl Env {
    /// Snapshots the variables taskhook reads ([`READ`]) from the process environment; the
    /// rest are never looked at, so never copied.
    pub fn from_process() -> Self {
        let vars = READ
            .iter()
            .filter_map(|k| std::env::var_os(k).map(|v| (k.to_string(), v)))
            .collect();
        Env { vars }
    }

    /// Builds an environment from explicit pairs (tests).
    pub fn from_pairs<I, K, V>(pairs: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<String>,
        V: Into<OsString>,
    {
        Env {
            vars: pairs
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Returns the variable as a string when set, valid UTF-8 and not empty.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.vars
            .get(key)
            .and_then(|v| v.to_str())
            .filter(|s| !s.is_empty())
    }

    /// Returns the raw variable when set and not empty (paths may be non-UTF-8).
    pub fn get_os(&self, key: &str) -> Option<&OsString> {
        self.vars.get(key).filter(|v| !v.is_empty())
    }

    /// Sets a variable in this snapshot (never in the process).
    pub fn set(&mut self, key: &str, value: impl Into<OsString>) {
        self.vars.insert(key.to_string(), value.into());
    }
}

/// Whether a flag variable's value turns it on (`1`, `true`, `yes`, `on`, in any case).
pub fn is_on(value: Option<&str>) -> bool {
    flag_word(value, &["1", "true", "yes", "on"])
}

/// Whether a flag variable's value turns it off (`0`, `false`, `no`, `off`, in any case).
pub fn is_off(value: Option<&str>) -> bool {
    flag_word(value, &["0", "false", "no", "off"])
}

fn flag_word(value: Option<&str>, words: &[&str]) -> bool {
    value.is_some_and(|v| words.contains(&v.trim().to_ascii_lowercase().as_str()))
}

/// This machine's host name (`gethostname`, no name-service lookup), when it has a printable
/// one.
pub fn hostname() -> Option<String> {
    #[cfg(unix)]
    {
        let mut buf = [0u8; 256];
        // SAFETY: the buffer is valid for its whole length during the call; gethostname
        // writes at most that many bytes.
        let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
        if rc != 0 {
            return None;
        }
        let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
        let name = std::str::from_utf8(&buf[..end]).ok()?;
        let ok = !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'));
        ok.then(|| name.to_string())
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_snapshot_holds_only_read_variables() {
        let env = Env::from_process();
        assert!(env.vars.keys().all(|k| READ.contains(&k.as_str())));
    }
}
