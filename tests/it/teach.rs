//! Issue 26 item 11, help that teaches: an example in every command's `--help` (each one a
//! command line the parser accepts), value completion of store names and layouts, and colour
//! in the human output of the verbs, following `--color` and `NO_COLOR`.

use crate::common::Project;

/// A project with a store of each layout a verb prints about.
fn stocked() -> Project {
    let p = Project::new();
    p.new_slug("auth", &["T1", "T2"], 5);
    assert_eq!(p.run(&["projects", "new", "web"], "").code, 0);
    let add = p.run(&["projects", "add", "web", "T1", "--title", "Login"], "");
    assert_eq!(add.code, 0, "{add:?}");
    p
}

/// The human output of verbs beside `status`, each run with `args` first.
fn verbs(p: &Project, args: &[&str]) -> Vec<(Vec<String>, String)> {
    let lines: [&[&str]; 6] = [
        &["iterative", "status"],
        &["projects", "next", "web"],
        &[
            "projects", "set", "web", "T1", "BLOCKED", "--reason", "waits",
        ],
        &["doctor"],
        &["validate"],
        &["install", "--dry-run"],
    ];
    lines
        .iter()
        .map(|l| {
            let mut all: Vec<&str> = args.to_vec();
            all.extend_from_slice(l);
            let run = p.run(&all, "");
            (l.iter().map(|s| s.to_string()).collect(), run.stdout)
        })
        .collect()
}

#[test]
fn the_verbs_human_output_is_coloured_as_asked() {
    let p = stocked();
    for (line, out) in verbs(&p, &["--color", "always"]) {
        assert!(out.contains("\x1b["), "{line:?} has no colour:\n{out}");
    }
    for (line, out) in verbs(&p, &["--color", "never"]) {
        assert!(!out.contains('\x1b'), "{line:?} is coloured:\n{out}");
    }
    // Not a terminal (a pipe, here): no colour unless asked.
    for (line, out) in verbs(&p, &[]) {
        assert!(!out.contains('\x1b'), "{line:?} is coloured:\n{out}");
    }
    // JSON never.
    let run = p.run(&["--color", "always", "iterative", "status", "--json"], "");
    assert!(!run.stdout.contains('\x1b'), "{run:?}");
}

/// On a terminal colour is on, unless NO_COLOR is set (`script` gives the real binary a
/// terminal; skipped where util-linux's script is missing).
#[test]
fn a_terminal_gets_colour_unless_no_color() {
    let p = stocked();
    let have_script = std::process::Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have_script {
        eprintln!("skipped: no `script` to give the binary a terminal");
        return;
    }
    let bin = assert_cmd::cargo::cargo_bin("taskhook");
    let on_tty = |no_color: bool| {
        let mut c = std::process::Command::new("script");
        c.args([
            "-qec",
            &format!("{} iterative status", bin.display()),
            "/dev/null",
        ])
        .current_dir(&p.root)
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", &p.home)
        .env("TASKHOOK_NOW", crate::common::NOW);
        if no_color {
            c.env("NO_COLOR", "1");
        }
        let out = c.output().unwrap();
        assert!(out.status.success(), "{out:?}");
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let coloured = on_tty(false);
    assert!(coloured.contains("\x1b["), "{coloured}");
    assert!(coloured.contains("auth"), "{coloured}");
    let plain = on_tty(true);
    assert!(!plain.contains('\x1b'), "{plain}");
    assert!(plain.contains("auth"), "{plain}");
}

/// Every command path below `taskhook` (groups and their commands), `help` left out.
fn paths(c: &clap::Command, parent: &str, out: &mut Vec<String>) {
    for s in c.get_subcommands().filter(|s| s.get_name() != "help") {
        let path = format!("{parent}{}", s.get_name());
        out.push(path.clone());
        paths(s, &format!("{path} "), out);
    }
}

/// The words of a command line, as sh splits them (plain, '…' and "…" words).
fn words(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for ch in line.chars() {
        match (quote, ch) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), c) => cur.push(c),
            (None, '\'' | '"') => {
                quote = Some(ch);
                any = true;
            }
            (None, ' ') => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                any = false;
            }
            (None, c) => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// The taskhook invocation of an example line: its `taskhook …` part, without environment
/// assignments, redirections and the comment.
fn invocation(line: &str) -> Option<Vec<String>> {
    let line = line.split("  #").next().unwrap_or(line);
    let part = line
        .split("&&")
        .flat_map(|p| p.split('|'))
        .find(|p| words(p).iter().any(|w| w == "taskhook"))?;
    let mut ws = words(part);
    let start = ws.iter().position(|w| w == "taskhook")?;
    ws.drain(..start);
    if let Some(redirect) = ws
        .iter()
        .position(|w| w.starts_with('<') || w.starts_with('>'))
    {
        ws.truncate(redirect);
    }
    Some(ws)
}

#[test]
fn every_command_has_an_example_the_parser_accepts() {
    let cmd = taskhook::cli::command();
    let mut all = Vec::new();
    paths(&cmd, "", &mut all);
    assert!(all.len() > 50, "{all:?}");
    let p = Project::new();
    for path in &all {
        let mut args: Vec<&str> = path.split(' ').collect();
        args.push("--help");
        let help = p.run(&args, "").stdout;
        let examples = help
            .split("Examples:\n")
            .nth(1)
            .unwrap_or_else(|| panic!("`taskhook {path} --help` has no example:\n{help}"));
        let mut own = 0;
        for line in examples.lines().map(str::trim).filter(|l| !l.is_empty()) {
            let Some(ws) = invocation(line) else { continue };
            if let Err(e) = cmd.clone().try_get_matches_from(&ws) {
                if !matches!(e.kind(), clap::error::ErrorKind::DisplayHelp) {
                    panic!("example `{line}` of `{path}` does not parse: {e}");
                }
            }
            if ws[1..].join(" ").starts_with(path.as_str()) {
                own += 1;
            }
        }
        assert!(
            own > 0,
            "no example of `taskhook {path}` runs it:\n{examples}"
        );
    }
    // And the man pages carry them.
    let man = p.run(&["man", "install"], "").stdout;
    assert!(man.contains("taskhook install \\-\\-local"), "{man}");
}

/// `TASKHOOK_COMPLETE=bash taskhook -- WORDS…`: what the shell scripts ask.
fn complete(p: &Project, index: usize, line: &[&str]) -> Vec<String> {
    let mut c = p.cmd();
    c.env("TASKHOOK_COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", index.to_string());
    let mut args = vec!["--", "taskhook"];
    args.extend_from_slice(line);
    let run = p.run_with(c, &args, "");
    assert_eq!(run.code, 0, "{run:?}");
    run.stdout.lines().map(str::to_string).collect()
}

#[test]
fn shells_complete_store_names_and_layouts() {
    let p = stocked();
    let got = complete(&p, 3, &["iterative", "status", ""]);
    assert!(got.contains(&"auth".to_string()), "{got:?}");
    let got = complete(&p, 3, &["iterative", "signal", "a"]);
    assert_eq!(got, ["auth"]);
    let got = complete(&p, 3, &["projects", "next", ""]);
    assert!(got.contains(&"web".to_string()), "{got:?}");
    let got = complete(&p, 3, &["status", "--layout", ""]);
    for l in ["iterative", "claude-tasks", "projects", "execute", "cdd"] {
        assert!(got.contains(&l.to_string()), "{l}: {got:?}");
    }
    let got = complete(&p, 2, &["recover", ".c"]);
    assert!(
        got.contains(&".claude/iterative/auth".to_string()),
        "{got:?}"
    );
    let got = complete(&p, 1, &["iter"]);
    assert_eq!(got, ["iterative"]);
    // `status --layout` filters.
    let run = p.run(&["status", "--layout", "projects", "--json"], "");
    let stores = run.json()["stores"].as_array().unwrap().clone();
    assert_eq!(stores.len(), 1, "{run:?}");
    assert_eq!(stores[0]["layout"], "projects");
}

/// The bash script, sourced in a real bash, completes through the binary on PATH.
#[test]
fn the_bash_script_completes_in_bash() {
    let p = stocked();
    let script = p.run(&["completions", "bash"], "");
    assert_eq!(script.code, 0, "{script:?}");
    let file = p.tmp.path().join("taskhook.bash");
    std::fs::write(&file, &script.stdout).unwrap();
    let probe = format!(
        "source {}\nCOMP_WORDS=(taskhook iterative status '')\nCOMP_CWORD=3\nCOMP_TYPE=9\n\
         _clap_complete_taskhook taskhook '' status\nprintf '%s\\n' \"${{COMPREPLY[@]}}\"\n",
        file.display()
    );
    let out = std::process::Command::new("bash")
        .arg("-c")
        .arg(&probe)
        .current_dir(&p.root)
        .env_clear()
        .env("PATH", crate::common::path_with_bin())
        .env("HOME", &p.home)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(text.lines().any(|l| l == "auth"), "{text}");
    for shell in ["zsh", "fish", "powershell", "elvish"] {
        let run = p.run(&["completions", shell], "");
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("TASKHOOK_COMPLETE"), "{shell}: {run:?}");
    }
}
