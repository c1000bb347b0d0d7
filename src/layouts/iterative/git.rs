//! Which commits git has, for seed 003's "Conflicting State" recovery ("trust git/files"): one
//! bounded `git cat-file --batch` in the slug's folder, asked only when state.json and
//! progress.md disagree or state.json is rebuilt, never on an event's ordinary path.
//!
//! The repository is untrusted: only strings that look like commit hashes are passed (on
//! stdin, never as arguments), `cat-file` runs no hooks and reads no work tree, and the run is
//! bounded in time (2 s) and output (16 MiB) by the one git runner ([`crate::store::git`]).
//! Any failure means "git cannot say".

use std::collections::HashMap;
use std::path::Path;
use std::time::Duration;

use super::log::is_hash;

const TIMEOUT: Duration = Duration::from_secs(2);
const OUTPUT_CAP: usize = 16 * 1024 * 1024;
const HASH_CAP: usize = 5000;

/// The commits among `hashes` that git has, each with its subject; `None` when git cannot say
/// (no git, no repository, a timeout).
pub fn commits(dir: &Path, hashes: &[&str]) -> Option<HashMap<String, String>> {
    let mut asked: Vec<&str> = Vec::new();
    for h in hashes.iter().copied().filter(|h| is_hash(h)) {
        if !asked.contains(&h) && asked.len() < HASH_CAP {
            asked.push(h);
        }
    }
    let input: String = asked.iter().map(|h| format!("{h}\n")).collect();
    let out = crate::store::git::read_only(
        dir,
        TIMEOUT,
        OUTPUT_CAP,
        &["cat-file", "--batch"],
        Some(input.as_bytes()),
    )?;
    Some(parse_batch(&asked, &out))
}

/// Parses `git cat-file --batch` output: per input, `<sha> <type> <size>\n<content>\n` or
/// `<input> missing` / `ambiguous`. Only commits count; the subject is the message's first line.
fn parse_batch(asked: &[&str], out: &[u8]) -> HashMap<String, String> {
    let mut found = HashMap::new();
    let mut pos = 0;
    for h in asked {
        let Some(nl) = out[pos..].iter().position(|b| *b == b'\n') else {
            break;
        };
        let header = String::from_utf8_lossy(&out[pos..pos + nl]).into_owned();
        pos += nl + 1;
        let parts: Vec<&str> = header.split(' ').collect();
        let [_, kind, size] = parts[..] else { continue };
        let Ok(size) = size.parse::<usize>() else {
            break;
        };
        let end = (pos + size).min(out.len());
        let body = String::from_utf8_lossy(&out[pos..end]);
        pos = (end + 1).min(out.len());
        if kind == "commit" {
            let subject = body
                .split_once("\n\n")
                .map(|(_, msg)| msg.lines().next().unwrap_or("").trim().to_string())
                .unwrap_or_default();
            found.insert(h.to_string(), subject);
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn batch_output_is_parsed() {
        let body = "tree 0\nauthor x\n\nfeat: parser\n\nbody";
        let out = format!("1a2b3c4d5e6f commit {}\n{body}\nffff missing\n", body.len());
        let found = parse_batch(&["1a2b", "ffff"], out.as_bytes());
        assert_eq!(found.get("1a2b").map(String::as_str), Some("feat: parser"));
        assert!(!found.contains_key("ffff"));
    }

    #[test]
    fn no_repository_means_git_cannot_say_or_has_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let got = commits(dir.path(), &["1a2b3c4", "not a hash; rm -rf /"]);
        assert!(got.as_ref().is_none_or(|m| m.is_empty()), "{got:?}");
    }
}
