//! taskhook's registrations in Claude Code's `settings.json`: merged in without dropping or
//! reordering anything of the user's, idempotent, and removable exactly.
//!
//! A registration is a command hook in exec form: `{"type": "command", "command": "<absolute
//! path>", "args": ["hook"], "timeout": N}`. A handler counts as taskhook's when its `args` are
//! `["hook"]` and its command's file name is `taskhook` (or `taskhook.exe`); that is how a moved
//! binary is updated in place rather than registered twice.

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};

/// The events taskhook registers for, each with its tool matcher (PreToolUse only: a launch of
/// a bound subagent, a subagent's Bash call; every other tool costs nothing) and its timeout in
/// seconds. The timeouts exceed the default lock wait (10 s) so a lock timeout is reported by
/// taskhook, not cut off.
pub const REGISTRATIONS: &[(&str, Option<&str>, u64)] = &[
    ("SessionStart", None, 30),
    ("PreToolUse", Some("Agent|Task|Bash"), 15),
    ("PostToolUse", None, 15),
    ("SubagentStop", None, 30),
    ("PreCompact", None, 30),
    ("SessionEnd", None, 15),
    ("TaskCompleted", None, 15),
];

/// The handler object taskhook registers.
pub fn handler(command: &str, timeout: u64) -> Value {
    json!({"type": "command", "command": command, "args": ["hook"], "timeout": timeout})
}

/// Whether a handler object is taskhook's.
pub fn is_ours(h: &Value) -> bool {
    let args_hook = h.get("args") == Some(&json!(["hook"]));
    let cmd_ours = h
        .get("command")
        .and_then(Value::as_str)
        .map(|c| {
            let name = c.rsplit(['/', '\\']).next().unwrap_or(c);
            name == "taskhook" || name == "taskhook.exe"
        })
        .unwrap_or(false);
    h.get("type").and_then(Value::as_str) == Some("command") && args_hook && cmd_ours
}

/// The `{"hooks": …}` object taskhook would add to an empty settings file.
pub fn snippet(command: &str) -> Value {
    install(json!({}), command).unwrap_or(Value::Null)
}

/// Adds (or updates in place) taskhook's registrations.
pub fn install(mut settings: Value, command: &str) -> Result<Value> {
    let hooks = hooks_object(&mut settings)?;
    for &(event, matcher, timeout) in REGISTRATIONS {
        let want = handler(command, timeout);
        let groups = hooks
            .entry(event.to_string())
            .or_insert_with(|| Value::Array(Vec::new()));
        let groups = groups
            .as_array_mut()
            .ok_or_else(|| shape_error(&format!("hooks.{event} is not an array")))?;
        let ours = |g: &Value| {
            g.get("hooks")
                .and_then(Value::as_array)
                .is_some_and(|hs| hs.iter().any(is_ours))
        };
        match groups.iter_mut().find(|g| ours(g)) {
            Some(group) => {
                if let (Some(m), Some(g)) = (matcher, group.as_object_mut()) {
                    g.insert("matcher".into(), json!(m));
                }
                let h = group
                    .get_mut("hooks")
                    .and_then(Value::as_array_mut)
                    .and_then(|hs| hs.iter_mut().find(|h| is_ours(h)));
                if let (Some(obj), Some(want)) =
                    (h.and_then(Value::as_object_mut), want.as_object())
                {
                    for (k, v) in want {
                        obj.insert(k.clone(), v.clone());
                    }
                }
            }
            None => groups.push(match matcher {
                Some(m) => json!({"matcher": m, "hooks": [want]}),
                None => json!({"hooks": [want]}),
            }),
        }
    }
    Ok(settings)
}

/// Removes every taskhook handler, the groups and event lists that held only taskhook's, and
/// the `hooks` object if nothing else is left in it.
pub fn uninstall(mut settings: Value) -> Result<Value> {
    let Some(obj) = settings.as_object_mut() else {
        return Err(shape_error("the file is not a JSON object"));
    };
    let Some(hooks) = obj.get_mut("hooks") else {
        return Ok(settings);
    };
    let hooks = hooks
        .as_object_mut()
        .ok_or_else(|| shape_error("hooks is not an object"))?;
    let mut removed_any = false;
    let events: Vec<String> = hooks.keys().cloned().collect();
    for event in events {
        let Some(groups) = hooks.get_mut(&event).and_then(Value::as_array_mut) else {
            continue;
        };
        let before = groups.len();
        let mut touched = false;
        groups.retain_mut(|g| {
            let Some(hs) = g.get_mut("hooks").and_then(Value::as_array_mut) else {
                return true;
            };
            let n = hs.len();
            hs.retain(|h| !is_ours(h));
            if hs.len() != n {
                touched = true;
                return !hs.is_empty();
            }
            true
        });
        if touched {
            removed_any = true;
            if groups.is_empty() && before > 0 {
                hooks.remove(&event);
            }
        }
    }
    if removed_any && hooks.is_empty() {
        obj.remove("hooks");
    }
    Ok(settings)
}

fn hooks_object(settings: &mut Value) -> Result<&mut Map<String, Value>> {
    let obj = settings
        .as_object_mut()
        .ok_or_else(|| shape_error("the file is not a JSON object"))?;
    obj.entry("hooks")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
        .ok_or_else(|| shape_error("hooks is not an object"))
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
        assert_eq!(uninstall(once).unwrap(), user);
    }

    #[test]
    fn moved_binary_is_updated_in_place() {
        let a = install(json!({}), "/old/taskhook").unwrap();
        let b = install(a, BIN).unwrap();
        assert_eq!(b, install(json!({}), BIN).unwrap());
    }

    #[test]
    fn uninstall_of_fresh_install_restores_empty() {
        let s = install(json!({}), BIN).unwrap();
        assert_eq!(uninstall(s).unwrap(), json!({}));
        assert_eq!(uninstall(json!({"a": 1})).unwrap(), json!({"a": 1}));
    }

    #[test]
    fn bad_shapes_are_refused() {
        assert!(install(json!([]), BIN).is_err());
        assert!(install(json!({"hooks": []}), BIN).is_err());
        assert!(install(json!({"hooks": {"SessionStart": {}}}), BIN).is_err());
    }
}
