//! The report of `cargo bench --bench scale`: one table per layout, then issue 23's targets,
//! each with its verdict.

use std::collections::BTreeMap;

/// One case's result at one size.
#[derive(Clone)]
pub enum Cell {
    /// CPU seconds (median) and peak memory in bytes (max).
    Ok { cpu: f64, rss: u64 },
    /// Never finished: over the timeout, or failed.
    Broken(String),
}

impl Cell {
    fn cpu(&self) -> Option<f64> {
        match self {
            Cell::Ok { cpu, .. } => Some(*cpu),
            Cell::Broken(_) => None,
        }
    }
    fn rss(&self) -> Option<u64> {
        match self {
            Cell::Ok { rss, .. } => Some(*rss),
            Cell::Broken(_) => None,
        }
    }
    fn show(&self) -> String {
        match self {
            Cell::Ok { cpu, .. } => ms(*cpu),
            Cell::Broken(why) => why.clone(),
        }
    }
}

/// One layout at one size.
pub struct Row {
    pub start: Cell,
    pub done: Cell,
    pub noop: Cell,
    pub peer: Cell,
    /// The store's size: the files an event reads.
    pub bytes: u64,
    /// Whether every DONE moved its task on and SessionStart read the store.
    pub verified: bool,
}

/// Rows by layout, then by size.
pub type Table = BTreeMap<&'static str, BTreeMap<usize, Row>>;

fn ms(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else if s >= 0.01 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

fn size(n: usize) -> String {
    if n >= 1000 {
        format!("{}k", n / 1000)
    } else {
        n.to_string()
    }
}

/// Growth of `cell` from the previous size when that was 10× smaller.
fn growth(rows: &BTreeMap<usize, Row>, n: usize, f: fn(&Row) -> &Cell) -> Option<f64> {
    let prev = rows.get(&(n / 10)).filter(|_| n % 10 == 0)?;
    Some(f(&rows[&n]).cpu()? / f(prev).cpu()?)
}

fn x(v: Option<f64>) -> String {
    v.map_or("–".into(), |v| format!("{v:.2}×"))
}

/// Prints the tables and the verdicts; returns whether every target measured was met.
pub fn report(layouts: &[&'static str], table: &Table) -> bool {
    println!("\nCPU time (user + system, median) of whole processes; the peer is benches/scale_peer.py\nmarking the same task done. Peak memory: max RSS over the runs.\n");
    for layout in layouts {
        let Some(rows) = table.get(layout) else {
            continue;
        };
        println!("{layout}\n");
        println!("| tasks (store) | SessionStart | ×10 | / peer | DONE | ×10 | / peer | peer DONE | no-op | peak memory SessionStart / DONE |");
        println!("|---|---|---|---|---|---|---|---|---|---|");
        for (&n, r) in rows {
            let ratio = |c: &Cell| Some(c.cpu()? / r.peer.cpu()?);
            let mem = |c: &Cell| {
                c.rss().map_or("–".into(), |m| {
                    format!("{} ({:.1}×)", mib(m), m as f64 / r.bytes as f64)
                })
            };
            println!(
                "| {} ({}) | {} | {} | {} | {} | {} | {} | {} | {} | {} / {} |",
                size(n),
                mib(r.bytes),
                r.start.show(),
                x(growth(rows, n, |r| &r.start)),
                x(ratio(&r.start)),
                r.done.show(),
                x(growth(rows, n, |r| &r.done)),
                x(ratio(&r.done)),
                r.peer.show(),
                r.noop.show(),
                mem(&r.start),
                mem(&r.done),
            );
        }
        println!();
    }
    let mut all_ok = true;
    let mut check = |what: String, ok: bool| {
        all_ok &= ok;
        println!("- {what}: {}", if ok { "ok" } else { "MISSED" });
    };
    println!("Targets (issue 23):\n");
    for layout in layouts {
        let Some(rows) = table.get(layout) else {
            continue;
        };
        for (&n, r) in rows {
            let events: [(&str, &Cell); 2] = [("SessionStart", &r.start), ("DONE", &r.done)];
            if !r.verified {
                check(
                    format!("{layout} {}: every DONE moved its task on", size(n)),
                    false,
                );
            }
            for (event, c) in events {
                if let Cell::Broken(why) = c {
                    check(
                        format!("{layout} {} {event}: finished ({why})", size(n)),
                        false,
                    );
                }
            }
            for (event, f) in [
                ("SessionStart", (|r: &Row| &r.start) as fn(&Row) -> &Cell),
                ("DONE", |r: &Row| &r.done),
            ] {
                if let Some(g) = growth(rows, n, f) {
                    check(
                        format!(
                            "{layout} {event} {} → {}: growth {g:.2}× (≤ 12×)",
                            size(n / 10),
                            size(n)
                        ),
                        g <= 12.0,
                    );
                }
            }
            if n == 10_000 {
                for (event, c) in events {
                    if let (Some(a), Some(b)) = (c.cpu(), r.peer.cpu()) {
                        check(
                            format!("{layout} {event} at 10k: {:.2}× the peer (≤ 0.5×)", a / b),
                            a / b <= 0.5,
                        );
                    }
                }
            }
            // The process's own fixed size (what the no-op peaks at) is left out: at 10k it
            // is still as large as some stores.
            if let (true, Some(base)) = (n >= 10_000, r.noop.rss()) {
                for (event, c) in events {
                    if let Some(m) = c.rss() {
                        let ratio = m.saturating_sub(base) as f64 / r.bytes as f64;
                        check(
                            format!(
                                "{layout} {event} at {}: peak memory {} ({} above the no-op's) = {ratio:.2}× the store's {} (≤ 3×)",
                                size(n),
                                mib(m),
                                mib(m.saturating_sub(base)),
                                mib(r.bytes)
                            ),
                            ratio <= 3.0,
                        );
                    }
                }
            }
            if n == 100_000 {
                for (event, c) in events {
                    if let Some(a) = c.cpu() {
                        check(
                            format!(
                                "{layout} {event} at 100k: {} of CPU (≤ 10 s, a third of the 30 s hook timeout)",
                                ms(a)
                            ),
                            a <= 10.0,
                        );
                    }
                }
            }
        }
        let noops: Vec<f64> = rows.values().filter_map(|r| r.noop.cpu()).collect();
        if noops.len() > 1 {
            let lo = noops.iter().copied().fold(f64::INFINITY, f64::min);
            let hi = noops.iter().copied().fold(0.0, f64::max);
            check(
                format!(
                    "{layout} no-op flat: {}–{} across sizes ({:.2}×, ≤ 1.5×)",
                    ms(lo),
                    ms(hi),
                    hi / lo
                ),
                hi / lo <= 1.5,
            );
        }
    }
    all_ok
}
