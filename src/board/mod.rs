//! Seeing the work (issue 25): the board of every store of a project, in five columns, and its
//! dependency graph.
//!
//! - [`model`]: the board and the graph, pure (cards, columns, claims, ages, nodes and edges).
//! - [`text`]: the board as plain text (what `taskhook board` prints without a terminal).
//! - [`tui`]: the full-screen terminal board (ratatui + crossterm).
//! - [`html`]: one self-contained HTML page (inline CSS, JS and an SVG graph laid out here).
//! - [`graph`]: the graph as DOT, Mermaid or JSON.
//!
//! This module reads the board from the project ([`load`]) and says when to read it again
//! ([`Watch`]): once a second at most it compares the stamps (modification time, length,
//! inode) of every store's state files and folders and of the claims' record, and reads the
//! stores again only when one changed. No file is opened to poll.

pub mod graph;
pub mod html;
pub mod model;
pub mod text;
pub mod tui;

use std::path::PathBuf;
use std::time::{Duration, Instant, SystemTime};

use crate::claims;
use crate::context::Ctx;
use crate::engine::agent;
use crate::layouts::registry;
use crate::project::Project;
use crate::store::clock::parse_time;

pub use model::{Board, Card, Graph, Problem};

/// Reads the board of a project: every store with its units, the stores that cannot be read
/// (each a card saying what is wrong), and the claims.
pub fn load(cx: &Ctx, project: &Project) -> Board {
    cx.store.begin_invocation();
    let (found, broken) = agent::stores(cx, project);
    let mut problems: Vec<Problem> = broken
        .into_iter()
        .map(|b| Problem {
            layout: b.layout.to_string(),
            store: b.store,
            problem: b.problem,
            unreadable: true,
        })
        .collect();
    // What each readable store's layout says is wrong with it (a state file rebuilt in
    // memory, an unknown dependency, a cycle).
    for f in &found {
        if let Ok(s) = f.layout.summarize(cx, &f.store) {
            problems.extend(s.problems.into_iter().map(|p| Problem {
                layout: f.layout.name().to_string(),
                store: f.store.id.clone(),
                problem: p,
                unreadable: false,
            }));
        }
    }
    let claims = match claims::load(cx, &project.root) {
        Ok(c) => c
            .claims
            .iter()
            .map(|c| model::ClaimIn {
                layout: c.layout.clone(),
                store: c.store.clone(),
                task: c.task.clone(),
                owner: c.owner.clone(),
                since: parse_time(&c.since),
                lease_end: claims::lease_end(cx, c),
            })
            .collect(),
        Err(e) => {
            problems.push(Problem {
                layout: "taskhook".into(),
                store: "claims.json".into(),
                problem: e.one_line(),
                unreadable: true,
            });
            Vec::new()
        }
    };
    let stores = found
        .into_iter()
        .map(|f| model::StoreIn {
            layout: f.layout.name(),
            name: f.store.id,
            path: f.store.root,
            units: f.units,
            keys: f.keys,
        })
        .collect();
    model::build(
        project.root.clone(),
        cx.store.clock().now(),
        stores,
        problems,
        &claims,
    )
}

type Stamp = Option<(SystemTime, u64, u64)>;

/// What the stores look like from outside: each store's state files, their folders, the
/// store's root and its folders, the claims' record; with their stamps.
fn fingerprint(cx: &Ctx, project: &Project) -> Vec<(PathBuf, Stamp)> {
    let mut paths: Vec<PathBuf> = vec![claims::path(&project.root)];
    for &layout in registry() {
        let Ok(stores) = layout.discover(cx, project) else {
            paths.push(PathBuf::from(format!("?{}", layout.name())));
            continue;
        };
        for store in stores {
            paths.push(store.root.clone());
            if cx.store.is_dir(&store.root) {
                for e in cx.store.list_dir(&store.root).unwrap_or_default() {
                    if e.is_dir {
                        paths.push(store.root.join(e.name));
                    }
                }
            }
            for f in layout.state_files(cx, &store).unwrap_or_default() {
                if let Some(dir) = f.path.parent() {
                    paths.push(dir.to_path_buf());
                }
                paths.push(f.path);
            }
        }
    }
    paths.sort();
    paths.dedup();
    paths
        .into_iter()
        .map(|p| {
            let s = cx.store.stamp(&p);
            (p, s)
        })
        .collect()
}

/// Says when the board should be read again: polled as often as the caller likes, it looks
/// at the stores at most once per [`Watch::EVERY`] and answers `true` when something changed.
pub struct Watch {
    last: Vec<(PathBuf, Stamp)>,
    checked: Instant,
}

impl Watch {
    /// How often, at most, the stores are looked at.
    pub const EVERY: Duration = Duration::from_secs(1);

    /// Starts from the stores as they are now.
    pub fn new(cx: &Ctx, project: &Project) -> Watch {
        Watch {
            last: fingerprint(cx, project),
            checked: Instant::now(),
        }
    }

    /// Whether the stores changed since the last time this answered `true` (or since
    /// [`Watch::new`]); `false` without looking when it looked less than a second ago.
    pub fn changed(&mut self, cx: &Ctx, project: &Project) -> bool {
        if self.checked.elapsed() < Self::EVERY {
            return false;
        }
        self.checked = Instant::now();
        let now = fingerprint(cx, project);
        if now == self.last {
            return false;
        }
        self.last = now;
        true
    }

    /// How long until it looks again.
    pub fn due_in(&self) -> Duration {
        Self::EVERY.saturating_sub(self.checked.elapsed())
    }
}

/// A flag set to the signal's number when SIGTERM, SIGHUP or SIGINT arrives, so a long-running
/// board ends on its own terms (the terminal given back, no file half-written).
pub fn signals() -> crate::error::Result<std::sync::Arc<std::sync::atomic::AtomicUsize>> {
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    for sig in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        signal_hook::flag::register_usize(sig, std::sync::Arc::clone(&flag), sig as usize)
            .map_err(|e| crate::error::Error::io("watch", "signals", e))?;
    }
    Ok(flag)
}

/// Writes the board's HTML page to `path` (atomically: a browser never reads half a page);
/// with `watch`, keeps rewriting it whenever the stores change, until SIGTERM, SIGHUP or
/// SIGINT (then the exit status is 128 + the signal). `said` hears one line per write.
pub fn write_html(
    cx: &Ctx,
    project: &Project,
    path: &std::path::Path,
    watch: bool,
    said: &mut dyn FnMut(&str),
) -> crate::error::Result<u8> {
    let write = |board: &Board| -> crate::error::Result<()> {
        cx.store
            .replace(path, html::render(board, watch).as_bytes())
            .map(|_| ())
    };
    let signal = if watch { Some(signals()?) } else { None };
    let mut w = Watch::new(cx, project);
    let board = load(cx, project);
    write(&board)?;
    said(&format!(
        "wrote {} ({} units, {} stores){}",
        crate::display::text(&path.display().to_string()),
        board.cards.len() - board.problems.len(),
        board.stores.len(),
        if watch {
            "; rewritten when the state changes (Ctrl-C stops)"
        } else {
            ""
        }
    ));
    let Some(signal) = signal else {
        return Ok(0);
    };
    loop {
        let sig = signal.load(std::sync::atomic::Ordering::SeqCst);
        if sig != 0 {
            return Ok(128u8.saturating_add(u8::try_from(sig).unwrap_or(0)));
        }
        std::thread::sleep(
            w.due_in()
                .clamp(Duration::from_millis(50), Duration::from_millis(250)),
        );
        if w.changed(cx, project) {
            let board = load(cx, project);
            write(&board)?;
            said(&format!("rewrote it at {}", board.written));
        }
    }
}
