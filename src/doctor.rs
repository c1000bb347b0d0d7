//! `taskhook doctor`: every check a user would otherwise do by hand, one finding per line with
//! its fix. Read-only: it opens nothing for writing and takes no lock.
//!
//! - registrations: present for every event (in the project's, local or user settings, or the
//!   taskhook plugin), pointing at a binary that exists, not registered twice, timeouts above
//!   the lock wait, PreToolUse matching `Agent|Task|Bash`;
//! - the binary on `PATH` (the plugin and shell-form hooks find it there), and how this one is
//!   linked (statically, as `install.sh` builds it on x86_64 Linux with glibc, or not);
//! - every store: found, valid against its schema, no problem in its summary, no folder
//!   planted as a symbolic link under the project's `.claude/`;
//! - the task list's name, when another folder of the same name would share it;
//! - files under `.claude/` that look like a store taskhook does not use;
//! - the clock and the environment variables taskhook reads.

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use crate::context::Ctx;
use crate::engine::ops;
use crate::env;
use crate::install::{self, target, Form, REGISTRATIONS};
use crate::layouts::claude_tasks;
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
    registrations(cx, &mut out);
    binary_on_path(cx, &mut out);
    stores(cx, &mut out);
    environment(cx, &mut out);
    sync(cx, &mut out);
    out
}

/// Team sync: the remote and its ref ([`crate::sync::doctor`]).
fn sync(cx: &Ctx, out: &mut Vec<Finding>) {
    use crate::sync::Health;
    let project = cx.project(None);
    for (h, message, fix) in crate::sync::doctor(cx, &project) {
        let level = match h {
            Health::Ok => Level::Ok,
            Health::Note => Level::Note,
            Health::Warn => Level::Warn,
            Health::Error => Level::Error,
        };
        out.push(f(level, "sync", message, fix.as_deref()));
    }
}

/// Whether any finding needs action.
pub fn needs_action(findings: &[Finding]) -> bool {
    findings.iter().any(|x| x.level >= Level::Warn)
}

fn settings_files(cx: &Ctx) -> Vec<(PathBuf, Value)> {
    [
        target::Scope::Project,
        target::Scope::Local,
        target::Scope::User,
    ]
    .into_iter()
    .filter_map(|s| target::locate(cx, s).ok())
    .filter_map(|t| {
        let bytes = target::read(&t).ok()??;
        let v = serde_json::from_slice::<Value>(&bytes).ok()?;
        Some((t.path, v))
    })
    .collect()
}

/// Finds `name` in the `PATH` directories.
fn on_path(cx: &Ctx, name: &str) -> Option<PathBuf> {
    let path = cx.env.get_os(env::PATH)?;
    std::env::split_paths(path)
        .map(|d| d.join(name))
        .find(|p| fs::is_file(p))
}

fn registrations(cx: &Ctx, out: &mut Vec<Finding>) {
    const T: &str = "registrations";
    let files = settings_files(cx);
    let plugin = files.iter().any(|(_, v)| install::plugin_enabled(v));
    let timeout = lock::timeout_from_env(&cx.env).unwrap_or(lock::DEFAULT_TIMEOUT);
    let mut any = plugin;
    for r in REGISTRATIONS {
        let mut found: Vec<(PathBuf, Value, Option<String>)> = Vec::new();
        for (path, v) in &files {
            for g in v["hooks"][r.event].as_array().into_iter().flatten() {
                for h in g["hooks"].as_array().into_iter().flatten() {
                    if install::is_ours(h) {
                        let matcher = g["matcher"].as_str().map(str::to_string);
                        found.push((path.clone(), h.clone(), matcher));
                    }
                }
            }
        }
        any |= !found.is_empty();
        let count = found.len() + usize::from(plugin);
        if count == 0 {
            continue;
        }
        if count > 1 {
            let mut wher: Vec<String> = found
                .iter()
                .map(|(p, _, _)| p.display().to_string())
                .collect();
            if plugin {
                wher.push("the taskhook plugin".into());
            }
            out.push(f(
                Level::Warn,
                T,
                format!("{} is registered {count} times ({}): Claude Code would run taskhook twice", r.event, wher.join(", ")),
                Some("keep one: `taskhook install --uninstall` (add --local or --user for that file), or `claude plugin disable taskhook`"),
            ));
        }
        for (path, h, matcher) in &found {
            let command = h["command"].as_str().unwrap_or("");
            match install::form(h) {
                Some(Form::ExecPath) if !fs::is_file(Path::new(command)) => out.push(f(
                    Level::Error,
                    T,
                    format!("{} in {} runs `{command}`, which does not exist", r.event, path.display()),
                    Some("run `taskhook install` again (it updates the path) after installing the binary"),
                )),
                Some(Form::ExecName | Form::Shell) if on_path(cx, "taskhook").is_none() => out.push(f(
                    Level::Error,
                    T,
                    format!("{} in {} runs `taskhook` from PATH, and PATH has none", r.event, path.display()),
                    Some("add the folder holding taskhook (usually ~/.cargo/bin) to PATH"),
                )),
                _ => {}
            }
            if let Some(t) = h["timeout"].as_u64() {
                if (t as f64) < timeout.as_secs_f64() + 5.0 {
                    out.push(f(
                        Level::Warn,
                        T,
                        format!("{} in {} has a {t} s timeout, under the {:.0} s lock wait plus a margin: Claude Code may cut taskhook off before it reports", r.event, path.display(), timeout.as_secs_f64()),
                        Some("run `taskhook install` again (it sets the timeouts)"),
                    ));
                }
            }
            if let Some(want) = r.matcher {
                let covers = matcher
                    .as_deref()
                    .is_none_or(|m| want.split('|').all(|tool| m.split('|').any(|x| x == tool)));
                if !covers {
                    out.push(f(
                        Level::Warn,
                        T,
                        format!(
                            "{} in {} matches {:?}; taskhook needs {want}",
                            r.event,
                            path.display(),
                            matcher.as_deref().unwrap_or("")
                        ),
                        Some("run `taskhook install` again"),
                    ));
                }
            }
        }
    }
    if !any {
        out.push(f(
            Level::Error,
            T,
            "taskhook is not registered for this project (no settings file or plugin runs it)".into(),
            Some("`taskhook install` here (or `--local`, or `--user` for every project), then start a new Claude Code session"),
        ));
        return;
    }
    let missing: Vec<&str> = REGISTRATIONS
        .iter()
        .filter(|r| {
            !plugin
                && !files.iter().any(|(_, v)| {
                    v["hooks"][r.event]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .any(|g| {
                            g["hooks"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .any(install::is_ours)
                        })
                })
        })
        .map(|r| r.event)
        .collect();
    if missing.is_empty() {
        out.push(f(
            Level::Ok,
            T,
            format!("all {} events registered", REGISTRATIONS.len()),
            None,
        ));
    } else {
        out.push(f(
            Level::Warn,
            T,
            format!("not registered for {}", missing.join(", ")),
            Some("run `taskhook install` again (it adds what is missing)"),
        ));
    }
    let has_statusline = files.iter().any(|(_, v)| {
        v["statusLine"]["command"]
            .as_str()
            .is_some_and(|c| c.contains("taskhook statusline"))
    });
    if !has_statusline {
        out.push(f(
            Level::Note,
            "statusline",
            "the task state can show in Claude Code's status line".into(),
            Some("add \"statusLine\": {\"type\": \"command\", \"command\": \"taskhook statusline\"} to a settings file"),
        ));
    }
}

fn binary_on_path(cx: &Ctx, out: &mut Vec<Finding>) {
    match on_path(cx, "taskhook") {
        Some(p) => out.push(f(Level::Ok, "binary", format!("taskhook on PATH: {}", p.display()), None)),
        None => out.push(f(
            Level::Note,
            "binary",
            "taskhook is not on PATH (the plugin and `taskhook hook` in shell form look for it there)".into(),
            Some("add the folder holding taskhook (usually ~/.cargo/bin) to PATH"),
        )),
    }
    out.push(linking(
        cfg!(all(
            target_arch = "x86_64",
            target_os = "linux",
            target_env = "gnu"
        )),
        cfg!(target_feature = "crt-static"),
    ));
}

/// How this binary is linked, where `install.sh` would link it statically (`static_target`):
/// a dynamically linked one pays the dynamic loader on every hook (README, Performance).
fn linking(static_target: bool, linked_statically: bool) -> Finding {
    match (static_target, linked_statically) {
        (_, true) => f(
            Level::Ok,
            "binary",
            "this taskhook is linked statically".into(),
            None,
        ),
        (true, false) => f(
            Level::Note,
            "binary",
            "this taskhook is dynamically linked: every hook pays the dynamic loader (about twice \
             the CPU of a no-op in the statically linked build)"
                .into(),
            Some("install it with `./install.sh` from the taskhook repository (a static build)"),
        ),
        (false, false) => f(
            Level::Ok,
            "binary",
            "this taskhook is dynamically linked".into(),
            None,
        ),
    }
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
    if let Some(dir) = cx.env.get_os(env::CDD_DIR) {
        let dir = cx.absolute(Path::new(dir));
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
