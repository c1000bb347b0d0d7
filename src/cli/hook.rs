//! `taskhook hook`: one payload on stdin, the decision on stdout.

use std::io::Read;

use crate::context::Ctx;
use crate::engine;
use crate::error::{Error, Result};
use crate::hook::input::MAX_PAYLOAD_BYTES;

use super::Io;

/// Reads stdin (bounded), handles the payload, prints the reply; returns the exit code.
pub fn run(cx: &Ctx, io: &mut Io<'_>) -> Result<u8> {
    let mut buf = Vec::new();
    io.stdin
        .take(MAX_PAYLOAD_BYTES as u64 + 1)
        .read_to_end(&mut buf)
        .map_err(|e| Error::io("read", "stdin", e))?;
    let (_, result) = engine::run(cx, &buf);
    let outcome = result?;
    if let Some(out) = &outcome.output {
        super::out_json(io, &out.to_json())?;
    }
    if let Some(reason) = &outcome.refusal {
        let _ = writeln!(io.stderr, "{}", crate::error::one_line(reason));
    }
    Ok(outcome.exit_code())
}
