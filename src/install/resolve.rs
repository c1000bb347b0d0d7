//! Whether the command a registration runs resolves, as Claude Code will resolve it: a path
//! (with `${CLAUDE_PLUGIN_ROOT}` substituted for a plugin's hooks) must be an executable file;
//! a bare name (exec form, or the first word of the shell form) is looked up on the `PATH`
//! Claude Code gives its hooks: the `env.PATH` of its settings files when one sets it (local
//! over project over user, as Claude Code layers them), else the `PATH` it was started with.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::context::Ctx;
use crate::env;
use crate::store::fs;

/// The `PATH` Claude Code's hooks see. `settings` are the settings files' values, highest
/// precedence first (local, project, user).
pub fn hook_path(cx: &Ctx, settings: &[&Value]) -> Option<OsString> {
    settings
        .iter()
        .find_map(|v| v["env"]["PATH"].as_str().map(OsString::from))
        .or_else(|| cx.env.get_os(env::PATH).cloned())
}

/// Finds an executable `name` in the folders of `path`.
pub fn which(path: Option<&OsStr>, name: &str) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .filter(|d| !d.as_os_str().is_empty())
        .map(|d| d.join(name))
        .find(|p| fs::is_executable(p))
}

/// What a registration's program resolves to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// The executable that will run.
    Found(PathBuf),
    /// A path that is not an executable file.
    Missing(PathBuf),
    /// A bare name not found on the hooks' `PATH`.
    NotOnPath(String),
}

/// Resolves the program of a handler object (`command`, exec or shell form). `plugin_root`
/// replaces `${CLAUDE_PLUGIN_ROOT}` (a plugin's hooks); `path` is [`hook_path`].
pub fn program(h: &Value, plugin_root: Option<&Path>, path: Option<&OsStr>) -> Option<Resolved> {
    let command = h.get("command").and_then(Value::as_str)?.trim();
    let exec = h.get("args").is_some_and(Value::is_array);
    let program = if exec {
        command.to_string()
    } else {
        shell_program(command)?
    };
    let program = match plugin_root {
        Some(root) => program.replace("${CLAUDE_PLUGIN_ROOT}", &root.to_string_lossy()),
        None => program,
    };
    Some(if program.contains('/') {
        let p = PathBuf::from(&program);
        if fs::is_executable(&p) {
            Resolved::Found(p)
        } else {
            Resolved::Missing(p)
        }
    } else {
        match which(path, &program) {
            Some(p) => Resolved::Found(p),
            None => Resolved::NotOnPath(program),
        }
    })
}

/// The program of a shell-form command: its first word, unquoted.
fn shell_program(command: &str) -> Option<String> {
    let command = command.trim_start();
    for q in ['"', '\''] {
        if let Some(rest) = command.strip_prefix(q) {
            return rest.split(q).next().map(str::to_string);
        }
    }
    command.split_whitespace().next().map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn shell_and_exec_programs() {
        assert_eq!(shell_program("taskhook hook").as_deref(), Some("taskhook"));
        assert_eq!(
            shell_program(" \"/a b/taskhook\" hook").as_deref(),
            Some("/a b/taskhook")
        );
        let h = json!({"command": "/nowhere/taskhook", "args": ["hook"]});
        assert_eq!(
            program(&h, None, None),
            Some(Resolved::Missing("/nowhere/taskhook".into()))
        );
        let h = json!({"command": "taskhook", "args": ["hook"]});
        assert_eq!(
            program(&h, None, Some(OsStr::new(""))),
            Some(Resolved::NotOnPath("taskhook".into()))
        );
        let h = json!({"command": "${CLAUDE_PLUGIN_ROOT}/bin/taskhook", "args": ["hook"]});
        assert_eq!(
            program(&h, Some(Path::new("/plug")), None),
            Some(Resolved::Missing("/plug/bin/taskhook".into()))
        );
    }
}
