//! Sync's settings in `.claude/taskhook.json`: read, turned on, edited, and the stores the
//! log holds named there so that discovery finds them.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::op::StoreKey;
use crate::config::SyncConfig;
use crate::context::Ctx;
use crate::error::Result;
use crate::project::Project;

/// This project's sync settings, when sync is on.
pub fn config(cx: &Ctx, project: &Project) -> Option<SyncConfig> {
    project.config(&cx.store).ok().and_then(|c| c.sync.clone())
}

/// Turns sync on in `.claude/taskhook.json` (other keys kept) with `remote`.
pub fn enable(cx: &Ctx, root: &Path, remote: &str) -> Result<()> {
    crate::config::edit(&cx.store, root, |m| {
        let mut s = match m.remove("sync") {
            Some(Value::Object(o)) => o,
            _ => Map::new(),
        };
        s.insert("remote".into(), json!(remote));
        m.insert("sync".into(), Value::Object(s));
    })
}

/// Makes the stores the log holds findable here: a cdd workspace or an execute run that
/// discovery would not find by convention is named in `.claude/taskhook.json`.
pub fn make_findable<'a>(
    cx: &Ctx,
    project: &Project,
    keys: impl Iterator<Item = &'a StoreKey>,
) -> Result<Vec<String>> {
    let cfg = crate::config::load(&cx.store, &project.root)?;
    let mut said = Vec::new();
    let mut cdd_dir = None;
    let mut execute = Vec::new();
    for k in keys {
        match k.layout.as_str() {
            "cdd" => {
                let ws = k.path.strip_suffix("/tasks").unwrap_or(&k.path).to_string();
                if cfg.cdd_dir.is_none()
                    && cdd_dir.is_none()
                    && cx.env.get_os(crate::env::CDD_DIR).is_none()
                {
                    said.push(format!("cdd workspace {ws} named in .claude/taskhook.json"));
                    cdd_dir = Some(ws);
                }
            }
            "execute" => {
                let file = format!("{}/execute-state.json", k.path);
                let conventional =
                    k.path.starts_with("docs/tasks/") && k.path.matches('/').count() == 2;
                if !conventional && !cfg.execute.contains(&file) && !execute.contains(&file) {
                    said.push(format!("execute run {file} named in .claude/taskhook.json"));
                    execute.push(file);
                }
            }
            _ => {}
        }
    }
    if cdd_dir.is_some() || !execute.is_empty() {
        crate::config::edit(&cx.store, &project.root, |m| {
            if let Some(ws) = cdd_dir {
                m.insert("cdd_dir".into(), json!(ws));
            }
            if !execute.is_empty() {
                let list = m.entry("execute").or_insert_with(|| json!([]));
                if let Value::Array(a) = list {
                    a.extend(execute.into_iter().map(Value::String));
                }
            }
        })?;
    }
    Ok(said)
}
