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
