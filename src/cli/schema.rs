//! `taskhook schema [NAME]`: the embedded JSON Schemas.

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::store::schema::{find, SCHEMAS};

use super::Io;

#[derive(Debug, clap::Args)]
pub struct Args {
    /// Schema name (e.g. claude-tasks); without it, all of them as one JSON object by name.
    pub name: Option<String>,
    /// Accepted for uniformity: the output is always JSON.
    #[arg(long)]
    pub json: bool,
}

pub fn run(args: Args, io: &mut Io<'_>) -> Result<u8> {
    match args.name {
        Some(name) => {
            let def = find(&name).ok_or_else(|| {
                let names: Vec<&str> = SCHEMAS.iter().map(|s| s.name).collect();
                Error::NotFound(format!(
                    "no schema named {name:?}; known: {}",
                    names.join(", ")
                ))
            })?;
            super::out(io, def.source.trim_end())?;
        }
        None => {
            let mut all = Map::new();
            for s in SCHEMAS {
                let v: Value = serde_json::from_str(s.source).unwrap_or(Value::Null);
                all.insert(s.name.to_string(), v);
            }
            let text = serde_json::to_string_pretty(&Value::Object(all)).unwrap_or_default();
            super::out(io, &text)?;
        }
    }
    Ok(0)
}
