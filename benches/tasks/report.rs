//! The benchmark's report: the table, and each of issue 13's targets with its verdict.

use std::collections::BTreeMap;

pub struct Row {
    pub cpu: f64,
    pub rss: u64,
}

fn ms(s: f64) -> String {
    if s >= 1.0 {
        format!("{s:.2} s")
    } else {
        format!("{:.1} ms", s * 1e3)
    }
}

pub fn mib(b: u64) -> String {
    format!("{:.1} MiB", b as f64 / (1024.0 * 1024.0))
}

fn verdict(ok: bool) -> &'static str {
    if ok {
        "ok"
    } else {
        "MISSED"
    }
}

pub fn report(
    table: &BTreeMap<usize, BTreeMap<&'static str, Row>>,
    size: &BTreeMap<usize, u64>,
    loops: &[(&'static str, f64)],
) {
    println!("\nclaude-tasks vs a Python peer hook (CPU time, medians; peak memory = max RSS)\n");
    println!(
        "| case | {} |",
        table
            .keys()
            .map(|n| format!("{}k tasks ({})", n / 1000, mib(size[n])))
            .collect::<Vec<_>>()
            .join(" | ")
    );
    println!("|---|{}", "---|".repeat(table.len()));
    let names = [
        "change",
        "peer change",
        "no-op change",
        "one read + parse (tasks read)",
        "SessionStart",
        "status",
        "validate",
        "python json.load",
    ];
    for name in names {
        let cells: Vec<String> = table
            .values()
            .map(|rows| {
                let r = &rows[name];
                format!("{} ({})", ms(r.cpu), mib(r.rss))
            })
            .collect();
        println!("| {name} | {} |", cells.join(" | "));
    }
    println!();
    let mut all_ok = true;
    let mut check = |what: String, ok: bool| {
        all_ok &= ok;
        println!("- {what}: {}", verdict(ok));
    };
    for (&n, rows) in table {
        let ratio = rows["change"].cpu / rows["peer change"].cpu;
        let target = if n <= 1_000 { 0.15 } else { 0.3 };
        check(
            format!(
                "{}k: state change / peer = {ratio:.3} (target <= {target})",
                n / 1000
            ),
            ratio <= target,
        );
        let noop = rows["no-op change"].cpu / rows["one read + parse (tasks read)"].cpu;
        check(
            format!(
                "{}k: no-op / one read + parse = {noop:.2} (target <= ~1, no lock, no write)",
                n / 1000
            ),
            noop <= 1.15,
        );
        if n >= 10_000 {
            let mem = rows["change"].rss as f64 / size[&n] as f64;
            check(
                format!("{}k: peak memory / file = {mem:.2} (target <= 3)", n / 1000),
                mem <= 3.0,
            );
        }
    }
    if let (Some(a), Some(b)) = (table.get(&10_000), table.get(&100_000)) {
        let g = b["change"].cpu / a["change"].cpu;
        check(
            format!("growth 10k -> 100k = {g:.1}x (target <= 12x)"),
            g <= 12.0,
        );
        for name in ["SessionStart", "status", "validate"] {
            let r = b[name].cpu / b["python json.load"].cpu;
            check(
                format!("100k: {name} / Python json.load = {r:.2} (target <= 1, aim 0.33)"),
                r <= 1.0,
            );
        }
    }
    println!();
    for (name, cpu) in loops {
        check(
            format!("{name}: {} (well inside the 15 s timeout)", ms(*cpu)),
            *cpu < 1.5,
        );
    }
    let cpu_of = |name: &str| loops.iter().find(|(n, _)| *n == name).map(|(_, c)| *c);
    if let (Some(a), Some(b)) = (
        cpu_of("TaskUpdate addBlockedBy with 1,000 ids"),
        cpu_of("TaskUpdate addBlockedBy with 10,000 ids"),
    ) {
        let g = b / a;
        check(
            format!("addBlockedBy growth 1k -> 10k ids = {g:.1}x (linear: target <= 15x)"),
            g <= 15.0,
        );
    }
    println!(
        "\n{}",
        if all_ok {
            "All targets met."
        } else {
            "Some targets MISSED (see above)."
        }
    );
}
