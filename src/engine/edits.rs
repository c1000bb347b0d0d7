//! CONTRACT §5: a Write/Edit of a state file taskhook owns is checked against its schema; when
//! the file is now invalid, the reply is `decision: block` with the schema errors and how to fix
//! them, and the problem goes to the store's log where its layout keeps one. One rule for every
//! layout: each says which files it owns (`Layout::state_files`), nothing more.

use std::path::Path;

use crate::context::Ctx;
use crate::engine::facts::Fact;
use crate::engine::Work;
use crate::layouts::registry;
use crate::project::Project;
use crate::store::{check, schema};

/// Checks the file an edit touched, if a store owns it.
pub(crate) fn check(cx: &Ctx, project: &Project, path: &str, work: &mut Work) {
    let fact = Fact::Edit(path);
    let path = Path::new(path);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        project.root.join(path)
    };
    for &layout in registry().iter().filter(|l| l.wants(&fact)) {
        let Ok(stores) = layout.discover(cx, project) else {
            continue;
        };
        for store in stores {
            let Ok(files) = layout.state_files(cx, &store) else {
                continue;
            };
            let Some(file) = files.into_iter().find(|f| f.path == path) else {
                continue;
            };
            let issues = if file.json_lines {
                check::json_lines(&cx.store, &file.path, file.schema)
            } else {
                check::document(&cx.store, &file.path, file.schema)
            };
            let issues = match issues {
                Ok(i) => i,
                Err(e) => {
                    work.fail(&format!("{} {}", store.layout, store.id), e);
                    continue;
                }
            };
            if issues.is_empty() {
                continue;
            }
            let details = schema::summarize(&issues);
            let name = file
                .path
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if let Err(e) = layout.log_error(
                cx,
                &store,
                &format!("an edit left {name} invalid: {details}"),
            ) {
                work.fail(&format!("{} {}", store.layout, store.id), e);
            }
            work.reply.block.push(format!(
                "{} no longer matches its schema ({}): {details}. Restore the fields named (run `taskhook schema {}` for the format), or run `taskhook recover {}` to restore it. taskhook updates this file itself; prefer signals (<signal>ID_DONE</signal>) and taskhook's commands over editing it.",
                file.path.display(),
                file.schema,
                file.schema,
                store.root.display()
            ));
        }
    }
}
