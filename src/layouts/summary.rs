//! One summary of a store, computed once per layout ([`crate::layouts::Layout::summarize`]) and
//! rendered two ways from the same data, so `taskhook status` and the SessionStart context always
//! agree: [`Summary::context`] for the model, [`Summary::status`] for people and `--json`.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use crate::display;
use crate::error::Error;
use crate::store::check_word;

/// Most items listed per line of the SessionStart context; the rest are counted.
pub const CONTEXT_LIST_CAP: usize = 10;

/// One unit in a summary list.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Item {
    pub id: String,
    /// What a person calls it (a task's description, shortened).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// State worth showing beside it (`pending, iteration 1 of 5`, a blocked reason).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The unfinished dependencies it waits for.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waits_for: Vec<String>,
}

impl Item {
    /// An item with only an id.
    pub fn id(id: impl Into<String>) -> Self {
        Item {
            id: id.into(),
            ..Default::default()
        }
    }

    /// An item with an id and a detail.
    pub fn with(id: impl Into<String>, detail: impl Into<String>) -> Self {
        Item {
            detail: Some(detail.into()),
            ..Item::id(id)
        }
    }

    /// How the context shows it: `id (title)`, `id (detail)`, `id (waits for a, b)`. Each part
    /// on one line ([`display::line`]): a title from a repository never starts a line of its own.
    fn render(&self) -> String {
        let mut inner: Vec<String> = self
            .title
            .iter()
            .chain(&self.detail)
            .map(|t| display::line(t).into_owned())
            .collect();
        if !self.waits_for.is_empty() {
            let waits: Vec<_> = self.waits_for.iter().map(|w| display::line(w)).collect();
            inner.push(format!("waits for {}", waits.join(", ")));
        }
        let id = display::line(&self.id);
        if inner.is_empty() {
            id.into_owned()
        } else {
            format!("{id} ({})", inner.join("; "))
        }
    }
}

/// What one store holds, for the model and for people.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    pub layout: &'static str,
    pub id: String,
    /// The store's state file, or its folder.
    pub path: PathBuf,
    /// The store in one line for the model (what it is, where, its counts).
    pub headline: String,
    /// Units per status.
    pub counts: BTreeMap<String, usize>,
    /// How the context names the units being worked on ("Current", "In progress").
    pub current_label: &'static str,
    pub current: Vec<Item>,
    pub ready: Vec<Item>,
    pub blocked: Vec<Item>,
    pub stale: Vec<Item>,
    pub stops_waiting: Vec<Item>,
    /// Further labelled lists the context shows (`Timed out`, `Done`), also counted as blocked
    /// in `status` when `needs_person`.
    pub more: Vec<(&'static str, Vec<Item>, bool)>,
    /// Problems found (a corrupt file, a dependency cycle), one line each.
    pub problems: Vec<String>,
    /// Lines only the context carries, after the lists (completion signal, context.md, …).
    pub context_extra: Vec<String>,
    /// Lines only `status` shows (Claude Code's own task files, read-only).
    pub notes: Vec<String>,
    /// Whether the model needs to hear nothing about this store (empty or finished).
    pub quiet: bool,
}

/// What `taskhook status --json` shows for one store: every list an array of items
/// (`{id, title?, detail?, waits_for?}`), never comma-joined strings.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct StoreStatus {
    pub layout: &'static str,
    pub id: String,
    pub path: PathBuf,
    /// Units per status.
    pub counts: BTreeMap<String, usize>,
    pub current: Vec<Item>,
    pub ready: Vec<Item>,
    pub stale: Vec<Item>,
    /// Units waiting: on dependencies (`waits_for`), or for a person (`detail` says why).
    pub blocked: Vec<Item>,
    pub stops_waiting: Vec<Item>,
    /// Problems found (corrupt files, …), one line each.
    pub problems: Vec<String>,
    /// Other facts worth showing, one line each.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

fn list_line(label: &str, items: &[Item]) -> Option<String> {
    if items.is_empty() {
        return None;
    }
    let rich = items
        .iter()
        .any(|i| i.title.is_some() || i.detail.is_some() || !i.waits_for.is_empty());
    let shown = first_few(
        items.iter().map(Item::render),
        items.len(),
        CONTEXT_LIST_CAP,
    );
    Some(format!(
        "{label}: {}.",
        shown.join(if rich { "; " } else { ", " })
    ))
}

/// The first `cap` of `items`, then `and N more` for the rest of the `total`.
pub fn first_few(items: impl Iterator<Item = String>, total: usize, cap: usize) -> Vec<String> {
    let mut shown: Vec<String> = items.take(cap).collect();
    if total > cap {
        shown.push(format!("and {} more", total - cap));
    }
    shown
}

impl Summary {
    /// A summary of a store that could not be read: only its problem.
    pub fn problem(layout: &'static str, id: &str, path: PathBuf, problem: String) -> Self {
        Summary {
            layout,
            id: id.to_string(),
            path,
            problems: vec![problem],
            ..Default::default()
        }
    }

    /// Adds a problem for the store's id and each listed unit's id that is not one word
    /// ([`check_word`]: whitespace or a control character), as a store written by hand may
    /// hold: tags and signals cannot name it. An id a problem already quotes is not repeated.
    pub fn flag_invalid_ids(&mut self) {
        let store = std::iter::once(("store id", &self.id)).filter(|(_, id)| !id.is_empty());
        let mut lists: Vec<&Vec<Item>> = vec![
            &self.current,
            &self.ready,
            &self.blocked,
            &self.stale,
            &self.stops_waiting,
        ];
        lists.extend(self.more.iter().map(|(_, items, _)| items));
        let units = lists.into_iter().flatten().map(|i| ("id", &i.id));
        let mut found: Vec<String> = Vec::new();
        for (kind, id) in store.chain(units) {
            let Err(Error::UnsafeId { reason, .. }) = check_word(kind, id) else {
                continue;
            };
            let quoted = format!("{id:?}");
            if self
                .problems
                .iter()
                .chain(&found)
                .any(|p| p.contains(&quoted))
            {
                continue;
            }
            found.push(format!(
                "{kind} {quoted} is not a valid id ({reason}); rename it"
            ));
        }
        self.problems.extend(found);
    }

    /// The SessionStart context for this store, with what reconciliation changed (`notes`).
    pub fn context(&self, changes: &[String]) -> String {
        let mut lines = Vec::new();
        if !self.headline.is_empty() {
            lines.push(self.headline.clone());
        }
        let label = if self.current_label.is_empty() {
            "Current"
        } else {
            self.current_label
        };
        lines.extend(list_line(label, &self.current));
        lines.extend(list_line("Ready", &self.ready));
        lines.extend(list_line("Blocked", &self.blocked));
        lines.extend(list_line("Stale", &self.stale));
        lines.extend(list_line("Stop waiting for a person", &self.stops_waiting));
        for (label, items, _) in &self.more {
            lines.extend(list_line(label, items));
        }
        if !self.problems.is_empty() {
            lines.push(format!("Problems: {}.", self.problems.join("; ")));
        }
        for c in changes {
            lines.push(format!("Reconciled: {c}."));
        }
        let mut text = lines.join("\n");
        for extra in &self.context_extra {
            if extra.starts_with("\n") {
                text.push_str(extra);
            } else {
                text.push('\n');
                text.push_str(extra);
            }
        }
        text
    }

    /// The `status` view of this store.
    pub fn status(&self) -> StoreStatus {
        let mut blocked = self.blocked.clone();
        for (_, items, needs_person) in &self.more {
            if *needs_person {
                blocked.extend(items.iter().cloned());
            }
        }
        StoreStatus {
            layout: self.layout,
            id: self.id.clone(),
            path: self.path.clone(),
            counts: self.counts.clone(),
            current: self.current.clone(),
            ready: self.ready.clone(),
            stale: self.stale.clone(),
            blocked,
            stops_waiting: self.stops_waiting.clone(),
            problems: self.problems.clone(),
            notes: self.notes.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn context_and_status_come_from_the_same_lists() {
        let s = Summary {
            layout: "x",
            id: "s".into(),
            headline: "Store s.".into(),
            current: vec![Item {
                detail: Some("pending, iteration 0 of 5".into()),
                ..Item::id("T1")
            }],
            ready: vec![Item::id("T2"), Item::id("T3")],
            blocked: vec![Item {
                waits_for: vec!["T1".into()],
                ..Item::id("T4")
            }],
            more: vec![("Done", vec![Item::id("T0")], false)],
            ..Default::default()
        };
        assert_eq!(
            s.context(&["T0 is now done".into()]),
            "Store s.\nCurrent: T1 (pending, iteration 0 of 5).\nReady: T2, T3.\n\
             Blocked: T4 (waits for T1).\nDone: T0.\nReconciled: T0 is now done."
        );
        let st = serde_json::to_value(s.status()).unwrap();
        assert_eq!(
            st["current"],
            serde_json::json!([{"id": "T1", "detail": "pending, iteration 0 of 5"}])
        );
        assert_eq!(st["ready"], serde_json::json!([{"id": "T2"}, {"id": "T3"}]));
        assert_eq!(
            st["blocked"],
            serde_json::json!([{"id": "T4", "waits_for": ["T1"]}])
        );
    }

    #[test]
    fn long_lists_are_cut() {
        let items: Vec<Item> = (0..13).map(|i| Item::id(format!("t{i}"))).collect();
        let line = list_line("Ready", &items).unwrap();
        assert!(line.ends_with("t9, and 3 more."), "{line}");
    }
}
