//! The agent's verbs over every store of a project (CONTRACT §7), written once over the
//! layouts' unit interface ([`crate::layouts::work`]): `next`, `show`, `claim`, `heartbeat`,
//! `done`, `fail`, `release`. The model runs them through Bash; a person runs the same in a
//! terminal. Claims and leases are [`claims`]'.
//!
//! A unit is named `STORE/TASK` (the store's name as `taskhook status` shows it, the layout's
//! own id), or a bare `TASK` when only one unit of the project has that id (or only one of
//! those is unfinished). Every verb resolves the name, checks the claim, then carries out the
//! layout's own transition: `claim` its start (the launch step a bound subagent takes),
//! `done` and `fail` exactly what `<signal>ID_DONE</signal>` and `<signal>ID_FAILED:
//! reason</signal>` do, `release` its give-back. A claim ends when its unit leaves
//! "in progress" (finished, failed back to ready, released); it stays with its owner through
//! the layout's follow-up passes (an execute verification, an iterative confirmation).
//!
//! Lock order: the claims' lock, then a store's (never the other way round).

mod act;
mod next;
mod resolve;
mod session;
mod show;

use serde::Serialize;

use crate::claims::{self, Claim};
use crate::context::Ctx;
use crate::layouts::{registry, Layout, StoreRef, WorkUnit};
use crate::project::Project;

pub use act::{act, Acted, Verb};
pub use next::{next, Next};
pub use session::{in_view, launched, session_ended, settled};
pub use show::{show, Dep, Section, ShowOut};

/// One store of the project with its units.
pub struct Found {
    pub layout: &'static dyn Layout,
    pub store: StoreRef,
    pub units: Vec<WorkUnit>,
    /// The id each unit's claims are recorded under, in the same order
    /// ([`Layout::work_keyed`]).
    pub keys: Vec<String>,
}

impl Found {
    /// The id the claims of unit `i` are recorded under.
    pub fn key(&self, i: usize) -> &str {
        self.keys
            .get(i)
            .map_or_else(|| self.units[i].id.as_str(), String::as_str)
    }
}

/// A store that could not be read: its name and what is wrong.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Broken {
    pub layout: &'static str,
    pub store: String,
    pub problem: String,
}

/// Every store of the project with its units, in the registry's order; stores that could not
/// be read are reported beside them.
pub fn stores(cx: &Ctx, project: &Project) -> (Vec<Found>, Vec<Broken>) {
    let mut found = Vec::new();
    let mut broken = Vec::new();
    for &layout in registry() {
        let stores = match layout.discover(cx, project) {
            Ok(s) => s,
            Err(e) => {
                broken.push(Broken {
                    layout: layout.name(),
                    store: String::new(),
                    problem: e.one_line(),
                });
                continue;
            }
        };
        for store in stores {
            match layout.work_keyed(cx, &store) {
                Ok((units, keys)) => found.push(Found {
                    layout,
                    store,
                    units,
                    keys,
                }),
                Err(e) => broken.push(Broken {
                    layout: layout.name(),
                    store: store.id.clone(),
                    problem: e.one_line(),
                }),
            }
        }
    }
    (found, broken)
}

/// Quotes a word for a POSIX shell when it needs it (`'my task.md'`), so a printed command can
/// be run as it stands ([`crate::shell::quote`]).
pub fn shell_quote(word: &str) -> String {
    crate::shell::quote(word).into_owned()
}

/// The reference a verb prints for a unit: `STORE/TASK`.
pub fn reference(store: &str, task: &str) -> String {
    format!("{store}/{task}")
}

/// The commands that act on a unit, as the model should run them.
#[derive(Debug, Clone, Default, Serialize, PartialEq, Eq)]
pub struct Then {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claim: Option<String>,
    pub show: String,
    pub done: String,
    pub fail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub release: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub heartbeat: Option<String>,
}

pub(crate) fn then(r: &str, held: bool) -> Then {
    let q = shell_quote(r);
    Then {
        claim: (!held).then(|| format!("taskhook claim {q}")),
        show: format!("taskhook show {q}"),
        done: format!("taskhook done {q}"),
        fail: format!("taskhook fail {q} --reason \"why\""),
        release: held.then(|| format!("taskhook release {q}")),
        heartbeat: held.then(|| format!("taskhook heartbeat {q}")),
    }
}

/// A claim as the verbs report it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ClaimView {
    pub owner: String,
    /// `session 1a2b3c4d` or `user@host`.
    pub owner_label: String,
    pub since: String,
    /// When the lease ends (RFC 3339).
    pub lease_ends: String,
    pub live: bool,
}

pub(crate) fn claim_view(cx: &Ctx, c: &Claim) -> ClaimView {
    let end = claims::lease_end(cx, c);
    ClaimView {
        owner: c.owner.clone(),
        owner_label: claims::label(&c.owner),
        since: c.since.clone(),
        lease_ends: crate::store::clock::stamp(end),
        live: end > cx.store.clock().now(),
    }
}
