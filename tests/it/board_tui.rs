//! The terminal board driven in tmux (send-keys, capture-pane): every store and unit in its
//! column, a change on disk by another process on screen within 2 s, the keys (show, filter,
//! stores), colours that follow `--color` and `NO_COLOR`, `q` and SIGTERM giving the terminal
//! back, hostile text that does not act on the terminal, and 10,000 units that open and scroll.
//!
//! tmux is required (`.ci/run` installs it): without it these tests fail. Each test runs its own
//! tmux server on a private socket and ends only that server.

use std::path::PathBuf;
use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::board::{big_store, five_stores, hostile_stores, which, A, UNITS};
use crate::common::{Project, NOW};

/// One terminal test at a time: they share two cores with the rest of the suite, and the
/// 2-second refresh is measured.
static TERMINAL: Mutex<()> = Mutex::new(());

const COLUMNS: [&str; 5] = [
    "ready",
    "in progress",
    "waiting for a person",
    "blocked",
    "done",
];

/// A tmux server of its own running `taskhook board` in one window.
struct Tmux {
    dir: tempfile::TempDir,
    sock: PathBuf,
    started: Instant,
}

impl Tmux {
    /// Starts `taskhook board ARGS` in the project, in a `w`×`h` terminal, with `env` added.
    /// When it ends the window prints `EXITED <status>` and the terminal's modes.
    fn board(p: &Project, args: &str, env: &[(&str, &str)], w: u16, h: u16) -> Tmux {
        assert!(
            which("tmux").is_some(),
            "tmux is not on PATH (apt-get install tmux; .ci/run does)"
        );
        let dir = tempfile::tempdir().unwrap();
        let sock = dir.path().join("sock");
        let bin = assert_cmd::cargo::cargo_bin("taskhook");
        let mut exports = format!(
            "export HOME='{}' TASKHOOK_NOW='{NOW}' PATH='{}' TERM=xterm-256color\nunset NO_COLOR\n",
            p.home.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        for (k, v) in env {
            exports.push_str(&format!("export {k}='{v}'\n"));
        }
        let script = format!(
            "cd '{}'\n{exports}sh -c 'echo $$ > \"{pid}\"; exec \"{bin}\" board {args}'\n\
             echo \"EXITED $?\"\n\
             echo \"MODES $(stty -a | tr ' ;' '\\n\\n' | grep -E '^-?(icanon|echo|isig)$' | tr '\\n' ' ')\"\n\
             exec sleep 600\n",
            p.root.display(),
            pid = dir.path().join("pid").display(),
            bin = bin.display(),
        );
        let run = dir.path().join("run.sh");
        std::fs::write(&run, script).unwrap();
        let t = Tmux {
            started: Instant::now(),
            sock,
            dir,
        };
        let out = t
            .tmux()
            .args(["-f", "/dev/null", "new-session", "-d", "-s", "t"])
            .args(["-x", &w.to_string(), "-y", &h.to_string()])
            .arg(format!("sh {}", run.display()))
            .output()
            .unwrap();
        assert!(out.status.success(), "tmux: {out:?}");
        t
    }

    fn tmux(&self) -> Command {
        let mut c = Command::new("tmux");
        c.arg("-S").arg(&self.sock);
        c
    }

    /// What the window shows, as text.
    fn screen(&self) -> String {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// What the window shows, with its colours and styles as escape sequences.
    fn screen_styled(&self) -> String {
        let out = self
            .tmux()
            .args(["capture-pane", "-p", "-e", "-t", "t"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    fn display(&self, format: &str) -> String {
        let out = self
            .tmux()
            .args(["display-message", "-p", "-t", "t", format])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn keys(&self, keys: &[&str]) {
        let out = self
            .tmux()
            .args(["send-keys", "-t", "t"])
            .args(keys)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }

    /// Waits until the screen passes `ok`, at most `within`; returns it.
    fn wait_for(&self, what: &str, within: Duration, ok: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + within;
        loop {
            let s = self.screen();
            if ok(&s) {
                return s;
            }
            assert!(
                Instant::now() < deadline,
                "{what}: not on screen within {within:?}:\n{s}"
            );
            std::thread::sleep(Duration::from_millis(25));
        }
    }

    /// Waits for the board's first whole frame (its footer is drawn last); returns the screen
    /// and how long it took from the start of the window.
    fn first_frame(&self) -> (String, Duration) {
        let s = self.wait_for("the board", Duration::from_secs(60), |s| {
            s.contains("taskhook board ·") && s.contains("q quit")
        });
        (s, self.started.elapsed())
    }

    fn pid(&self) -> i32 {
        std::fs::read_to_string(self.dir.path().join("pid"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// After the board ended: its exit status shown, the terminal back in its normal modes
    /// (canonical input, echo, signals), on the main screen, with its cursor.
    fn assert_restored(&self, status: i32) {
        let s = self.wait_for("the board's end", Duration::from_secs(10), |s| {
            s.contains("EXITED") && s.contains("MODES")
        });
        assert!(s.contains(&format!("EXITED {status}")), "{s}");
        let modes = s.lines().find(|l| l.starts_with("MODES")).unwrap();
        assert_eq!(modes.trim(), "MODES isig icanon echo", "{s}");
        assert!(!s.contains("┌ ready"), "the board is still on screen:\n{s}");
        assert_eq!(
            self.display("#{alternate_on}"),
            "0",
            "still on the alternate screen"
        );
        assert_eq!(self.display("#{cursor_flag}"), "1", "the cursor is hidden");
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").output();
    }
}

/// The column (0 to 4) each occurrence of `text` on screen sits in.
fn column_of(screen: &str, text: &str) -> Option<usize> {
    let lines: Vec<Vec<char>> = screen.lines().map(|l| l.chars().collect()).collect();
    let top = lines
        .iter()
        .find(|l| l.iter().collect::<String>().contains("┌ ready"))?;
    let starts: Vec<usize> = top
        .iter()
        .enumerate()
        .filter(|(_, c)| **c == '┌')
        .map(|(i, _)| i)
        .collect();
    let want: Vec<char> = text.chars().collect();
    for l in &lines {
        if let Some(x) = l.windows(want.len()).position(|w| w == want.as_slice()) {
            // Not a longer reference that starts the same way.
            if l.get(x + want.len())
                .is_some_and(|c| !c.is_whitespace() && *c != '│')
            {
                continue;
            }
            return Some(starts.iter().filter(|s| **s <= x).count() - 1);
        }
    }
    None
}

/// Whether styled text sets a foreground colour (SGR 30–37, 90–97 or 38).
fn has_colour(styled: &str) -> bool {
    styled.split("\x1b[").skip(1).any(|seq| {
        let Some(params) = seq.split('m').next() else {
            return false;
        };
        params
            .split(';')
            .any(|p| matches!(p.parse::<u32>(), Ok(30..=38) | Ok(90..=97)))
    })
}

#[test]
fn the_terminal_board_shows_every_unit_follows_the_disk_and_gives_the_terminal_back() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    five_stores(&p);
    let t = Tmux::board(&p, "", &[], 220, 50);
    let (s, took) = t.first_frame();
    eprintln!("first frame after {took:?}");
    for (unit, col) in UNITS {
        let want = COLUMNS.iter().position(|c| c == col).unwrap();
        assert_eq!(
            column_of(&s, unit),
            Some(want),
            "{unit} should be in {col}:\n{s}"
        );
    }
    for store in [
        "projects web",
        "iterative auth",
        "execute run",
        "cdd work",
        "claude-tasks proj",
    ] {
        assert!(s.contains(store), "{store}:\n{s}");
    }
    assert!(s.contains("session aaaaaaaa, lease ends in 30 min"), "{s}");
    assert!(s.contains("q quit"), "the keys are in the footer");
    // Another process completes web/T1: the board shows it done within 2 s.
    let mut c = p.cmd();
    c.env("CLAUDE_CODE_SESSION_ID", A);
    let r = p.run_with(c, &["done", "web/T1"], "");
    assert_eq!(r.code, 0, "{r:?}");
    let s = t.wait_for("web/T1 done", Duration::from_secs(2), |s| {
        column_of(s, "web/T1") == Some(4) && column_of(s, "web/T2") == Some(0)
    });
    assert!(s.contains("done (2)"), "{s}");
    // Enter shows the unit (what `taskhook show` prints); Esc closes it.
    t.keys(&["Enter"]);
    let s = t.wait_for("the unit shown", Duration::from_secs(5), |s| {
        s.contains("Esc closes")
    });
    assert!(
        s.contains("nobody holds it") || s.contains("claimed by"),
        "{s}"
    );
    t.keys(&["Escape"]);
    t.wait_for("the unit closed", Duration::from_secs(5), |s| {
        !s.contains("Esc closes")
    });
    // `/` filters; Esc clears the filter.
    t.keys(&["/", "t", "e", "s", "t", " ", "i", "t", "Enter"]);
    let s = t.wait_for("filtered", Duration::from_secs(5), |s| {
        s.contains("[filter: test it]")
    });
    assert!(
        s.contains("web/T2") && !s.contains("auth/R1") && !s.contains("web/T3"),
        "{s}"
    );
    t.keys(&["/", "Escape"]);
    t.wait_for("unfiltered", Duration::from_secs(5), |s| {
        s.contains("auth/R1")
    });
    // `s` cycles through the stores.
    t.keys(&["s"]);
    let s = t.wait_for("one store", Duration::from_secs(5), |s| {
        s.contains("showing")
    });
    assert!(
        s.contains("showing iterative auth") && !s.contains("web/T2"),
        "{s}"
    );
    t.keys(&["s", "s", "s", "s", "s"]);
    t.wait_for("every store", Duration::from_secs(5), |s| {
        !s.contains("showing")
    });
    // Moving: right to the next column, down a card.
    t.keys(&["l"]);
    t.wait_for("the next column", Duration::from_secs(5), |s| {
        s.contains("in progress (0)") || s.contains("waiting for a person (1/1)")
    });
    // q quits and gives the terminal back.
    t.keys(&["q"]);
    t.assert_restored(0);
}

#[test]
fn sigterm_gives_the_terminal_back() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    five_stores(&p);
    let t = Tmux::board(&p, "", &[], 160, 40);
    t.first_frame();
    let rc = unsafe { libc::kill(t.pid(), libc::SIGTERM) };
    assert_eq!(rc, 0);
    t.assert_restored(143);
}

#[test]
fn a_panic_gives_the_terminal_back_and_says_what_happened() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    five_stores(&p);
    let t = Tmux::board(&p, "", &[("TASKHOOK_BOARD_TEST_PANIC", "1")], 160, 40);
    t.assert_restored(1);
    let s = t.screen();
    assert!(
        s.contains("taskhook: internal error: ") && s.contains("the board panics on purpose"),
        "{s}"
    );
}

#[test]
fn colours_follow_color_and_no_color() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    five_stores(&p);
    for (args, env, coloured) in [
        ("", vec![], true),
        ("", vec![("NO_COLOR", "1")], false),
        ("--color never", vec![], false),
        ("--color always", vec![("NO_COLOR", "1")], true),
    ] {
        let t = Tmux::board(&p, args, &env, 160, 40);
        t.first_frame();
        let styled = t.screen_styled();
        assert_eq!(has_colour(&styled), coloured, "{args} {env:?}:\n{styled:?}");
        t.keys(&["q"]);
        t.assert_restored(0);
    }
}

#[test]
fn hostile_text_does_not_act_on_the_terminal_and_broken_stores_are_cards() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    hostile_stores(&p);
    let t = Tmux::board(&p, "", &[], 200, 50);
    let title = t.display("#{pane_title}");
    let (s, _) = t.first_frame();
    assert!(
        s.contains("\\u{1b}[31mred"),
        "escapes shown, not acted on:\n{s}"
    );
    assert!(s.contains("<script>alert"), "{s}");
    assert!(s.contains("cannot be read"), "{s}");
    assert!(s.contains("problem: state.json"), "{s}");
    assert_eq!(column_of(&s, "huge"), Some(2), "{s}");
    assert!(
        !t.display("#{pane_title}").contains("pwned"),
        "the title was set"
    );
    assert_eq!(t.display("#{pane_title}"), title);
    // The window still shows the header after an escape that would clear the screen.
    assert!(s.lines().next().unwrap().contains("taskhook board"), "{s}");
    // Every line stays within the terminal (nothing wrapped by a 3,000-character id).
    assert!(s.lines().all(|l| l.chars().count() <= 200));
    t.keys(&["q"]);
    t.assert_restored(0);
}

#[test]
fn ten_thousand_units_open_and_scroll() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    big_store(&p, 10_000);
    let t = Tmux::board(&p, "", &[], 160, 40);
    let (s, took) = t.first_frame();
    eprintln!("10,000 units: first frame after {took:?} (debug build, tmux and sh included)");
    assert!(s.contains("proj/B00001"), "{s}");
    let total = s
        .split("ready (1/")
        .nth(1)
        .and_then(|r| r.split(')').next())
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or_else(|| panic!("no ready count:\n{s}"));
    assert!(total > 7000, "{total}");
    t.keys(&["PageDown"]);
    let s = t.wait_for("a page down", Duration::from_secs(10), |s| {
        !s.contains("ready (1/")
    });
    assert!(!s.contains("proj/B00001 "), "{s}");
    t.keys(&["End"]);
    let s = t.wait_for("the end", Duration::from_secs(10), |s| {
        s.contains(&format!("ready ({total}/{total})"))
    });
    assert!(s.contains("proj/B09999"), "{s}");
    t.keys(&["k", "k"]);
    t.wait_for("up two", Duration::from_secs(10), |s| {
        s.contains(&format!("ready ({}/{total})", total - 2))
    });
    t.keys(&["q"]);
    t.assert_restored(0);
}

#[test]
fn enter_shows_the_card_even_when_two_layouts_have_a_store_of_its_name() {
    let _one = TERMINAL.lock().unwrap_or_else(|e| e.into_inner());
    let p = Project::new();
    // projects `web` and iterative `web`, each with a unit T1: `web/T1` alone is ambiguous.
    crate::agent::projects_store(&p);
    let r = p.run(&["iterative", "new", "web", "--task", "T1"], "");
    assert_eq!(r.code, 0, "{r:?}");
    let t = Tmux::board(&p, "", &[], 200, 50);
    t.first_frame();
    t.keys(&["Enter"]);
    let s = t.wait_for("the unit shown", Duration::from_secs(5), |s| {
        s.contains("Esc closes")
    });
    assert!(
        s.contains("nobody holds it") || s.contains("claimed by"),
        "{s}"
    );
    assert!(!s.contains("names several units"), "{s}");
    // Its terminal goes away with the popup open: the board ends (it once spun forever on the
    // closed terminal's end of file).
    let pid = t.pid();
    drop(t);
    let alive = || {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|st| !st.split(") ").nth(1).unwrap_or("").starts_with('Z'))
    };
    let gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(100));
        !alive()
    });
    assert!(
        gone,
        "the board (pid {pid}) still runs after its terminal went away"
    );
}
