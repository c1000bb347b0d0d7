//! Layout `cdd` (seed 004) through the real binary: the ten commands and their JSON replies
//! ([`commands`]), the hooks, halts and ownership ([`hooks`]), and SessionStart's repairs,
//! including after real kills ([`repair`]).

mod commands;
mod history;
mod hooks;
mod names;
mod ownership;
mod repair;
mod transcript;

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::common::{Project, Run};

/// The seed's example order.
pub const SEED_ORDER: &str = r#"{
"tasks": [
{"task": "foo.md", "group": "Core", "model": "sonnet", "thinking": "none"},
{"task": "bar.md", "group": "Tests", "model": "sonnet", "thinking": "thinking"},
{"stop": "verify-core", "message": "Verify core features work before proceeding"},
{"task": "baz.md", "group": "Integration", "model": "sonnet", "thinking": "none"}
]
}
"#;

/// A project whose workspace is `<tmp>/ws` (given as `CDD_DIR`).
pub struct Ws {
    pub p: Project,
    pub dir: PathBuf,
}

impl Ws {
    pub fn new() -> Self {
        let p = Project::new();
        let dir = p.tmp.path().join("ws");
        Ws { p, dir }
    }

    /// `init`, the seed's order and its three task files in `tasks/`, then `import`.
    pub fn seeded() -> Self {
        let w = Ws::new();
        w.ok(&["init"]);
        w.write_tasks(SEED_ORDER, &["foo.md", "bar.md", "baz.md"]);
        w.ok(&["import"]);
        w
    }

    /// Writes `tasks/order.json` and the task files beside it.
    pub fn write_tasks(&self, order: &str, files: &[&str]) {
        let tasks = self.dir.join("tasks");
        std::fs::create_dir_all(&tasks).unwrap();
        std::fs::write(tasks.join("order.json"), order).unwrap();
        for f in files {
            std::fs::write(tasks.join(f), format!("# {f}\n")).unwrap();
        }
    }

    /// `taskhook cdd ARGS` at `now`.
    pub fn cdd_at(&self, now: &str, args: &[&str]) -> Run {
        let mut c = self.p.cmd();
        c.env("CDD_DIR", &self.dir).env("TASKHOOK_NOW", now);
        let mut all = vec!["cdd"];
        all.extend_from_slice(args);
        self.p.run_with(c, &all, "")
    }

    pub fn cdd(&self, args: &[&str]) -> Run {
        self.cdd_at(crate::common::NOW, args)
    }

    /// Runs a command that must succeed; returns its `data`.
    pub fn ok(&self, args: &[&str]) -> Value {
        ok(&self.cdd(args))
    }

    /// `taskhook hook` with the workspace in the environment.
    pub fn hook(&self, payload: &Value) -> Run {
        let mut c = self.p.cmd();
        c.env("CDD_DIR", &self.dir);
        self.p
            .run_with(c, &["hook"], serde_json::to_vec(payload).unwrap())
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.join(rel)
    }

    /// The history's lines, as written.
    pub fn history_lines(&self) -> Vec<String> {
        String::from_utf8_lossy(&std::fs::read(self.path("tasks/history.jsonl")).unwrap())
            .lines()
            .map(str::to_string)
            .collect()
    }

    /// The history's events (a line torn by a kill is left out).
    pub fn history(&self) -> Vec<Value> {
        self.history_lines()
            .iter()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }

    /// The status folders holding `name`.
    pub fn folders_of(&self, name: &str) -> Vec<&'static str> {
        ["pending", "in_progress", "completed", "failed"]
            .into_iter()
            .filter(|f| self.path(&format!("tasks/{f}/{name}")).exists())
            .collect()
    }

    pub fn order(&self) -> Value {
        serde_json::from_str(&std::fs::read_to_string(self.path("tasks/order.json")).unwrap())
            .unwrap()
    }
}

/// The `data` of a successful reply (exactly one JSON object on stdout, nothing on stderr).
pub fn ok(run: &Run) -> Value {
    assert_eq!((run.code, run.stderr.as_str()), (0, ""), "{run:?}");
    assert_eq!(run.stdout.lines().count(), 1, "{run:?}");
    let v = run.json();
    assert_eq!(v["success"], true, "{run:?}");
    v["data"].clone()
}

/// The code of a failed reply: one JSON object with exactly success, error and code; exit 1
/// and nothing on stderr, or for a wrong command line (`USAGE`) exit 2 with clap's message on
/// stderr.
pub fn code(run: &Run) -> String {
    assert_eq!(run.stdout.lines().count(), 1, "{run:?}");
    let v = run.json();
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["success", "error", "code"], "{run:?}");
    assert_eq!(v["success"], false);
    assert!(!v["error"].as_str().unwrap().is_empty());
    let code = v["code"].as_str().unwrap().to_string();
    if code == "USAGE" {
        assert_eq!(run.code, 2, "{run:?}");
        assert!(run.stderr.contains("Usage: taskhook cdd"), "{run:?}");
    } else {
        assert_eq!((run.code, run.stderr.as_str()), (1, ""), "{run:?}");
    }
    code
}

/// A payload from the captures, in this project.
pub fn payload(w: &Ws, file: &str) -> Value {
    w.p.payload(file)
}

/// A main-agent PostToolUse of `Bash` that ran `command` and printed `stdout`.
pub fn bash_ran(w: &Ws, command: &str, stdout: &str) -> Value {
    let mut v = payload(w, "PostToolUse.Bash.json");
    v["tool_input"]["command"] = json!(command);
    v["tool_response"]["stdout"] = json!(stdout);
    v
}
