//! `taskhook doctor`: every check a user would otherwise do by hand, one finding per line with
//! its fix. Read-only: it opens nothing for writing and takes no lock.
//!
//! - registrations (`registrations`): present for every event (in the project's, local or
//!   user settings, or the taskhook plugin), each command resolving as Claude Code will
//!   resolve it (a path to an executable; `taskhook` on the PATH its hooks see; the plugin's
//!   `${CLAUDE_PLUGIN_ROOT}`), not registered twice, timeouts above the lock wait, PreToolUse
//!   matching `Agent|Task|Bash`;
//! - the binary on `PATH` (the shared settings, the plugin and shell-form hooks find it
//!   there), and how this one is linked (statically, as `install.sh` builds it on x86_64
//!   Linux with glibc, or not);
//! - whether Claude Code's task tools are on (`CLAUDE_CODE_ENABLE_TODO_TOOLS`): off, the
//!   claude-tasks mirror stays empty;
//! - every store: found, valid against its schema, no problem in its summary, no folder
//!   planted as a symbolic link under the project's `.claude/`;
//! - the task list's name, when another folder of the same name would share it;
//! - files under `.claude/` that look like a store taskhook does not use;
//! - the clock and the environment variables taskhook reads.

mod registrations;
mod sync;

use serde::Serialize;

use crate::context::Ctx;
use crate::engine::ops;
use crate::env;
use crate::layouts::{cdd, claude_tasks};
use crate::store::{check_id, fs, lock, Clock};

/// How much a finding matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Ok,
    Note,
    Warn,
    Error,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Finding {
    pub level: Level,
    /// What was checked (`registrations`, `store`, `env`, …).
    pub topic: &'static str,
    pub message: String,
    /// What to do about it, when something is to be done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fix: Option<String>,
}

fn f(level: Level, topic: &'static str, message: String, fix: Option<&str>) -> Finding {
    Finding {
        level,
        topic,
        message,
        fix: fix.map(str::to_string),
    }
}

/// Runs every check.
pub fn check(cx: &Ctx) -> Vec<Finding> {
    let mut out = Vec::new();
    let settings = registrations::Settings::read(cx);
    registrations::check(cx, &settings, &mut out);
    registrations::binary(cx, &settings, &mut out);
    stores(cx, &mut out);
    registrations::task_tools(cx, &settings, &mut out);
    environment(cx, &mut out);
    sync::check(cx, &mut out);
    out
}

/// Whether any finding needs action.
pub fn needs_action(findings: &[Finding]) -> bool {
    findings.iter().any(|x| x.level >= Level::Warn)
}

fn stores(cx: &Ctx, out: &mut Vec<Finding>) {
    let project = cx.project(None);
    let summaries = ops::status(cx, &project);
    if summaries.is_empty() {
        out.push(f(
            Level::Note,
            "stores",
            format!("no store in {}", project.root.display()),
            Some("`taskhook demo` shows what each layout keeps; `taskhook status` lists stores"),
        ));
    }
    for s in &summaries {
        if s.problems.is_empty() {
            out.push(f(
                Level::Ok,
                "stores",
                format!("{} {} ({})", s.layout, s.id, s.path.display()),
                None,
            ));
        }
        for p in &s.problems {
            out.push(f(Level::Warn, "stores", format!("{} {}: {p}", s.layout, s.id), Some("`taskhook reconcile --dry-run` shows what the next session would fix; `taskhook recover PATH` restores what it can")));
        }
    }
    match ops::validate(cx, &project) {
        Ok(reports) => {
            for r in reports.iter().filter(|r| !r.valid) {
                out.push(f(
                    Level::Error,
                    "stores",
                    format!("{} does not match schema {}", r.path.display(), r.schema),
                    Some("`taskhook validate` names the fields; `taskhook recover` restores what it can"),
                ));
            }
        }
        Err(e) => out.push(f(Level::Error, "stores", e.one_line(), None)),
    }
    let claude = project.claude_dir();
    for sub in [
        "iterative",
        "projects",
        "taskhook",
        "iterative/archive",
        "tasks",
    ] {
        let dir = claude.join(sub);
        if fs::is_symlink(&dir) {
            out.push(f(
                Level::Error,
                "stores",
                format!("{} is a symbolic link: taskhook writes nothing through it (a cloned repository can plant one)", dir.display()),
                Some("if you did not make it, remove the link"),
            ));
        }
    }
    if fs::is_dir(&claude.join("tasks")) {
        out.push(f(
            Level::Warn,
            "stores",
            format!("{} looks like a task list folder, but Claude Code's task lists live in ~/.claude/tasks/", claude.join("tasks").display()),
            Some("move its lists to ~/.claude/tasks/ (or remove it); taskhook does not read it"),
        ));
    }
    if cx.env.get(env::CLAUDE_CODE_TASK_LIST_ID).is_none() {
        if let Ok(id) = claude_tasks::list_id(cx, &project) {
            let from_package = cx.store.exists(&project.root.join("package.json"));
            if !from_package {
                out.push(f(
                    Level::Note,
                    "task list",
                    format!("the task list is named after the folder ({id}): another project folder named {id} shares ~/.claude/tasks/{id}/"),
                    Some("set CLAUDE_CODE_TASK_LIST_ID, or give package.json a name, to keep it apart"),
                ));
            }
        }
    }
}

fn environment(cx: &Ctx, out: &mut Vec<Finding>) {
    const T: &str = "env";
    if let Some(now) = cx.env.get(env::TASKHOOK_NOW) {
        out.push(f(
            Level::Warn,
            T,
            format!("TASKHOOK_NOW={now} fixes the clock (stale detection and timestamps use it)"),
            Some("unset TASKHOOK_NOW outside tests and replays"),
        ));
    }
    if let Err(e) = Clock::from_env(&cx.env) {
        out.push(f(
            Level::Error,
            T,
            e.one_line(),
            Some("unset it or give an RFC 3339 time"),
        ));
    }
    if let Err(e) = lock::timeout_from_env(&cx.env) {
        out.push(f(
            Level::Error,
            T,
            e.one_line(),
            Some("unset it or give seconds, e.g. 10"),
        ));
    }
    if let Some(id) = cx.env.get(env::CLAUDE_CODE_TASK_LIST_ID) {
        if let Err(e) = check_id("task list id (CLAUDE_CODE_TASK_LIST_ID)", id) {
            out.push(f(Level::Error, T, e.one_line(), Some("use a plain name")));
        }
    }
    if cx.env.get_os(env::CDD_DIR).is_some() {
        let project = cx.project(None);
        let dir = cdd::locate(cx, &project).map(|p| p.ws).unwrap_or_default();
        if !fs::is_dir(&dir) {
            out.push(f(
                Level::Warn,
                T,
                format!("CDD_DIR={} does not exist", dir.display()),
                Some("`taskhook cdd init` creates the workspace"),
            ));
        }
    }
    let year: i32 = cx
        .store
        .clock()
        .now()
        .format("%Y")
        .to_string()
        .parse()
        .unwrap_or(0);
    if year < 2024 {
        out.push(f(
            Level::Warn,
            "clock",
            format!("the clock says {}", cx.store.clock().stamp()),
            Some("set the system clock: stale detection and timestamps depend on it"),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::registrations::linking;
    use super::*;

    #[test]
    fn linking_is_a_note_only_for_a_dynamic_build_where_a_static_one_is_made() {
        assert_eq!(linking(true, true).level, Level::Ok);
        assert_eq!(linking(false, true).level, Level::Ok);
        assert_eq!(linking(false, false).level, Level::Ok);
        let note = linking(true, false);
        assert_eq!(note.level, Level::Note);
        assert!(note.message.contains("dynamically linked"));
        assert!(note.fix.unwrap().contains("./install.sh"));
    }
}
