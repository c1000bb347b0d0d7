//! A state.json rebuilt when it is missing or unusable: units and counters from the plan and
//! progress.md (replayed through the lifecycle, with `started_at` / `completed_at` from the
//! entries' timestamps), and what the log cannot know salvaged from wherever it survives: the
//! task name, `created`, `domain` and `commits` from the unusable file's bytes (its string
//! literals), else brief.md; commits the log names, with their subjects from git.

use serde_json::{json, Map, Value};

use super::git;
use super::lifecycle::DEFAULT_MAX_ITERATIONS;
use super::log::{is_hash, Record};
use super::model::{Mode, State, Units};
use super::plan::{advance, Plan};
use super::reconcile::{by_unit, hash_of, replay, unit_from};
use super::state::is_knowledge;
use super::Paths;
use crate::context::Ctx;
use crate::layouts::StoreRef;
use crate::store::clock::parse_time;

/// Largest brief.md read.
const BRIEF_CAP: usize = 1024 * 1024;

/// The string literals of a (possibly cut or broken) JSON text, each with whether a `:`
/// follows it (a key).
fn string_literals(bytes: &[u8]) -> Vec<(String, bool)> {
    let text = String::from_utf8_lossy(bytes);
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        if chars[i] != '"' {
            i += 1;
            continue;
        }
        let mut raw = String::from("\"");
        let mut j = i + 1;
        let mut closed = false;
        while j < chars.len() {
            let ch = chars[j];
            raw.push(ch);
            if ch == '\\' && j + 1 < chars.len() {
                raw.push(chars[j + 1]);
                j += 2;
                continue;
            }
            j += 1;
            if ch == '"' {
                closed = true;
                break;
            }
        }
        if !closed {
            break;
        }
        let key = chars[j..]
            .iter()
            .find(|c| !c.is_whitespace())
            .is_some_and(|c| *c == ':');
        if let Ok(s) = serde_json::from_str::<String>(&raw) {
            out.push((s, key));
        }
        i = j;
    }
    out
}

/// What survives in an unusable state.json's bytes.
#[derive(Debug, Default)]
pub(crate) struct Salvage {
    pub fields: Map<String, Value>,
    pub commits: Vec<String>,
}

impl Salvage {
    pub(crate) fn scan(bytes: Option<&[u8]>) -> Salvage {
        let mut s = Salvage::default();
        let lits = bytes.map(string_literals).unwrap_or_default();
        let mut last_key = "";
        for (i, (text, is_key)) in lits.iter().enumerate() {
            if *is_key {
                last_key = text;
                if let (Some((value, false)), true) = (
                    lits.get(i + 1),
                    ["task", "created", "domain", "mode"].contains(&text.as_str()),
                ) {
                    s.fields.entry(text.clone()).or_insert_with(|| json!(value));
                }
            } else if last_key == "commits"
                && text.split_once(": ").is_some_and(|(h, _)| is_hash(h))
            {
                s.commits.push(text.clone());
            }
        }
        s
    }

    fn text(&self, k: &str) -> Option<&str> {
        self.fields.get(k).and_then(Value::as_str)
    }
}

/// What brief.md says: its `# {Task Name}`, `**Created:**` and `**Domain:**`, unless still the
/// template's placeholders.
#[derive(Debug, Default)]
struct Brief {
    name: Option<String>,
    created: Option<String>,
    domain: Option<String>,
}

fn brief(cx: &Ctx, p: &Paths) -> Brief {
    let Ok(Some(bytes)) = cx.store.read_capped(&p.brief, BRIEF_CAP) else {
        return Brief::default();
    };
    let text = String::from_utf8_lossy(&bytes);
    let real = |s: &str| {
        let s = s.trim();
        (!s.is_empty() && !s.starts_with('{') && !s.starts_with('(')).then(|| s.to_string())
    };
    let field = |name: &str| {
        text.lines()
            .find_map(|l| l.trim().strip_prefix(name))
            .and_then(real)
    };
    Brief {
        name: text
            .lines()
            .find_map(|l| l.strip_prefix("# "))
            .and_then(real),
        created: field("**Created:**").filter(|t| parse_time(t).is_some()),
        domain: field("**Domain:**"),
    }
}

/// Rebuilds state.json from the plan and the log, salvaging from `old` (the unusable file).
pub(crate) fn rebuild(
    cx: &Ctx,
    store: &StoreRef,
    plan: &Plan,
    records: &[Record],
    old: Option<&[u8]>,
) -> State {
    let p = Paths::of(&store.root);
    let salvage = Salvage::scan(old);
    let knowledge = match salvage.text("mode") {
        Some("knowledge") => true,
        Some("development") => false,
        _ => is_knowledge(cx, store),
    };
    let (log_order, groups) = by_unit(records);
    let mut ids: Vec<String> = plan.units.iter().map(|u| u.id.clone()).collect();
    let planned: std::collections::HashSet<&str> = ids.iter().map(String::as_str).collect();
    let extra: Vec<String> = log_order
        .iter()
        .filter(|u| !planned.contains(**u))
        .map(|u| u.to_string())
        .collect();
    ids.extend(extra);
    let units: Units = ids
        .iter()
        .map(|id| {
            let max = plan.max_of(id).unwrap_or(DEFAULT_MAX_ITERATIONS).max(1);
            let h = replay(groups.get(id.as_str()).into_iter().flatten().copied(), max);
            (id.clone(), unit_from(&h))
        })
        .collect();
    let mut named: Vec<&str> = Vec::new();
    for r in records {
        if let Record::Entry(e) = r {
            for h in e.commits() {
                if !named.contains(&h) {
                    named.push(h);
                }
            }
        }
    }
    let now = cx.store.clock().stamp();
    let first_entry = records.iter().find_map(|r| match r {
        Record::Entry(e) if parse_time(&e.timestamp).is_some() => Some(e.timestamp.clone()),
        _ => None,
    });
    let brief = brief(cx, &p);
    let created = salvage
        .text("created")
        .filter(|t| parse_time(t).is_some())
        .map(str::to_string)
        .or(brief.created)
        .or(first_entry)
        .unwrap_or_else(|| now.clone());
    let task = salvage
        .text("task")
        .map(str::to_string)
        .or(brief.name)
        .unwrap_or_else(|| store.id.clone());
    let mode = if knowledge {
        Mode::Knowledge
    } else {
        Mode::Development
    };
    let mut state = State::new(&store.id, mode, units);
    state.task = Some(task);
    state.created = Some(created);
    state.updated = Some(now);
    state.current_iteration = Some(0);
    state.domain = salvage.text("domain").map(str::to_string).or(brief.domain);
    if !knowledge || !salvage.commits.is_empty() || !named.is_empty() {
        state.commits = Some(commits(&store.root, &salvage.commits, &named));
    }
    advance(&mut state, plan);
    state
}

/// The salvaged commit lines, then each commit the log names that they lack, with its subject
/// when git has it.
fn commits(dir: &std::path::Path, salvaged: &[String], named: &[&str]) -> Vec<String> {
    let mut out: Vec<String> = salvaged.to_vec();
    let missing: Vec<&str> = named
        .iter()
        .copied()
        .filter(|h| {
            !salvaged.iter().any(|c| {
                let have = hash_of(c);
                have.starts_with(h) || h.starts_with(have)
            })
        })
        .collect();
    if missing.is_empty() {
        return out;
    }
    let subjects = git::commits(dir, &missing).unwrap_or_default();
    for h in missing {
        out.push(match subjects.get(h) {
            Some(s) => format!("{h}: {s}"),
            None => format!("{h}: (subject unknown: named in progress.md)"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn salvage_from_cut_json() {
        let bytes = br#"{"task": "User \"auth\"", "slug": "s", "created": "2026-01-14T10:30:00Z", "commits": ["abc1234: feat: model", "def5678: fix"], "tasks": {"T1": {"status": "do"#;
        let s = Salvage::scan(Some(bytes));
        assert_eq!(s.text("task"), Some("User \"auth\""));
        assert_eq!(s.text("created"), Some("2026-01-14T10:30:00Z"));
        assert_eq!(s.commits, ["abc1234: feat: model", "def5678: fix"]);
        assert!(Salvage::scan(Some(b"garbage")).fields.is_empty());
    }
}
