//! doctor's checks of how Claude Code runs taskhook: the registrations in the settings files
//! and the taskhook plugin, whether the command each one runs resolves (a path that is an
//! executable file; a bare `taskhook` on the `PATH` the hooks see; `${CLAUDE_PLUGIN_ROOT}`
//! substituted), registered twice, timeouts, matchers; the binary on PATH and how it is linked;
//! and whether Claude Code's own task tools are on (the claude-tasks mirror follows them).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::{f, Finding, Level};
use crate::context::Ctx;
use crate::env;
use crate::install::resolve::{self, Resolved};
use crate::install::{self, target, REGISTRATIONS};
use crate::store::lock;

/// Largest `installed_plugins.json` or plugin `hooks.json` read.
const PLUGIN_FILE_CAP: u64 = 1024 * 1024;

/// The settings files that exist and parse, highest precedence first (local, project, user),
/// as Claude Code layers them.
pub(super) struct Settings {
    pub files: Vec<(PathBuf, Value)>,
}

impl Settings {
    pub fn read(cx: &Ctx) -> Self {
        let files = [
            target::Scope::Local,
            target::Scope::Project,
            target::Scope::User,
        ]
        .into_iter()
        .filter_map(|s| target::locate(cx, s).ok())
        .filter_map(|t| {
            let bytes = target::read(&t).ok()??;
            let v = serde_json::from_slice::<Value>(&bytes).ok()?;
            Some((t.path, v))
        })
        .collect();
        Settings { files }
    }

    fn values(&self) -> Vec<&Value> {
        self.files.iter().map(|(_, v)| v).collect()
    }

    /// The `PATH` Claude Code gives its hooks.
    pub fn hook_path(&self, cx: &Ctx) -> Option<OsString> {
        resolve::hook_path(cx, &self.values())
    }

    /// A variable as Claude Code's session sees it: the first settings file whose `env` sets it,
    /// else the environment; with where it came from.
    pub fn env_var(&self, cx: &Ctx, name: &str) -> Option<(String, String)> {
        self.files
            .iter()
            .find_map(|(p, v)| {
                let value = v["env"][name].as_str()?;
                Some((value.to_string(), format!("the env of {}", p.display())))
            })
            .or_else(|| {
                let value = cx.env.get(name)?;
                Some((value.to_string(), "the environment".to_string()))
            })
    }

    /// The taskhook plugin enabled (see [`install::enabled_plugin`]).
    fn enabled_plugin(&self) -> Option<(String, PathBuf)> {
        install::enabled_plugin(self.files.iter().map(|(p, v)| (p.as_path(), v)))
    }
}

/// Every registration check; `settings` as read once by doctor.
pub(super) fn check(cx: &Ctx, settings: &Settings, out: &mut Vec<Finding>) {
    const T: &str = "registrations";
    let path = settings.hook_path(cx);
    let plugin = settings.enabled_plugin();
    if let Some((key, enabled_in)) = &plugin {
        plugin_hooks(cx, key, enabled_in, path.as_deref(), out);
    }
    let timeout = lock::timeout_from_env(&cx.env).unwrap_or(lock::DEFAULT_TIMEOUT);
    let mut unresolved: Vec<(PathBuf, Resolved, Vec<&str>)> = Vec::new();
    let mut in_settings = false;
    let mut doubled: Vec<(Vec<String>, Vec<&str>)> = Vec::new();
    let mut missing: Vec<&str> = Vec::new();
    for r in REGISTRATIONS {
        let mut found: Vec<(&PathBuf, &Value, Option<&str>)> = Vec::new();
        for (file, v) in &settings.files {
            for g in v["hooks"][r.event].as_array().into_iter().flatten() {
                for h in g["hooks"].as_array().into_iter().flatten() {
                    if install::is_ours(h) {
                        found.push((file, h, g["matcher"].as_str()));
                    }
                }
            }
        }
        in_settings |= !found.is_empty();
        if found.is_empty() && plugin.is_none() {
            missing.push(r.event);
        }
        let mut sources: Vec<String> = found
            .iter()
            .map(|(p, _, _)| p.display().to_string())
            .collect();
        if let Some((key, _)) = &plugin {
            sources.push(format!("the plugin {key}"));
        }
        if sources.len() > 1 {
            match doubled.iter_mut().find(|(s, _)| *s == sources) {
                Some((_, events)) => events.push(r.event),
                None => doubled.push((sources, vec![r.event])),
            }
        }
        for (file, h, matcher) in &found {
            match resolve::program(h, None, path.as_deref()) {
                Some(Resolved::Found(_)) | None => {}
                Some(bad) => match unresolved
                    .iter_mut()
                    .find(|(p, b, _)| p == *file && *b == bad)
                {
                    Some((_, _, events)) => events.push(r.event),
                    None => unresolved.push(((*file).clone(), bad, vec![r.event])),
                },
            }
            if let Some(t) = h["timeout"].as_u64() {
                if (t as f64) < timeout.as_secs_f64() + 5.0 {
                    out.push(f(
                        Level::Warn,
                        T,
                        format!("{} in {} has a {t} s timeout, under the {:.0} s lock wait plus a margin: Claude Code may cut taskhook off before it reports", r.event, file.display(), timeout.as_secs_f64()),
                        Some("run `taskhook install` again (it sets the timeouts)"),
                    ));
                }
            }
            if let Some(want) = r.matcher {
                let covers = matcher
                    .is_none_or(|m| want.split('|').all(|tool| m.split('|').any(|x| x == tool)));
                if !covers {
                    out.push(f(
                        Level::Warn,
                        T,
                        format!(
                            "{} in {} matches {:?}; taskhook needs {want}",
                            r.event,
                            file.display(),
                            matcher.unwrap_or("")
                        ),
                        Some("run `taskhook install` again"),
                    ));
                }
            }
        }
    }
    for (sources, events) in &doubled {
        let which = if events.len() == REGISTRATIONS.len() {
            "every event".to_string()
        } else {
            events.join(", ")
        };
        let fix = match &plugin {
            Some((key, _)) => format!(
                "keep one: `taskhook install --uninstall` (add --local or --user for that file), \
                 or `claude plugin disable {key}`"
            ),
            None => "keep one: `taskhook install --uninstall` (add --local or --user for that \
                     file)"
                .to_string(),
        };
        out.push(f(
            Level::Warn,
            T,
            format!(
                "{which} is registered {} times ({}): Claude Code runs taskhook {} times per \
                 event (taskhook applies each event once, but every run costs)",
                sources.len(),
                sources.join(", "),
                sources.len()
            ),
            Some(&fix),
        ));
    }
    for (file, bad, events) in &unresolved {
        let which = if events.len() == REGISTRATIONS.len() {
            "every hook".to_string()
        } else {
            events.join(", ")
        };
        out.extend(unresolved_finding(
            &format!("{which} in {}", file.display()),
            bad,
        ));
    }
    if !in_settings && plugin.is_none() {
        out.push(f(
            Level::Error,
            T,
            "taskhook is not registered for this project (no settings file or plugin runs it)".into(),
            Some("`taskhook install` here (or `--local`, or `--user` for every project), then start a new Claude Code session"),
        ));
        return;
    }
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
    if unresolved.is_empty() && in_settings {
        out.push(f(
            Level::Ok,
            T,
            "every registered command resolves".into(),
            None,
        ));
    }
    let has_statusline = settings.files.iter().any(|(_, v)| {
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

/// The ERROR for a command that does not resolve: every hook of `who` fails.
fn unresolved_finding(who: &str, bad: &Resolved) -> Option<Finding> {
    Some(match bad {
        Resolved::NotOnPath(name) => f(
            Level::Error,
            "registrations",
            format!(
                "{who} runs `{name}` from PATH, and the PATH Claude Code gives its hooks has \
                 none: every hook would fail"
            ),
            Some(
                "put the folder holding taskhook (where ./install.sh put it, usually \
                  ~/.cargo/bin) on PATH before starting claude, or register this binary's \
                  absolute path with `taskhook install --local`",
            ),
        ),
        Resolved::Missing(p) => f(
            Level::Error,
            "registrations",
            format!(
                "{who} runs `{}`, which is not an executable file: every hook would fail",
                p.display()
            ),
            Some("run `taskhook install` again (it updates the path) after installing the binary"),
        ),
        Resolved::Found(_) => return None,
    })
}

/// The enabled plugin's hooks: installed where `installed_plugins.json` says, its
/// `hooks/hooks.json` read, each command resolved with `${CLAUDE_PLUGIN_ROOT}` substituted.
fn plugin_hooks(
    cx: &Ctx,
    key: &str,
    enabled_in: &Path,
    path: Option<&std::ffi::OsStr>,
    out: &mut Vec<Finding>,
) {
    const T: &str = "plugin";
    let index = cx
        .claude_config_dir()
        .join("plugins")
        .join("installed_plugins.json");
    let roots: Vec<PathBuf> = read_json(&index)
        .map(|v| {
            v["plugins"][key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|e| e["installPath"].as_str().map(PathBuf::from))
                .collect()
        })
        .unwrap_or_default();
    if roots.is_empty() {
        out.push(f(
            Level::Warn,
            T,
            format!(
                "the plugin {key} is enabled in {} but not installed (no entry in {})",
                enabled_in.display(),
                index.display()
            ),
            Some("`claude plugin install taskhook@taskhook` (see the README, The Claude Code plugin), or disable it"),
        ));
        return;
    }
    let mut bad: Vec<Resolved> = Vec::new();
    for root in &roots {
        let hooks = root.join("hooks").join("hooks.json");
        let Some(v) = read_json(&hooks) else {
            out.push(f(
                Level::Error,
                T,
                format!("the plugin {key} has no readable {}", hooks.display()),
                Some("reinstall it: `claude plugin install taskhook@taskhook`"),
            ));
            continue;
        };
        for groups in v["hooks"].as_object().into_iter().flatten().map(|(_, g)| g) {
            for g in groups.as_array().into_iter().flatten() {
                for h in g["hooks"].as_array().into_iter().flatten() {
                    match resolve::program(h, Some(root), path) {
                        Some(Resolved::Found(_)) | None => {}
                        Some(r) if !bad.contains(&r) => bad.push(r),
                        Some(_) => {}
                    }
                }
            }
        }
    }
    for r in &bad {
        out.extend(unresolved_finding(&format!("the plugin {key}"), r));
    }
    if bad.is_empty() {
        out.push(f(
            Level::Ok,
            T,
            format!(
                "the plugin {key} is enabled ({}) and its hooks' commands resolve",
                enabled_in.display()
            ),
            None,
        ));
    }
}

fn read_json(path: &Path) -> Option<Value> {
    let bytes = target::read_bounded(path, path).ok()??;
    if bytes.len() as u64 > PLUGIN_FILE_CAP {
        return None;
    }
    serde_json::from_slice(&bytes).ok()
}

/// `taskhook` on the hooks' PATH, and how this binary is linked.
pub(super) fn binary(cx: &Ctx, settings: &Settings, out: &mut Vec<Finding>) {
    match resolve::which(settings.hook_path(cx).as_deref(), "taskhook") {
        Some(p) => out.push(f(
            Level::Ok,
            "binary",
            format!("taskhook on PATH: {}", p.display()),
            None,
        )),
        None => out.push(f(
            Level::Note,
            "binary",
            "taskhook is not on PATH (the project's shared settings, the plugin and `taskhook \
             hook` in shell form run it from there)"
                .into(),
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
pub(super) fn linking(static_target: bool, linked_statically: bool) -> Finding {
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

/// Whether Claude Code offers its task tools (TaskCreate/TaskUpdate, or TodoWrite): off by
/// default with current models unless `CLAUDE_CODE_ENABLE_TODO_TOOLS` is set, in which case
/// the claude-tasks mirror has nothing to follow.
pub(super) fn task_tools(cx: &Ctx, settings: &Settings, out: &mut Vec<Finding>) {
    const T: &str = "task tools";
    let on = |v: &str| env::is_on(Some(v));
    let todo = settings.env_var(cx, env::CLAUDE_CODE_ENABLE_TODO_TOOLS);
    let legacy = settings
        .env_var(cx, env::CLAUDE_CODE_ENABLE_TASKS)
        .is_some_and(|(v, _)| env::is_off(Some(&v)));
    match todo {
        Some((v, from)) if on(&v) => out.push(f(
            Level::Ok,
            T,
            format!(
                "Claude Code's task tools are on (CLAUDE_CODE_ENABLE_TODO_TOOLS={v} in {from}): \
                 {} calls are mirrored into the claude-tasks list",
                if legacy {
                    "TodoWrite"
                } else {
                    "TaskCreate and TaskUpdate"
                }
            ),
            None,
        )),
        _ => out.push(f(
            Level::Note,
            T,
            "Claude Code's task tools (TaskCreate, TaskUpdate, TodoWrite) are off: \
             CLAUDE_CODE_ENABLE_TODO_TOOLS is not set, and current models do not turn them on, \
             so the claude-tasks mirror stays empty; use the layouts' own verbs \
             (projects/iterative/execute/cdd) or turn the tools on"
                .into(),
            Some(
                "to turn them on: \"env\": {\"CLAUDE_CODE_ENABLE_TODO_TOOLS\": \"1\"} in \
                  .claude/settings.json (or export it before starting claude)",
            ),
        )),
    }
}
