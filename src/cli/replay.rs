//! `taskhook replay FILE... [--dry-run]`: captured payloads through the same code as `hook`.

use std::path::PathBuf;

use serde_json::{json, Value};

use crate::context::Ctx;
use crate::engine;
use crate::error::{Error, Result};
use crate::hook::input::{parse_json, Payload};
use crate::hook::EXIT_ERROR;
use crate::store::fs;
use crate::store::limits::MAX_CAPTURE_BYTES;

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Files holding a JSON object, a JSON array of them, or JSON Lines; `-` reads stdin.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
    /// Write nothing; report what would change.
    #[arg(long)]
    pub dry_run: bool,
}

/// Replays every payload in order; exit 1 when any payload failed.
pub fn run(cx: &Ctx, args: Args, io: &mut Io<'_>) -> Result<u8> {
    let mut worst = 0;
    for file in &args.files {
        let bytes = if file.as_os_str() == "-" {
            let mut buf = Vec::new();
            std::io::Read::read_to_end(
                &mut std::io::Read::take(&mut *io.stdin, MAX_CAPTURE_BYTES + 1),
                &mut buf,
            )
            .map_err(|e| Error::io("read", "stdin", e))?;
            if buf.len() as u64 > MAX_CAPTURE_BYTES {
                return Err(Error::BadInput(format!(
                    "stdin holds more than {}",
                    fs::human(MAX_CAPTURE_BYTES)
                )));
            }
            buf
        } else {
            let path = cx.absolute(file);
            fs::read_named(&path, MAX_CAPTURE_BYTES)?
                .ok_or_else(|| Error::NotFound(format!("no file `{}`", path.display())))?
        };
        for item in split(&bytes) {
            let (event, result) = match item {
                Ok(value) => match Payload::from_value(value) {
                    Ok(p) => engine::run_payload(cx, p),
                    Err(e) => (None, Err(e)),
                },
                Err(e) => (None, Err(e)),
            };
            let line = match result {
                Ok(o) => {
                    let mut line = json!({
                        "event": event,
                        "exit": o.exit_code(),
                        "stdout": o.output.as_ref().map(|h| h.to_json()),
                        "changed": o.changed,
                    });
                    if let (Some(r), Some(m)) = (&o.refusal, line.as_object_mut()) {
                        m.insert("stderr".into(), json!(r));
                    }
                    line
                }
                Err(e) => {
                    worst = EXIT_ERROR;
                    json!({
                        "event": event,
                        "exit": EXIT_ERROR,
                        "stdout": null,
                        "changed": [],
                        "stderr": format!("taskhook: {}", e.one_line()),
                    })
                }
            };
            super::out_json(io, &line)?;
        }
    }
    Ok(worst)
}

/// Splits a capture into payloads: one object, an array of objects, or JSON Lines.
fn split(bytes: &[u8]) -> Vec<Result<Value>> {
    if let Ok(v) = parse_json(bytes) {
        return match v {
            Value::Array(items) => items.into_iter().map(Ok).collect(),
            other => vec![Ok(other)],
        };
    }
    String::from_utf8_lossy(bytes)
        .lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty())
        .map(|(i, l)| {
            parse_json(l.as_bytes()).map_err(|e| {
                Error::BadInput(format!("line {}: payload is not valid JSON: {e}", i + 1))
            })
        })
        .collect()
}
