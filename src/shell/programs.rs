//! Which programs a command line runs: through the wrappers that only run another program
//! and into the scripts a shell is given.

use super::parse::{simples, split, Simple};
use super::{base, Unparsed, MAX_DEPTH};

/// Shells that run a script given with `-c`, a file, or their input.
const SHELLS: [&str; 8] = ["sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "fish"];

/// Options of a wrapper that take a value (`-n 5`, `--signal KILL`); others are flags.
fn takes_value(wrapper: &str, opt: &str) -> bool {
    let list: &[&str] = match wrapper {
        "env" => &["-u", "--unset", "-C", "--chdir", "-S", "--split-string"],
        "exec" => &["-a"],
        "nice" => &["-n", "--adjustment"],
        "ionice" => &["-c", "--class", "-n", "--classdata", "-p", "-P", "-u"],
        "timeout" => &["-s", "--signal", "-k", "--kill-after"],
        "stdbuf" => &["-i", "-o", "-e", "--input", "--output", "--error"],
        "time" => &["-f", "--format", "-o", "--output"],
        "sudo" => &[
            "-u",
            "--user",
            "-g",
            "--group",
            "-C",
            "-D",
            "--chdir",
            "-h",
            "--host",
            "-p",
            "--prompt",
            "-r",
            "--role",
            "-t",
            "--type",
            "-U",
            "--other-user",
            "-T",
            "--command-timeout",
        ],
        "doas" => &["-u", "-C"],
        "xargs" => &[
            "-a",
            "--arg-file",
            "-d",
            "--delimiter",
            "-E",
            "-I",
            "-L",
            "-n",
            "--max-args",
            "-P",
            "--max-procs",
            "-s",
            "--max-chars",
        ],
        "npx" | "bunx" | "pnpx" => &["-p", "--package", "--call", "-c"],
        "watch" => &["-n", "--interval", "-d", "--differences", "-q", "--equexit"],
        "su" => &["-c", "--command", "-s", "--shell", "-g", "--group", "-G"],
        // setsid, nohup, command, chronic, builtin and the rest: no option takes a value.
        _ => &[],
    };
    list.contains(&opt)
}

/// Skips a wrapper's options from `at`; returns where its command starts, and the value of
/// option `want` if it was given.
fn skip_options<'a>(
    wrapper: &str,
    argv: &'a [String],
    mut at: usize,
    want: &[&str],
) -> (usize, Option<&'a str>) {
    let mut found = None;
    while let Some(w) = argv.get(at) {
        if w == "--" {
            return (at + 1, found);
        }
        if !w.starts_with('-') || w == "-" {
            break;
        }
        let (name, inline) = match w.split_once('=') {
            Some((n, v)) if n.starts_with("--") => (n, Some(v)),
            _ => (w.as_str(), None),
        };
        let value = if inline.is_some() {
            inline
        } else if takes_value(wrapper, name) {
            at += 1;
            argv.get(at).map(String::as_str)
        } else {
            None
        };
        if want.contains(&name) {
            found = value.or(Some(""));
        }
        at += 1;
    }
    (at, found)
}

/// What a program a pipe feeds prints, when it is plain text: `echo …`, `printf …`, or a
/// here-document given to `cat`.
fn printed(s: &Simple) -> Option<String> {
    let program = s.words.first().map(|w| base(w))?;
    match program {
        "echo" | "printf" => {
            let args: Vec<&str> = s.words[1..]
                .iter()
                .map(String::as_str)
                .skip_while(|a| program == "echo" && a.starts_with('-'))
                .collect();
            Some(args.join(" ").replace("\\n", "\n"))
        }
        "cat" if !s.stdin.is_empty() => Some(s.stdin.concat()),
        _ => None,
    }
}

/// The programs a Bash command line would run, each with its arguments (quotes removed,
/// nothing expanded), seen through wrappers and into the scripts given to a shell. A shell
/// given a file runs it: it is listed with the file as its argument.
pub fn programs(line: &str) -> Result<Vec<Vec<String>>, Unparsed> {
    let mut out = Vec::new();
    programs_at(line, 0, &mut out)?;
    Ok(out)
}

fn programs_at(line: &str, depth: usize, out: &mut Vec<Vec<String>>) -> Result<(), Unparsed> {
    let all = simples(line, depth)?;
    for s in &all {
        let input = if s.stdin.is_empty() {
            s.piped_from.and_then(|k| all.get(k)).and_then(printed)
        } else {
            Some(s.stdin.concat())
        };
        unwrap(&s.words, input.as_deref(), depth, out)?;
    }
    Ok(())
}

/// One simple command's words: the program it finally runs, or the commands of the script it
/// runs.
fn unwrap(
    argv: &[String],
    input: Option<&str>,
    depth: usize,
    out: &mut Vec<Vec<String>>,
) -> Result<(), Unparsed> {
    if depth > MAX_DEPTH {
        return Err(Unparsed::TooDeep);
    }
    let script = |text: &str, out: &mut Vec<Vec<String>>| programs_at(text, depth + 1, out);
    let assignment = |w: &str| {
        w.split_once('=').is_some_and(|(n, _)| {
            let n = n.strip_suffix('+').unwrap_or(n);
            !n.is_empty()
                && !n.starts_with(|c: char| c.is_ascii_digit())
                && n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        })
    };
    const KEYWORDS: [&str; 13] = [
        "!", "{", "}", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "time",
    ];
    let mut at = 0;
    while argv
        .get(at)
        .is_some_and(|w| assignment(w) || KEYWORDS.contains(&w.as_str()))
    {
        at += 1;
        // `time -p cmd`.
        if argv.get(at - 1).is_some_and(|w| w == "time") && argv.get(at).is_some_and(|w| w == "-p")
        {
            at += 1;
        }
    }
    let Some(program) = argv.get(at) else {
        return Ok(());
    };
    let rest = &argv[at..];
    let name = base(program);
    match name {
        "for" | "case" | "select" | "function" | "in" | "esac" => Ok(()),
        "env" => {
            let (next, split_string) = skip_options("env", rest, 1, &["-S", "--split-string"]);
            let mut words = Vec::new();
            if let Some(s) = split_string {
                words = split(s, depth + 1)?;
            }
            let mut tail = &rest[next..];
            if let Some(s) = rest[1..next]
                .iter()
                .find_map(|w| w.strip_prefix("-S").filter(|v| !v.is_empty()))
            {
                words = split(s, depth + 1)?;
            }
            while tail.first().is_some_and(|w| assignment(w)) {
                tail = &tail[1..];
            }
            words.extend(tail.iter().cloned());
            unwrap(&words, input, depth + 1, out)
        }
        "command" | "builtin" => {
            let (next, shows) = skip_options("command", rest, 1, &["-v", "-V"]);
            if shows.is_some() {
                // `command -v taskhook` only prints where it is.
                return Ok(());
            }
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "exec" | "nohup" | "setsid" | "chronic" | "nice" | "ionice" | "stdbuf" | "time"
        | "sudo" | "doas" => {
            let (next, _) = skip_options(name, rest, 1, &[]);
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "timeout" => {
            // Options, then the duration, then the command.
            let (next, _) = skip_options("timeout", rest, 1, &[]);
            unwrap(rest.get(next + 1..).unwrap_or(&[]), input, depth + 1, out)
        }
        "xargs" => {
            let (next, _) = skip_options("xargs", rest, 1, &[]);
            unwrap(&rest[next..], None, depth + 1, out)
        }
        "npx" | "bunx" | "pnpx" => {
            let (next, call) = skip_options(name, rest, 1, &["-c", "--call"]);
            if let Some(c) = call.filter(|c| !c.is_empty()) {
                script(c, out)?;
            }
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "npm" | "pnpm" | "yarn"
            if matches!(rest.get(1).map(String::as_str), Some("exec" | "x" | "dlx")) =>
        {
            let (next, _) = skip_options("npx", rest, 2, &[]);
            unwrap(&rest[next..], input, depth + 1, out)
        }
        "find" => {
            let mut i = 1;
            while i < rest.len() {
                if matches!(rest[i].as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
                    let end = rest[i + 1..]
                        .iter()
                        .position(|w| w == ";" || w == "+")
                        .map_or(rest.len(), |n| i + 1 + n);
                    unwrap(&rest[i + 1..end], None, depth + 1, out)?;
                    i = end;
                }
                i += 1;
            }
            out.push(rest.to_vec());
            Ok(())
        }
        "eval" => script(&rest[1..].join(" "), out),
        "watch" => {
            let (next, _) = skip_options("watch", rest, 1, &[]);
            script(&rest[next..].join(" "), out)
        }
        "su" => {
            let (_, command) = skip_options("su", rest, 1, &["-c", "--command"]);
            match command {
                Some(c) => script(c, out),
                None => Ok(()),
            }
        }
        shell if SHELLS.contains(&shell) => {
            // Options (`-e`, `-o pipefail`, `-lc`); `-c` takes the script from the first operand.
            let mut i = 1;
            let mut from_arg = false;
            while let Some(w) = rest.get(i) {
                if w == "--" {
                    i += 1;
                    break;
                }
                if !(w.starts_with('-') || w.starts_with('+')) || w == "-" {
                    break;
                }
                if matches!(
                    w.as_str(),
                    "-o" | "+o" | "-O" | "+O" | "--rcfile" | "--init-file"
                ) {
                    i += 1;
                } else if !w.starts_with("--") && w.contains('c') {
                    from_arg = true;
                }
                i += 1;
            }
            match (from_arg, rest.get(i), input) {
                (true, Some(text), _) => script(text, out),
                (false, Some(_), _) => {
                    out.push(rest.to_vec());
                    Ok(())
                }
                (false, None, Some(text)) => script(text, out),
                _ => Ok(()),
            }
        }
        _ => {
            out.push(rest.to_vec());
            Ok(())
        }
    }
}
