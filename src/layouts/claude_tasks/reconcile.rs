//! SessionStart's reconcile of a task list ([`session_start`]: its stale temp files, a corrupt
//! list said) and `taskhook recover` for a list that cannot be read (issue 14): keep every task that
//! validates, name the rest with the reason, keep the original bytes aside
//! (`tasks.json.corrupt-<UTC>`), and write the kept tasks as the new list. `--dry-run` (a
//! dry-run store) shows exactly the same lines and writes nothing.
//!
//! A file that is not JSON at all (say, cut short by a full disk) is read task by task from
//! its `"tasks": [` on, as far as the tasks parse.

use crate::layouts::json::find_bytes;
use std::collections::HashSet;

use serde_json::{json, Map, Value};

use super::doc::{load_list, short, tasks_path};
use super::list::normalise;
use super::{FORMAT_VERSION, NAME};
use crate::context::Ctx;
use crate::error::Result;
use crate::layouts::{Reconciled, StoreRef};
use crate::store::{lock_path_for, schema};

/// What salvage found in an unreadable list.
#[derive(Debug, Default)]
pub(crate) struct Salvage {
    /// Root fields other than `tasks`, `version` and `last_updated` (when the root parsed).
    pub root: Map<String, Value>,
    pub kept: Vec<Value>,
    /// `(which task, why)`.
    pub dropped: Vec<(String, String)>,
    /// Where the text stopped parsing, when it did.
    pub cut_at: Option<usize>,
}

/// Recovers the list of `store` (see the module doc); returns what was (or would be) done.
pub(crate) fn recover(cx: &Ctx, store: &StoreRef) -> Result<String> {
    let path = tasks_path(store);
    let root = store.root.display().to_string();
    let dry = cx.store.is_dry_run();
    cx.store.with_lock(&lock_path_for(&path), || {
        let Some(bytes) = cx.store.read(&path)? else {
            return Ok(format!(
                "No task list at `{}`; nothing to recover.",
                path.display()
            ));
        };
        if let Ok(text) = std::str::from_utf8(&bytes) {
            if load_list(&path, &root, Some(text)).is_ok() {
                return Ok(format!(
                    "`{}` is valid; nothing to recover.",
                    path.display()
                ));
            }
        }
        let now = cx.store.clock().stamp();
        let s = salvage(&bytes, &now);
        let mut doc = Map::new();
        doc.insert("tasks".into(), Value::Array(s.kept.clone()));
        doc.insert("version".into(), json!(FORMAT_VERSION));
        doc.insert("last_updated".into(), json!(now));
        for (k, v) in &s.root {
            doc.insert(k.clone(), v.clone());
        }
        let total = s.kept.len() + s.dropped.len();
        let mut lines = vec![format!(
            "{} `{}`: {} {} of {total} tasks{}.",
            if dry { "Would recover" } else { "Recovered" },
            path.display(),
            if dry { "would keep" } else { "kept" },
            s.kept.len(),
            if dry {
                " (dry run: nothing written)"
            } else {
                ""
            },
        )];
        for t in &s.kept {
            let id = t.get("id").and_then(Value::as_str).unwrap_or("");
            let desc = t.get("description").and_then(Value::as_str).unwrap_or("");
            lines.push(format!("  keep  {id} ({})", short(desc, 60)));
        }
        for (which, why) in &s.dropped {
            lines.push(format!("  drop  {which}: {why}"));
        }
        if let Some(at) = s.cut_at {
            lines.push(format!(
                "  drop  everything from byte {at} on: it does not parse as JSON"
            ));
        }
        let kept: HashSet<&str> = s.kept.iter().filter_map(|t| t["id"].as_str()).collect();
        for t in &s.kept {
            for d in t["dependencies"].as_array().into_iter().flatten() {
                if let Some(d) = d.as_str().filter(|d| !kept.contains(d)) {
                    lines.push(format!(
                        "  note  {} depends on {d}, which is not kept (`taskhook status` will \
                         report it until the dependency is removed)",
                        t["id"].as_str().unwrap_or("")
                    ));
                }
            }
        }
        let doc = Value::Object(doc);
        if let Err(issues) = schema::check(NAME, &doc)? {
            lines.push(format!(
                "  the recovered list would not validate ({}); nothing was changed",
                schema::summarize(&issues)
            ));
            return Ok(lines.join("\n"));
        }
        let aside = cx.store.quarantine(&path)?;
        cx.store.replace_json(&path, NAME, &doc)?;
        lines.push(format!(
            "The original bytes {} `{}`; the kept tasks {} the new `{}`.",
            if dry {
                "would be moved aside to"
            } else {
                "were moved aside to"
            },
            aside.display(),
            if dry { "would become" } else { "are" },
            path.display()
        ));
        Ok(lines.join("\n"))
    })
}

/// Keeps every task of `bytes` that validates on its own against the schema (first of each
/// id), with offsets normalised to `Z`.
pub(crate) fn salvage(bytes: &[u8], now: &str) -> Salvage {
    let mut s = Salvage::default();
    let tasks: Vec<Value> = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(root)) => {
            let mut tasks = Vec::new();
            for (k, v) in root {
                match k.as_str() {
                    "tasks" => match v {
                        Value::Array(a) => tasks = a,
                        _ => s
                            .dropped
                            .push(("`tasks`".into(), "it is not an array".into())),
                    },
                    "version" | "last_updated" => {}
                    _ => {
                        s.root.insert(k, v);
                    }
                }
            }
            tasks
        }
        Ok(_) => {
            s.dropped
                .push(("the file".into(), "it is not a JSON object".into()));
            Vec::new()
        }
        Err(_) => stream_tasks(bytes, &mut s.cut_at),
    };
    let mut ids = HashSet::new();
    for (n, mut t) in tasks.into_iter().enumerate() {
        let which = match t
            .get("id")
            .and_then(Value::as_str)
            .filter(|i| !i.is_empty())
        {
            Some(id) => id.to_string(),
            None => format!("the task at position {} (no usable id)", n + 1),
        };
        if let Value::Object(m) = &mut t {
            normalise(m);
        }
        let probe = json!({"tasks": [t], "version": FORMAT_VERSION, "last_updated": now});
        match schema::check(NAME, &probe) {
            Ok(Ok(())) => {}
            Ok(Err(issues)) => {
                let issues: Vec<schema::Issue> = issues
                    .into_iter()
                    .map(|i| schema::Issue {
                        path: i.path.trim_start_matches("/tasks/0").to_string(),
                        message: i.message,
                    })
                    .collect();
                s.dropped.push((which, schema::summarize(&issues)));
                continue;
            }
            Err(e) => {
                s.dropped.push((which, e.one_line()));
                continue;
            }
        }
        if !ids.insert(which.clone()) {
            s.dropped.push((
                which,
                "an earlier task has the same id (that one is kept)".into(),
            ));
            continue;
        }
        if let Some(Value::Object(probe)) = probe.get("tasks").and_then(|a| a.get(0)) {
            s.kept.push(Value::Object(probe.clone()));
        }
    }
    s
}

/// Reads tasks one by one from the first `"tasks": [` of text that is not JSON as a whole;
/// `cut_at` is where they stop parsing.
fn stream_tasks(bytes: &[u8], cut_at: &mut Option<usize>) -> Vec<Value> {
    let mut out = Vec::new();
    let Some(key) = find_bytes(bytes, b"\"tasks\"") else {
        *cut_at = Some(0);
        return out;
    };
    let mut i = skip_ws(bytes, key + 7);
    if bytes.get(i) != Some(&b':') {
        *cut_at = Some(i);
        return out;
    }
    i = skip_ws(bytes, i + 1);
    if bytes.get(i) != Some(&b'[') {
        *cut_at = Some(i);
        return out;
    }
    i += 1;
    loop {
        i = skip_ws(bytes, i);
        match bytes.get(i) {
            None => {
                *cut_at = Some(i);
                return out;
            }
            Some(b']') => return out,
            Some(b',') => {
                i += 1;
                continue;
            }
            Some(_) => {}
        }
        let mut stream = serde_json::Deserializer::from_slice(&bytes[i..]).into_iter::<Value>();
        match stream.next() {
            Some(Ok(v)) => {
                out.push(v);
                i += stream.byte_offset();
            }
            _ => {
                *cut_at = Some(i);
                return out;
            }
        }
    }
}

fn skip_ws(b: &[u8], mut i: usize) -> usize {
    while b.get(i).is_some_and(|c| c.is_ascii_whitespace()) {
        i += 1;
    }
    i
}

/// SessionStart: taskhook's own stale temp files removed, the summary, a corrupt list said to
/// the user.
pub fn session_start(cx: &Ctx, store: &StoreRef) -> Result<Reconciled> {
    cx.store.clean_stale_temps_of(&tasks_path(store))?;
    let summary = super::summary::summarize(cx, store, &tasks_path(store))?;
    Ok(Reconciled {
        tell_user: summary
            .problems
            .iter()
            .filter(|p| p.contains("is corrupt"))
            .map(|p| format!("taskhook: {p}"))
            .collect(),
        changes: Vec::new(),
        summary: Some(summary),
    })
}
