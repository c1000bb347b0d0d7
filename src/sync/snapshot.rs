//! A store's snapshot (a `publish` op's fields): its files as they are, with the claims held
//! on its units, and making a store exactly a snapshot again (materialise).
//!
//! The files are every regular file under the store's folder (for an execute run, whose
//! folder may hold a project's own documents, only its state files), except hidden ones
//! (locks, temp files of writes in flight) and files moved aside as corrupt. Text travels as
//! text, other bytes as hex. Bounded: [`MAX_FILES`] files, [`MAX_BYTES`] in all.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::{json, Map, Value};

use super::op::{check_rel_path, StoreKey};
use crate::claims::{self, Claim};
use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::layouts::{registry, StoreRef};

/// Most files one snapshot holds.
pub const MAX_FILES: usize = 10_000;
/// Most bytes one snapshot holds.
pub const MAX_BYTES: usize = 48 << 20;
const MAX_DEPTH: usize = 12;

/// A store's files, by path relative to its folder.
pub type Files = BTreeMap<String, Vec<u8>>;

fn kept(name: &str) -> bool {
    !name.starts_with('.') && !name.contains(".corrupt-")
}

/// The relative paths of the files a snapshot of the folder `root` holds.
fn list(cx: &Ctx, root: &Path) -> Result<Vec<String>> {
    let mut out = Vec::new();
    let mut todo = vec![(String::new(), 0usize)];
    while let Some((rel, depth)) = todo.pop() {
        let dir = if rel.is_empty() {
            root.to_path_buf()
        } else {
            root.join(&rel)
        };
        for e in cx.store.list_dir(&dir)? {
            if !kept(&e.name) {
                continue;
            }
            let path = if rel.is_empty() {
                e.name.clone()
            } else {
                format!("{rel}/{}", e.name)
            };
            if e.is_dir {
                if depth < MAX_DEPTH {
                    todo.push((path, depth + 1));
                }
            } else {
                out.push(path);
            }
            if out.len() > MAX_FILES {
                return Err(Error::BadInput(format!(
                    "`{}` holds more than {MAX_FILES} files: too many to sync",
                    root.display()
                )));
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The files a snapshot of `store` would hold.
fn paths_of(cx: &Ctx, store: &StoreRef) -> Result<Vec<String>> {
    if store.layout == "execute" {
        let layout = registry().iter().find(|l| l.name() == store.layout);
        let mut out = Vec::new();
        if let Some(l) = layout {
            for f in l.state_files(cx, store)? {
                if let Ok(rel) = f.path.strip_prefix(&store.root) {
                    if let Some(rel) = rel.to_str() {
                        if cx.store.exists(&f.path) {
                            out.push(rel.to_string());
                        }
                    }
                }
            }
        }
        return Ok(out);
    }
    if !cx.store.is_dir(&store.root) {
        return Ok(Vec::new());
    }
    list(cx, &store.root)
}

/// Reads the store's files.
pub fn capture(cx: &Ctx, store: &StoreRef) -> Result<Files> {
    let mut files = Files::new();
    let mut total = 0usize;
    for rel in paths_of(cx, store)? {
        let path = store.root.join(&rel);
        let Some(bytes) = cx.store.read(&path)? else {
            continue;
        };
        total += bytes.len();
        if total > MAX_BYTES {
            return Err(Error::BadInput(format!(
                "`{}` holds more than {} MiB: too much to sync",
                store.root.display(),
                MAX_BYTES >> 20
            )));
        }
        files.insert(rel, bytes);
    }
    Ok(files)
}

/// A `publish` op's fields: the files, and the claims held on the store's units.
pub fn fields(files: &Files, held: &[Claim], covers: &[String]) -> Map<String, Value> {
    let mut f = Map::new();
    for (rel, bytes) in files {
        let v = match std::str::from_utf8(bytes) {
            Ok(text) => Value::String(text.to_string()),
            Err(_) => json!({ "hex": hex(bytes) }),
        };
        f.insert(rel.clone(), v);
    }
    let mut out = Map::new();
    out.insert("files".into(), Value::Object(f));
    out.insert(
        "claims".into(),
        serde_json::to_value(held).unwrap_or(Value::Array(Vec::new())),
    );
    if !covers.is_empty() {
        out.insert("covers".into(), json!(covers));
    }
    out
}

/// The claims of a store, from the project's claims.
pub fn claims_of(cx: &Ctx, root: &Path, key: &StoreKey) -> Result<Vec<Claim>> {
    Ok(claims::load(cx, root)?
        .claims
        .into_iter()
        .filter(|c| c.layout == key.layout && c.store == key.id)
        .collect())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    if s.len() % 2 != 0 {
        return None;
    }
    (0..s.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(s.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The files and claims a `publish` op holds, checked: every path inside the store, not
/// hidden; the problem in one line otherwise.
pub fn parse(fields: &Map<String, Value>) -> std::result::Result<(Files, Vec<Claim>), String> {
    let Some(Value::Object(f)) = fields.get("files") else {
        return Err("a publish without files".into());
    };
    let mut files = Files::new();
    let mut total = 0usize;
    for (rel, v) in f {
        check_rel_path(rel)?;
        if rel.split('/').any(|c| !kept(c)) {
            return Err(format!("path {rel:?} is hidden or a corrupt copy"));
        }
        let bytes = match v {
            Value::String(s) => s.clone().into_bytes(),
            Value::Object(o) => o
                .get("hex")
                .and_then(Value::as_str)
                .and_then(unhex)
                .ok_or_else(|| format!("file {rel:?} is neither text nor hex"))?,
            _ => return Err(format!("file {rel:?} is neither text nor hex")),
        };
        total += bytes.len();
        if total > MAX_BYTES || files.len() >= MAX_FILES {
            return Err("a snapshot larger than taskhook syncs".into());
        }
        files.insert(rel.clone(), bytes);
    }
    let held: Vec<Claim> = match fields.get("claims") {
        None => Vec::new(),
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("its claims: {e}"))?,
    };
    Ok((files, held))
}

/// Makes the store at `root/key.path` exactly `files`, and its claims `held`: files written
/// where they differ, files the snapshot does not hold removed, nothing touched where they
/// agree. Returns whether anything changed.
pub fn materialise(
    cx: &Ctx,
    root: &Path,
    key: &StoreKey,
    files: &Files,
    held: &[Claim],
) -> Result<bool> {
    let base = root.join(&key.path);
    let mut changed = false;
    let present: Vec<String> = if key.layout == "execute" {
        Vec::new()
    } else if cx.store.is_dir(&base) {
        list(cx, &base)?
    } else {
        Vec::new()
    };
    for (rel, bytes) in files {
        let path = base.join(rel);
        if let Some(dir) = path.parent() {
            cx.store.create_dir_all(dir)?;
        }
        changed |= cx.store.replace(&path, bytes)?;
    }
    for rel in present.iter().filter(|r| !files.contains_key(*r)) {
        cx.store.remove(&base.join(rel))?;
        changed = true;
    }
    let mut wanted: Vec<Claim> = held
        .iter()
        .filter(|c| c.layout == key.layout && c.store == key.id)
        .cloned()
        .collect();
    wanted.sort_by(|a, b| a.task.cmp(&b.task));
    let current = claims_of(cx, root, key)?;
    let mut sorted = current.clone();
    sorted.sort_by(|a, b| a.task.cmp(&b.task));
    if sorted != wanted {
        claims::update(cx, root, |all| {
            all.claims
                .retain(|c| !(c.layout == key.layout && c.store == key.id));
            all.claims.extend(wanted.iter().cloned());
            Ok(())
        })?;
        changed = true;
    }
    Ok(changed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips() {
        let b = vec![0u8, 255, 16, 1];
        assert_eq!(unhex(&hex(&b)).unwrap(), b);
        assert!(unhex("abc").is_none());
        assert!(unhex("zz").is_none());
    }

    #[test]
    fn hostile_snapshots_are_refused() {
        for rel in ["../x", ".hidden", "a/.git/x", "/abs", "a/b.corrupt-1"] {
            let m = json!({"files": {rel: "x"}}).as_object().unwrap().clone();
            assert!(parse(&m).is_err(), "{rel}");
        }
        let m = json!({"files": {"tasks.json": "{}", "bin": {"hex": "00ff"}}})
            .as_object()
            .unwrap()
            .clone();
        let (files, held) = parse(&m).unwrap();
        assert_eq!(files["bin"], vec![0, 255]);
        assert!(held.is_empty());
    }
}
