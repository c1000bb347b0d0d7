//! `taskhook doctor`'s look at team sync: the remote (a bounded `git ls-remote`) and the ref.

use std::time::{Duration, Instant};

use super::{Finding, Level};
use crate::context::Ctx;
use crate::sync;

/// A finding about sync.
fn finding(level: Level, message: String, fix: Option<String>) -> Finding {
    Finding {
        level,
        topic: "sync",
        message,
        fix,
    }
}

/// The remote and the ref, when sync is on.
pub(super) fn check(cx: &Ctx, out: &mut Vec<Finding>) {
    let project = &cx.project(None);
    let Some(cfg) = sync::config(cx, project) else {
        return;
    };
    let deadline = Instant::now() + Duration::from_secs(cfg.timeout_seconds.max(1));
    let remote = sync::remote_of(cx, project, &cfg, deadline);
    if remote.toplevel().is_none() {
        out.push(finding(
            Level::Error,
            format!(
                "sync is on but {} is not in a git repository",
                project.root.display()
            ),
            Some("sync keeps its log on a git remote: run it in a clone".into()),
        ));
        return;
    }
    if !remote.exists() {
        out.push(finding(
            Level::Error,
            format!(
                "sync names the git remote `{}`, which this repository does not have",
                cfg.remote
            ),
            Some(format!(
                "`git remote add {} URL`, or set \"sync\": {{\"remote\": NAME}} in .claude/taskhook.json",
                cfg.remote
            )),
        ));
        return;
    }
    let queued = sync::local::read_queue(cx, &project.root)
        .map(|(q, _)| q.len())
        .unwrap_or(0);
    let last = sync::local::load_state(cx, &project.root)
        .ok()
        .and_then(|s| s.remote_tip)
        .map(|t| t.get(..8).unwrap_or(&t).to_string())
        .unwrap_or_else(|| "never".into());
    match remote.has_log() {
        Err(p) => out.push(finding(
            Level::Warn,
            p.line().to_string(),
            Some("check the remote's URL, the network and your credentials (no prompt is shown: ssh runs in BatchMode); changes stay queued meanwhile".into()),
        )),
        Ok(None) => out.push(finding(
            Level::Warn,
            format!("{} holds no {}", remote.label(), sync::remote::REF),
            Some("`taskhook sync init` publishes this project's stores".into()),
        )),
        Ok(Some(tip)) => out.push(finding(
            Level::Ok,
            format!(
                "{} holds {} at {}; this clone last read {last}",
                remote.label(),
                sync::remote::REF,
                tip.get(..8).unwrap_or(&tip)
            ),
            None,
        )),
    }
    if queued > 0 {
        out.push(finding(
            Level::Note,
            format!("{queued} change(s) not yet pushed"),
            Some("`taskhook sync` pushes them".into()),
        ));
    }
}
