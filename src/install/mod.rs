//! taskhook's registrations in Claude Code's settings files: merged in without dropping or
//! reordering anything of the user's, idempotent, removable exactly, and written so the diff
//! is only the handlers added or removed.
//!
//! - this module decides *what* changes: a list of [`jsonedit::Op`]s (add a group, update a
//!   moved binary's path, remove taskhook's handlers);
//! - [`jsonedit`] applies those edits to the file's text, keeping its formatting;
//! - [`target`] finds the file to write (scope, symlinks, the home-folder trap), backs it up
//!   with its permission bits and replaces it atomically;
//! - [`gitignore`] is the `.gitignore` recipe `install` offers.
//!
//! A registration is a command hook in exec form: `{"type": "command", "command": "taskhook",
//! "args": ["hook"], "timeout": N}` in the project's shared `settings.json` (found on PATH, so
//! the file is the same on every machine), the binary's absolute path in `settings.local.json`
//! and the user's settings (this machine's own files). Also recognised as taskhook's, so never
//! registered twice: exec form with a bare `taskhook` (PATH lookup, as the plugin does) and the
//! shell form `"command": "taskhook hook"` (or `"/path/taskhook hook"`). Those two are the
//! user's deliberate choice and are left as written; an exec-form path is updated in place
//! when the binary moved.

pub mod gitignore;
pub mod jsonedit;
mod jsonspan;
pub mod resolve;
pub mod target;

use serde_json::{json, Value};

use crate::error::{Error, Result};
use jsonedit::{Op, Seg};

/// One event taskhook registers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    pub event: &'static str,
    /// The tool-name matcher of its group (`None`: every call).
    pub matcher: Option<&'static str>,
    /// Seconds; above the default lock wait (10 s) so a lock timeout is reported by taskhook,
    /// not cut off by Claude Code.
    pub timeout: u64,
}

const fn reg(event: &'static str, matcher: Option<&'static str>, timeout: u64) -> Registration {
    Registration {
        event,
        matcher,
        timeout,
    }
}

/// The events taskhook registers for (CONTRACT §5, and §6's `PreToolUse` entry).
pub const REGISTRATIONS: &[Registration] = &[
    reg("SessionStart", None, 30),
    reg("PreToolUse", Some("Agent|Task|Bash"), 15),
    reg("PostToolUse", None, 15),
    reg("SubagentStop", None, 30),
    reg("PreCompact", None, 30),
    reg("SessionEnd", None, 15),
    reg("TaskCompleted", None, 15),
];

/// The handler object taskhook registers.
pub fn handler(command: &str, timeout: u64) -> Value {
    json!({"type": "command", "command": command, "args": ["hook"], "timeout": timeout})
}

/// The group (`{"matcher"?, "hooks": [handler]}`) taskhook adds for one event.
pub fn group(r: &Registration, command: &str) -> Value {
    match r.matcher {
        Some(m) => json!({"matcher": m, "hooks": [handler(command, r.timeout)]}),
        None => json!({"hooks": [handler(command, r.timeout)]}),
    }
}

/// How a handler object runs taskhook, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Exec form with a path (`/usr/local/bin/taskhook`): updated when the binary moves.
    ExecPath,
    /// Exec form with a bare name, found on PATH (the plugin's form): left as written.
    ExecName,
    /// Shell form, `taskhook hook` or `/path/taskhook hook`: left as written.
    Shell,
}

/// Whether a handler object is taskhook's, and in which form.
pub fn form(h: &Value) -> Option<Form> {
    if h.get("type").and_then(Value::as_str) != Some("command") {
        return None;
    }
    let command = h.get("command").and_then(Value::as_str)?;
    match h.get("args") {
        Some(args) if args == &json!(["hook"]) => {
            let name = command.rsplit(['/', '\\']).next().unwrap_or(command);
            is_taskhook_name(name).then_some(if name == command {
                Form::ExecName
            } else {
                Form::ExecPath
            })
        }
        Some(Value::Array(a)) if !a.is_empty() => None,
        _ => {
            let program = command.trim().strip_suffix("hook")?;
            if !program.ends_with([' ', '\t']) {
                return None;
            }
            let program = program.trim();
            let program = ['"', '\'']
                .iter()
                .find_map(|q| program.strip_prefix(*q)?.strip_suffix(*q))
                .unwrap_or(program);
            let name = program.rsplit(['/', '\\']).next().unwrap_or(program);
            is_taskhook_name(name).then_some(Form::Shell)
        }
    }
}

fn is_taskhook_name(name: &str) -> bool {
    name == "taskhook" || name == "taskhook.exe"
}

/// The taskhook plugin (`taskhook@MARKETPLACE`, from any marketplace) enabled by `files`, given
/// highest precedence first (local, project, user settings, as Claude Code layers them): the
/// first file naming a key decides it. Returns the key and the file that enables it. Its hooks
/// run beside any registered in settings.
pub fn enabled_plugin<'a>(
    files: impl IntoIterator<Item = (&'a std::path::Path, &'a Value)>,
) -> Option<(String, std::path::PathBuf)> {
    let mut decided: Vec<&String> = Vec::new();
    for (path, v) in files {
        for (key, on) in v["enabledPlugins"].as_object().into_iter().flatten() {
            if !key.starts_with("taskhook@") || decided.contains(&key) {
                continue;
            }
            decided.push(key);
            if on == &Value::Bool(true) {
                return Some((key.clone(), path.to_path_buf()));
            }
        }
    }
    None
}

/// Whether a handler object is taskhook's (any form).
pub fn is_ours(h: &Value) -> bool {
    form(h).is_some()
}

/// What an install or uninstall does to one event.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Change {
    pub event: String,
    /// `added`, `updated`, `present` (nothing to do), `kept` (a PATH or shell-form
    /// registration, left as written) or `removed`.
    pub action: &'static str,
    pub detail: String,
}

/// The edits that add (or update in place) taskhook's registrations, with a summary per event.
pub fn install_ops(settings: &Value, command: &str) -> Result<(Vec<Op>, Vec<Change>)> {
    let obj = settings
        .as_object()
        .ok_or_else(|| shape_error("the file is not a JSON object"))?;
    let mut ops = Vec::new();
    let mut changes = Vec::new();
    let empty = serde_json::Map::new();
    let hooks = match obj.get("hooks") {
        None => {
            ops.push(Op::Set(vec![key("hooks")], json!({})));
            &empty
        }
        Some(h) => h
            .as_object()
            .ok_or_else(|| shape_error("hooks is not an object"))?,
    };
    for r in REGISTRATIONS {
        let event = r.event;
        let at = vec![key("hooks"), key(event)];
        let what = describe(r);
        let change = |action, detail: String| Change {
            event: event.to_string(),
            action,
            detail,
        };
        let Some(groups) = hooks.get(event) else {
            ops.push(Op::Set(at, json!([group(r, command)])));
            changes.push(change("added", what));
            continue;
        };
        let groups = groups
            .as_array()
            .ok_or_else(|| shape_error(&format!("hooks.{event} is not an array")))?;
        let found = groups.iter().enumerate().find_map(|(gi, g)| {
            let hs = g.get("hooks")?.as_array()?;
            hs.iter()
                .enumerate()
                .find_map(|(hi, h)| form(h).map(|f| (gi, hi, f, h)))
        });
        let Some((gi, hi, f, h)) = found else {
            ops.push(Op::Push(at, group(r, command)));
            changes.push(change("added", what));
            continue;
        };
        if f != Form::ExecPath {
            // A PATH or shell-form registration is left as written; one exactly like ours (the
            // shared file's `taskhook`) is simply present.
            if *h == handler(command, r.timeout) {
                changes.push(change("present", what));
            } else {
                let how = h.get("command").and_then(Value::as_str).unwrap_or_default();
                changes.push(change("kept", format!("{how:?} (left as written)")));
            }
            continue;
        }
        let mut path = at.clone();
        path.extend([Seg::Index(gi), key("hooks"), Seg::Index(hi)]);
        let before = ops.len();
        let want = handler(command, r.timeout);
        for (k, v) in want.as_object().into_iter().flatten() {
            if h.get(k) != Some(v) {
                let mut p = path.clone();
                p.push(key(k));
                ops.push(Op::Set(p, v.clone()));
            }
        }
        let g = &groups[gi];
        let alone = g["hooks"].as_array().is_some_and(|hs| hs.len() == 1);
        if let (Some(m), true) = (r.matcher, alone) {
            if g.get("matcher").and_then(Value::as_str) != Some(m) {
                let mut p = at.clone();
                p.extend([Seg::Index(gi), key("matcher")]);
                ops.push(Op::Set(p, json!(m)));
            }
        }
        if ops.len() == before {
            changes.push(change("present", what));
        } else {
            changes.push(change("updated", what));
        }
    }
    Ok((ops, changes))
}

/// The edits that remove every taskhook handler (any form), the groups and events that held
/// only taskhook's, and the `hooks` object when nothing else is left in it.
pub fn uninstall_ops(settings: &Value) -> Result<(Vec<Op>, Vec<Change>)> {
    let obj = settings
        .as_object()
        .ok_or_else(|| shape_error("the file is not a JSON object"))?;
    let Some(hooks) = obj.get("hooks") else {
        return Ok((Vec::new(), Vec::new()));
    };
    let hooks = hooks
        .as_object()
        .ok_or_else(|| shape_error("hooks is not an object"))?;
    let (mut ops, mut changes, mut events_emptied) = (Vec::new(), Vec::new(), 0);
    for (event, groups) in hooks {
        let Some(groups) = groups.as_array() else {
            continue;
        };
        let at = vec![key("hooks"), key(event)];
        let (mut event_ops, mut left, mut removed) = (Vec::new(), groups.len(), 0);
        for (gi, g) in groups.iter().enumerate().rev() {
            let Some(hs) = g.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            let ours: Vec<usize> = (0..hs.len()).filter(|&i| is_ours(&hs[i])).collect();
            removed += ours.len();
            let mut p = at.clone();
            p.push(Seg::Index(gi));
            if !ours.is_empty() && ours.len() == hs.len() {
                event_ops.push(Op::Remove(p));
                left -= 1;
                continue;
            }
            for &hi in ours.iter().rev() {
                let mut p = p.clone();
                p.extend([key("hooks"), Seg::Index(hi)]);
                event_ops.push(Op::Remove(p));
            }
        }
        if removed == 0 {
            continue;
        }
        let s = if removed == 1 { "" } else { "s" };
        changes.push(Change {
            event: event.clone(),
            action: "removed",
            detail: format!("{removed} taskhook handler{s}"),
        });
        if left == 0 {
            events_emptied += 1;
            ops.push(Op::Remove(at));
        } else {
            ops.extend(event_ops);
        }
    }
    if !changes.is_empty() && events_emptied == hooks.len() {
        ops = vec![Op::Remove(vec![key("hooks")])];
    }
    Ok((ops, changes))
}

/// Applies edits to a value.
pub fn apply(mut settings: Value, ops: &[Op]) -> Result<Value> {
    for op in ops {
        jsonedit::apply_value(&mut settings, op)
            .map_err(|e| shape_error(&format!("cannot edit it ({e})")))?;
    }
    Ok(settings)
}

/// Adds (or updates in place) taskhook's registrations.
pub fn install(settings: Value, command: &str) -> Result<Value> {
    let (ops, _) = install_ops(&settings, command)?;
    apply(settings, &ops)
}

/// Removes every taskhook handler (see [`uninstall_ops`]).
pub fn uninstall(settings: Value) -> Result<Value> {
    let (ops, _) = uninstall_ops(&settings)?;
    apply(settings, &ops)
}

/// The `{"hooks": …}` object taskhook would add to an empty settings file.
pub fn snippet(command: &str) -> Value {
    install(json!({}), command).unwrap_or(Value::Null)
}

/// `taskhook hook (timeout 30 s)`, with the matcher when there is one.
fn describe(r: &Registration) -> String {
    match r.matcher {
        Some(m) => format!("taskhook hook for {m} (timeout {} s)", r.timeout),
        None => format!("taskhook hook (timeout {} s)", r.timeout),
    }
}

fn key(k: &str) -> Seg {
    Seg::Key(k.to_string())
}

fn shape_error(what: &str) -> Error {
    Error::BadInput(format!("settings.json: {what}; leaving it untouched"))
}

#[cfg(test)]
mod tests {
    use super::*;

    const BIN: &str = "/opt/bin/taskhook";

    #[test]
    fn install_is_idempotent_and_keeps_user_hooks_first() {
        let user = json!({
            "model": "x",
            "hooks": {"PostToolUse": [{"matcher": "Write", "hooks": [{"type": "command", "command": "fmt"}]}]},
            "env": {"A": "1"}
        });
        let once = install(user.clone(), BIN).unwrap();
        let twice = install(once.clone(), BIN).unwrap();
        assert_eq!(once, twice);
        let keys: Vec<&String> = once.as_object().unwrap().keys().collect();
        assert_eq!(keys, ["model", "hooks", "env"]);
        let post = &once["hooks"]["PostToolUse"];
        assert_eq!(post[0], user["hooks"]["PostToolUse"][0]);
        assert_eq!(post[1]["hooks"][0], handler(BIN, 15));
        assert_eq!(
            once["hooks"]["PreToolUse"][0]["matcher"],
            json!("Agent|Task|Bash")
        );
        assert_eq!(uninstall(once).unwrap(), user);
    }

    #[test]
    fn moved_binary_is_updated_in_place() {
        let a = install(json!({}), "/old/taskhook").unwrap();
        let b = install(a, BIN).unwrap();
        assert_eq!(b, install(json!({}), BIN).unwrap());
    }

    #[test]
    fn path_and_shell_forms_are_recognised_and_kept() {
        for h in [
            json!({"type": "command", "command": "taskhook hook"}),
            json!({"type": "command", "command": "  \"/a b/taskhook\"   hook "}),
            json!({"type": "command", "command": "taskhook", "args": ["hook"], "timeout": 5}),
        ] {
            let s = json!({"hooks": {"SessionStart": [{"hooks": [h.clone()]}]}});
            let out = install(s, BIN).unwrap();
            assert_eq!(out["hooks"]["SessionStart"], json!([{"hooks": [h]}]));
            assert_eq!(uninstall(out).unwrap(), json!({}));
        }
        for not in [
            json!({"type": "command", "command": "taskhook status"}),
            json!({"type": "command", "command": "mytaskhook hook"}),
            json!({"type": "command", "command": "taskhook", "args": ["hook", "-v"]}),
            json!({"type": "prompt", "command": "taskhook hook"}),
        ] {
            assert!(!is_ours(&not), "{not}");
        }
    }

    #[test]
    fn uninstall_of_fresh_install_restores_empty() {
        let s = install(json!({}), BIN).unwrap();
        assert_eq!(uninstall(s).unwrap(), json!({}));
        assert_eq!(uninstall(json!({"a": 1})).unwrap(), json!({"a": 1}));
        assert_eq!(
            uninstall(json!({"hooks": {}})).unwrap(),
            json!({"hooks": {}})
        );
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(install(json!([]), BIN).is_err());
        assert!(install(json!({"hooks": []}), BIN).is_err());
        assert!(install(json!({"hooks": {"SessionStart": {}}}), BIN).is_err());
    }
}
