//! `taskhook install [--user | --local] [--uninstall] [--dry-run] [--json] [--gitignore]`:
//! taskhook's registrations in a Claude Code settings file, and the `.gitignore` recipe.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::error::{Error, Result};
use crate::install::target::{self, Scope, Target};
use crate::install::{self, gitignore, jsonedit, resolve, Change};
use crate::store::{parse_json, to_pretty};

use super::paint::Paint;
use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Use ~/.claude/settings.json (or $CLAUDE_CONFIG_DIR/settings.json): every project.
    #[arg(long, conflicts_with = "local")]
    pub user: bool,
    /// Use the project's .claude/settings.local.json (kept out of git) instead of settings.json.
    #[arg(long)]
    pub local: bool,
    /// Remove taskhook's registrations instead.
    #[arg(long)]
    pub uninstall: bool,
    /// Show what would change; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// Print JSON: the path, what changed, and the resulting settings.
    #[arg(long)]
    pub json: bool,
    /// Append the lines the project's .gitignore lacks (locks, backups, machine-local state).
    #[arg(long, conflicts_with_all = ["user", "uninstall"])]
    pub gitignore: bool,
    /// The command to register (default: this taskhook binary's absolute path).
    #[arg(long, value_name = "PATH", hide = true)]
    pub command: Option<PathBuf>,
}

/// How the new text was made.
#[derive(Debug, Clone, Copy, serde::Serialize)]
#[serde(rename_all = "lowercase")]
enum Formatting {
    /// A new file, 2-space JSON.
    New,
    /// The user's file with only the edits spliced in.
    Kept,
    /// The edit could not be spliced: the whole file re-written with its indentation unit.
    Reformatted,
}

pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let scope = match (args.user, args.local) {
        (true, _) => Scope::User,
        (_, true) => Scope::Local,
        _ => Scope::Project,
    };
    let t = target::locate(cx, scope)?;
    if !args.uninstall {
        refuse_beside_plugin(cx)?;
    }
    // The shared file runs `taskhook` from PATH: the same bytes on every teammate's machine.
    // This machine's own files get this binary's absolute path.
    let command = match (&args.command, scope) {
        (Some(c), _) => cx.absolute(c).to_string_lossy().into_owned(),
        (None, Scope::Project) => PATH_COMMAND.to_string(),
        (None, _) => std::env::current_exe()
            .and_then(|p| p.canonicalize())
            .map_err(|e| Error::io("locate", "the taskhook binary", e))?
            .to_string_lossy()
            .into_owned(),
    };
    let old_bytes = target::read(&t)?;
    let old_text = match &old_bytes {
        Some(b) => Some(std::str::from_utf8(b).map_err(|_| {
            Error::BadInput(format!(
                "`{}` is not UTF-8; leaving it untouched",
                t.path.display()
            ))
        })?),
        None => None,
    }
    .filter(|s| !s.trim().is_empty());
    let old: Value = match old_text {
        None => json!({}),
        Some(s) => parse_json(s.as_bytes()).map_err(|e| {
            Error::BadInput(format!(
                "`{}` is {e}; leaving it untouched",
                t.path.display()
            ))
        })?,
    };
    let (ops, changes) = if args.uninstall {
        install::uninstall_ops(&old)?
    } else {
        install::install_ops(&old, &command)?
    };
    let new = install::apply(old.clone(), &ops)?;
    let changed = !ops.is_empty();
    let (text, formatting) = match old_text {
        None => (
            String::from_utf8_lossy(&to_pretty(&new)).into_owned(),
            Formatting::New,
        ),
        Some(s) => match jsonedit::edit(s, &ops, &new) {
            Some(out) => (out, Formatting::Kept),
            None => (
                jsonedit::reformat(&new, jsonedit::indent_unit(s).as_deref()),
                Formatting::Reformatted,
            ),
        },
    };
    // The .gitignore is checked before anything is written: with --gitignore an unreadable one
    // is an error (nothing changed); without, it only costs the offer (a note says why).
    let project = cx.project(None).root;
    let mut notes = Vec::new();
    let ignore = match scope {
        Scope::User => None,
        _ if args.uninstall => None,
        _ => match gitignore::status(&project) {
            Ok(st) => Some(st),
            Err(e) if args.gitignore => return Err(e),
            Err(e) => {
                notes.push(format!("no .gitignore check: {}", e.one_line()));
                None
            }
        },
    };
    // Append first: a failure there leaves the settings untouched too.
    let appended = match &ignore {
        Some(st) if args.gitignore && !st.missing.is_empty() && !args.dry_run => {
            gitignore::append(cx, st)?;
            true
        }
        _ => false,
    };
    let mut backup = None;
    if changed && !args.dry_run {
        if let Some(bytes) = &old_bytes {
            backup = Some(target::backup(cx, &t, bytes)?);
        }
        target::write(cx, &t, text.as_bytes())?;
    }
    if !args.uninstall {
        notes.extend(notes_for(cx, &t, &new, &command));
    }
    let report = Report {
        t: &t,
        changed,
        dry_run: args.dry_run,
        uninstall: args.uninstall,
        backup: backup.as_ref(),
        formatting,
        changes: &changes,
        ignore: ignore.as_ref(),
        gitignore_flag: args.gitignore,
        appended,
        notes: &notes,
    };
    if args.json {
        /// `install --json`: what was (or would be) written and why.
        #[derive(serde::Serialize)]
        struct Out<'a> {
            path: &'a std::path::Path,
            scope: String,
            changed: bool,
            dry_run: bool,
            backup: &'a Option<std::path::PathBuf>,
            formatting: Option<Formatting>,
            changes: &'a [crate::install::Change],
            notes: &'a [String],
            settings: &'a Value,
            #[serde(skip_serializing_if = "Option::is_none")]
            written_to: Option<&'a std::path::Path>,
            #[serde(skip_serializing_if = "Option::is_none")]
            gitignore: Option<Ignored<'a>>,
        }
        #[derive(serde::Serialize)]
        struct Ignored<'a> {
            path: &'a std::path::Path,
            missing: &'a [&'static str],
            appended: bool,
        }
        let v = Out {
            path: &t.path,
            scope: format!("{:?}", t.scope).to_lowercase(),
            changed,
            dry_run: args.dry_run,
            backup: &backup,
            formatting: changed.then_some(formatting),
            changes: &changes,
            notes: &notes,
            settings: &new,
            written_to: (t.real != t.path).then_some(t.real.as_path()),
            gitignore: ignore.as_ref().map(|st| Ignored {
                path: &st.path,
                missing: &st.missing,
                appended,
            }),
        };
        super::out_json(io, &v)?;
    } else {
        super::out(io, &report.text(Paint::of(io)))?;
    }
    Ok(0)
}

/// With the taskhook plugin enabled, its hooks already run taskhook for every event: hooks
/// registered in a settings file as well would handle every event twice. Refused, with how to
/// proceed.
fn refuse_beside_plugin(cx: &Ctx) -> Result<()> {
    let files: Vec<(PathBuf, Value)> = [Scope::Local, Scope::Project, Scope::User]
        .into_iter()
        .filter_map(|s| target::locate(cx, s).ok())
        .filter_map(|t| {
            let v = parse_json(&target::read(&t).ok()??).ok()?;
            Some((t.path, v))
        })
        .collect();
    let Some((key, path)) = install::enabled_plugin(files.iter().map(|(p, v)| (p.as_path(), v)))
    else {
        return Ok(());
    };
    Err(Error::Rule(format!(
        "the taskhook plugin is enabled in {} ({key}): its hooks already run taskhook for \
         every event, and registering them here too would handle every event twice; nothing \
         written. Keep the plugin (nothing else to do), or disable it first (`claude plugin \
         disable {key}`) and run `taskhook install` again",
        path.display()
    )))
}

/// The command the project's shared settings run: `taskhook`, found on PATH.
const PATH_COMMAND: &str = "taskhook";

/// Things worth knowing that are not errors: the same hooks registered in the project's other
/// settings file too, and a `taskhook` the hooks would not find on their PATH.
fn notes_for(cx: &Ctx, t: &Target, new: &Value, command: &str) -> Vec<String> {
    let mut out = Vec::new();
    let others: Vec<Target> = [Scope::User, Scope::Project, Scope::Local]
        .into_iter()
        .filter(|s| *s != t.scope)
        .filter_map(|s| target::locate(cx, s).ok())
        .collect();
    let read = |o: &Target| {
        target::read(o)
            .ok()
            .flatten()
            .and_then(|b| parse_json(&b).ok())
    };
    if command == PATH_COMMAND {
        // The hooks' PATH: local over project over user settings' env, else this one.
        let mut layered: Vec<(Scope, Value)> = others
            .iter()
            .filter_map(|o| Some((o.scope, read(o)?)))
            .collect();
        layered.push((t.scope, new.clone()));
        layered.sort_by_key(|(s, _)| match s {
            Scope::Local => 0,
            Scope::Project => 1,
            Scope::User => 2,
        });
        let values: Vec<&Value> = layered.iter().map(|(_, v)| v).collect();
        let path = resolve::hook_path(cx, &values);
        if resolve::which(path.as_deref(), PATH_COMMAND).is_none() {
            out.push(format!(
                "`taskhook` is not on PATH, and {} runs it from PATH: Claude Code would not \
                 find it. Put the folder holding taskhook on PATH (./install.sh says which), \
                 or register this machine's absolute path instead with `taskhook install \
                 --uninstall && taskhook install --local`",
                t.path.display()
            ));
        }
    }
    if t.scope == Scope::User {
        return out;
    }
    for o in others.iter().filter(|o| o.scope != Scope::User) {
        let has_ours = read(o)
            .and_then(|v| install::uninstall_ops(&v).ok())
            .is_some_and(|(_, changes)| !changes.is_empty());
        if has_ours {
            out.push(format!(
                "{} registers taskhook too, so Claude Code would run it twice; remove one \
                 (`taskhook install{} --uninstall`)",
                o.path.display(),
                o.scope.flag()
            ));
        }
    }
    out
}

/// Everything the human summary says.
struct Report<'a> {
    t: &'a Target,
    changed: bool,
    dry_run: bool,
    uninstall: bool,
    backup: Option<&'a PathBuf>,
    formatting: Formatting,
    changes: &'a [Change],
    ignore: Option<&'a gitignore::Status>,
    gitignore_flag: bool,
    appended: bool,
    notes: &'a [String],
}

impl Report<'_> {
    fn text(&self, paint: Paint) -> String {
        let path = self.t.path.display();
        let mut out = Vec::new();
        if !self.changed && self.uninstall {
            out.push(format!("{path} has no taskhook hooks; nothing changed."));
        } else if !self.changed {
            out.push(format!("{path} is already up to date; nothing changed."));
        } else {
            let verb = match (self.uninstall, self.dry_run) {
                (false, false) => "Registered taskhook in",
                (false, true) => "Would register taskhook in",
                (true, false) => "Removed taskhook's hooks from",
                (true, true) => "Would remove taskhook's hooks from",
            };
            let mut head = format!("{verb} {path}");
            if self.t.real != self.t.path {
                head.push_str(&format!(" (a link; written to {})", self.t.real.display()));
            }
            match (self.dry_run, self.backup) {
                (true, _) => head.push_str(" (dry run: nothing written)"),
                (false, Some(b)) => head.push_str(&format!(" (backup: {})", b.display())),
                (false, None) => {}
            }
            head.push(':');
            out.push(head);
        }
        if self.changed {
            for c in self.changes {
                let mark = match c.action {
                    "added" => paint.green("+"),
                    "updated" => paint.yellow("~"),
                    "removed" => paint.red("-"),
                    _ => paint.dim("="),
                };
                let detail = match c.action {
                    "present" => "already registered".to_string(),
                    "updated" => format!("{} (path or timeout updated)", c.detail),
                    _ => c.detail.clone(),
                };
                out.push(format!("  {mark} {:<14} {detail}", c.event));
            }
            if matches!(self.formatting, Formatting::Reformatted) {
                out.push(
                    "  (its layout could not be kept; re-written with its indentation)".into(),
                );
            }
            if !self.uninstall && !self.dry_run {
                out.push("Claude Code loads hooks when a session starts: start a new one.".into());
            }
        }
        for n in self.notes {
            out.push(format!("{} {n}", paint.yellow("note:")));
        }
        if let Some(st) = self.ignore.filter(|st| !st.missing.is_empty()) {
            let gi = st.path.display();
            let n = st.missing.len();
            if self.appended {
                out.push(format!("Added {n} lines to {gi}."));
            } else {
                out.push(if self.gitignore_flag {
                    format!("Would add to {gi}:")
                } else {
                    format!(
                        "{gi} lacks these lines (add them, or run `taskhook install{} --gitignore`):",
                        self.t.scope.flag()
                    )
                });
                for l in &st.missing {
                    out.push(format!("  {l}"));
                }
            }
        }
        out.join("\n")
    }
}
