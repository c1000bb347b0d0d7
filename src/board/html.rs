//! The board as one self-contained HTML page (`taskhook board --html FILE`): inline CSS and
//! JS, an inline SVG dependency graph laid out here, nothing fetched from anywhere (a Content
//! Security Policy in the page forbids it), so a browser opens it from disk.
//!
//! The page holds the header (every store with its counts per column, the stores that cannot
//! be read, when it was written), filters (by store, by column, by text), the five columns of
//! cards, and the graph. Every text from a store is made printable ([`crate::display::text`]),
//! cut, then HTML-escaped. With `--watch` the page checks every 2 s whether it changed and
//! reloads itself: served over HTTP it fetches itself and reloads only when its stamp differs;
//! opened from disk (where a page may not read files) it reloads every 2 s. The filters and the
//! scroll position survive a reload (`sessionStorage`).
//!
//! The graph: each store a band; units placed in columns by their longest chain of
//! dependencies (an execute store: by layer, each layer framed), wrapped every
//! [`RANKS_PER_ROW`] columns; edges as curves. Past [`GRAPH_CAP`] units the graph is not drawn
//! and the page says how to draw it (`taskhook graph --format dot | dot -Tsvg`).

use std::collections::hash_map::DefaultHasher;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::hash::{Hash, Hasher};

use super::graph::{class, colours};
use super::model::{column, cut, one_line, Board, Card, EdgeKind, Graph};
use super::text::counts;
use crate::display;
use crate::layouts::Phase;

/// Most units the page draws in its graph.
pub const GRAPH_CAP: usize = 1500;
/// Rank columns per row of a store's band before it wraps.
pub const RANKS_PER_ROW: usize = 8;
/// Longest title shown on a card, in characters.
const TITLE: usize = 200;
/// Longest reference shown, in characters.
const REF: usize = 120;
/// Longest detail line on a card, in characters.
const DETAIL: usize = 300;

const NODE_W: i64 = 180;
const NODE_H: i64 = 46;
const GAP_X: i64 = 56;
const GAP_Y: i64 = 14;
const BAND_TITLE: i64 = 30;
/// Characters of a node's line that fit its box.
const NODE_CHARS: usize = 27;

/// Text for HTML (element content or a quoted attribute).
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Text from a store: printable, one line, cut to `max`, HTML-escaped.
fn safe(s: &str, max: usize) -> String {
    escape(&display::text(&cut(&one_line(s), max)))
}

const CSS: &str = r#"
:root{--ready:#2563eb;--in_progress:#d97706;--person:#a21caf;--blocked:#dc2626;--done:#16a34a;--missing:#6b7280}
*{box-sizing:border-box}
body{margin:0;font:14px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#111827;background:#f3f4f6}
header{padding:12px 18px;background:#111827;color:#f9fafb}
header h1{font-size:18px;margin:0 0 4px}
header .meta{margin:0;color:#d1d5db;font-size:12px;overflow-wrap:anywhere}
.stores{margin:8px 0 0;padding:0;list-style:none;font-size:13px}
.stores li{margin:2px 0;overflow-wrap:anywhere}
.stores .problem{color:#fca5a5}
nav{display:flex;flex-wrap:wrap;gap:12px;align-items:center;padding:10px 18px;background:#e5e7eb;position:sticky;top:0;z-index:2}
nav label{font-size:13px}
nav input[type=search]{padding:3px 6px;min-width:14em}
main{display:grid;grid-template-columns:repeat(5,minmax(180px,1fr));gap:10px;padding:12px 18px}
.col{background:#fff;border-radius:8px;border-top:4px solid var(--c);min-width:0}
.col h2{font-size:14px;margin:0;padding:8px 10px;border-bottom:1px solid #e5e7eb}
.col h2 .n{float:right;color:#6b7280;font-weight:normal}
.col ol{list-style:none;margin:0;padding:6px;max-height:75vh;overflow:auto}
.col li{border:1px solid #e5e7eb;border-left:3px solid var(--c);border-radius:6px;padding:5px 7px;margin:0 0 6px;overflow-wrap:anywhere;background:#fff}
.col li b{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:12px}
.col li i{display:block;font-style:normal;color:#4b5563;font-size:12px}
.col li.broken{background:#fef2f2}
.col li[hidden],.col[hidden]{display:none}
.ready{--c:var(--ready)}.in_progress{--c:var(--in_progress)}.person{--c:var(--person)}.blocked{--c:var(--blocked)}.done{--c:var(--done)}
#graph{padding:0 18px 18px}
#graph h2{font-size:16px}
#graph .frame{background:#fff;border-radius:8px;overflow:auto;max-height:80vh}
svg text{font:11px system-ui,sans-serif;fill:#111827}
svg .band{font-weight:bold;font-size:13px}
svg .layer{fill:none;stroke:#9ca3af;stroke-dasharray:4 3}
svg .e{fill:none;stroke:#6b7280;stroke-width:1.2}
svg .e.part_of{stroke-dasharray:5 4}
svg .dim{opacity:.15}
footer{padding:8px 18px 18px;color:#6b7280;font-size:12px}
code{font-family:ui-monospace,Menlo,Consolas,monospace}
"#;

const JS: &str = r#"
(function(){
var key='taskhook-board:'+location.pathname;
var sel=document.getElementById('f-store'),txt=document.getElementById('f-text');
var boxes=Array.prototype.slice.call(document.querySelectorAll('input[data-phase]'));
function apply(){
  var s=sel.value,t=txt.value.toLowerCase(),on={};
  boxes.forEach(function(b){on[b.getAttribute('data-phase')]=b.checked;});
  Array.prototype.forEach.call(document.querySelectorAll('main .col'),function(col){
    var ph=col.getAttribute('data-phase'),n=0;col.hidden=!on[ph];
    Array.prototype.forEach.call(col.querySelectorAll('li'),function(li){
      var ok=(!s||li.getAttribute('data-s')===s)&&(!t||li.textContent.toLowerCase().indexOf(t)>=0);
      li.hidden=!ok;if(ok)n++;});
    col.querySelector('.n').textContent=n;});
  Array.prototype.forEach.call(document.querySelectorAll('svg g[data-s]'),function(g){
    var ok=(!s||g.getAttribute('data-s')===s)&&on[g.getAttribute('data-phase')]!==false&&(!t||g.textContent.toLowerCase().indexOf(t)>=0);
    g.setAttribute('class',(g.getAttribute('class')||'').replace(/ ?dim/g,'')+(ok?'':' dim'));});
  save();
}
function save(){try{sessionStorage.setItem(key,JSON.stringify({s:sel.value,t:txt.value,on:boxes.map(function(b){return b.checked;}),y:window.scrollY}));}catch(e){}}
try{var st=JSON.parse(sessionStorage.getItem(key)||'null');
  if(st){sel.value=st.s||'';txt.value=st.t||'';(st.on||[]).forEach(function(v,i){if(boxes[i])boxes[i].checked=v;});
    if(st.y)window.scrollTo(0,st.y);}}catch(e){}
sel.addEventListener('change',apply);txt.addEventListener('input',apply);
boxes.forEach(function(b){b.addEventListener('change',apply);});
window.addEventListener('scroll',function(){save();},{passive:true});
apply();
if(document.body.hasAttribute('data-watch')){
  var stamp=document.body.getAttribute('data-stamp');
  setInterval(function(){
    save();
    if(location.protocol==='file:'){location.reload();return;}
    fetch(location.href,{cache:'no-store'}).then(function(r){return r.text();}).then(function(t){
      if(t.indexOf('data-stamp="'+stamp+'"')<0)location.reload();}).catch(function(){location.reload();});
  },2000);
}
})();
"#;

/// The whole page. `watch`: the page reloads itself when it changes.
pub fn render(b: &Board, watch: bool) -> String {
    let body = body(b);
    let mut h = DefaultHasher::new();
    body.hash(&mut h);
    let stamp = format!("{:016x}", h.finish());
    let title = format!(
        "taskhook board · {}",
        safe(&b.project.display().to_string(), REF)
    );
    let mut o = String::with_capacity(body.len() + CSS.len() + JS.len() + 1024);
    o.push_str("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n");
    o.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    o.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; \
         style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'\">\n",
    );
    let _ = writeln!(o, "<title>{title}</title>");
    let _ = writeln!(o, "<style>{CSS}</style>\n</head>");
    let _ = writeln!(
        o,
        "<body data-stamp=\"{stamp}\"{}>",
        if watch { " data-watch" } else { "" }
    );
    o.push_str(&body);
    let _ = writeln!(o, "<script>{JS}</script>\n</body>\n</html>");
    o
}

fn body(b: &Board) -> String {
    let mut o = String::new();
    o.push_str("<header>\n<h1>taskhook board</h1>\n");
    let _ = writeln!(
        o,
        "<p class=\"meta\">{} · written <time datetime=\"{w}\">{w}</time></p>",
        safe(&b.project.display().to_string(), 400),
        w = escape(&b.written)
    );
    o.push_str("<ul class=\"stores\">\n");
    if b.stores.is_empty() && b.problems.is_empty() {
        o.push_str("<li>No taskhook stores found in this project.</li>\n");
    }
    for s in &b.stores {
        let _ = writeln!(
            o,
            "<li><b>{} · {}</b>: {}</li>",
            escape(&s.layout),
            safe(&s.name, REF),
            escape(&counts(&s.counts))
        );
    }
    for p in &b.problems {
        let _ = writeln!(
            o,
            "<li class=\"problem\"><b>{} · {}</b>: {}: {}</li>",
            escape(&p.layout),
            safe(&p.store, REF),
            p.kind(),
            safe(&p.problem, DETAIL)
        );
    }
    o.push_str("</ul>\n</header>\n");
    filters(&mut o, b);
    let cols = b.columns(None, "");
    o.push_str("<main>\n");
    for phase in Phase::ALL {
        let cards = &cols[column(phase)];
        let cls = class(Some(phase));
        let _ = writeln!(
            o,
            "<section class=\"col {cls}\" data-phase=\"{cls}\"><h2>{} <span class=\"n\">{}</span></h2><ol>",
            phase.label(),
            cards.len()
        );
        for &i in cards {
            card(&mut o, &b.cards[i]);
        }
        o.push_str("</ol></section>\n");
    }
    o.push_str("</main>\n");
    graph_section(&mut o, b, &b.graph());
    let _ = writeln!(
        o,
        "<footer>Written by <code>taskhook board --html</code> at {}. \
         <code>taskhook board --html FILE --watch</code> rewrites it when the state changes, and \
         a page written so reloads itself. <code>taskhook graph --format dot|mermaid|json</code> \
         gives the graph alone.</footer>",
        escape(&b.written)
    );
    o
}

fn filters(o: &mut String, b: &Board) {
    o.push_str("<nav>\n<label>Store <select id=\"f-store\"><option value=\"\">all stores</option>");
    for (i, s) in b.stores.iter().enumerate() {
        let _ = write!(
            o,
            "<option value=\"s{i}\">{} · {}</option>",
            escape(&s.layout),
            safe(&s.name, REF)
        );
    }
    o.push_str("</select></label>\n<span>State:");
    for phase in Phase::ALL {
        let cls = class(Some(phase));
        let _ = write!(
            o,
            " <label><input type=\"checkbox\" data-phase=\"{cls}\" checked> {}</label>",
            phase.label()
        );
    }
    o.push_str(
        "</span>\n<label>Filter <input id=\"f-text\" type=\"search\" placeholder=\"id, title, owner…\"></label>\n</nav>\n",
    );
}

fn card(o: &mut String, c: &Card) {
    let s = c.store.map(|s| format!("s{s}")).unwrap_or_default();
    let broken = if c.problem.is_some() {
        " class=\"broken\""
    } else {
        ""
    };
    let _ = write!(
        o,
        "<li data-s=\"{s}\"{broken}><b>{}</b>",
        safe(&c.reference, REF)
    );
    if let Some(t) = &c.title {
        let _ = write!(o, " {}", safe(t, TITLE));
    }
    let _ = writeln!(o, "<i>{}</i></li>", safe(&c.detail(), DETAIL));
}

/// Where each node of the graph sits (its box's top-left corner), the bands' titles and
/// heights, and the layer frames.
struct Laid {
    at: Vec<(i64, i64)>,
    bands: Vec<(String, i64)>,
    frames: Vec<(String, i64, i64, i64, i64)>,
    width: i64,
    height: i64,
}

fn layout(b: &Board, g: &Graph) -> Laid {
    let ranks = g.ranks();
    // Per store: its columns (rank, or layer for a store with layers), each a list of nodes.
    let mut per_store: BTreeMap<usize, BTreeMap<usize, Vec<usize>>> = BTreeMap::new();
    let mut layer_names: BTreeMap<usize, Vec<String>> = BTreeMap::new();
    for (i, n) in g.nodes.iter().enumerate() {
        let names = layer_names.entry(n.store_index).or_default();
        let col = match &n.group {
            Some(grp) => match names.iter().position(|x| x == grp) {
                Some(p) => p,
                None => {
                    names.push(grp.clone());
                    names.len() - 1
                }
            },
            None => ranks[i],
        };
        per_store
            .entry(n.store_index)
            .or_default()
            .entry(col)
            .or_default()
            .push(i);
    }
    let mut at = vec![(0, 0); g.nodes.len()];
    let mut bands = Vec::new();
    let mut frames = Vec::new();
    let mut y = 10;
    let mut width = 400;
    for (s, cols) in per_store {
        let title = b
            .stores
            .get(s)
            .map(|v| format!("{} · {}", v.layout, v.name))
            .unwrap_or_default();
        let top = y;
        y += BAND_TITLE;
        let names = layer_names.get(&s).cloned().unwrap_or_default();
        // Columns in order, renumbered densely, wrapped into rows.
        let cols: Vec<(usize, Vec<usize>)> = cols.into_iter().collect();
        for row in cols.chunks(RANKS_PER_ROW) {
            let tallest = row.iter().map(|(_, v)| v.len()).max().unwrap_or(0) as i64;
            for (k, (col, nodes)) in row.iter().enumerate() {
                let x = 10 + (k as i64) * (NODE_W + GAP_X);
                for (r, &i) in nodes.iter().enumerate() {
                    at[i] = (x, y + 16 + (r as i64) * (NODE_H + GAP_Y));
                }
                let h = 16 + (nodes.len() as i64) * (NODE_H + GAP_Y);
                if let Some(name) = names
                    .get(*col)
                    .filter(|_| g.nodes[nodes[0]].group.is_some())
                {
                    frames.push((name.clone(), x - 6, y, NODE_W + 12, h));
                }
                width = width.max(x + NODE_W + 20);
            }
            y += 16 + tallest * (NODE_H + GAP_Y) + 10;
        }
        bands.push((title, top));
        y += 10;
    }
    Laid {
        at,
        bands,
        frames,
        width,
        height: y + 10,
    }
}

fn graph_section(o: &mut String, b: &Board, g: &Graph) {
    o.push_str("<section id=\"graph\">\n<h2>Dependency graph</h2>\n");
    if g.nodes.is_empty() {
        o.push_str("<p>No units.</p>\n</section>\n");
        return;
    }
    if g.nodes.len() > GRAPH_CAP {
        let _ = writeln!(
            o,
            "<p>{} units: too many to draw here (at most {GRAPH_CAP}). Draw them with \
             <code>taskhook graph --format dot | dot -Tsvg &gt; graph.svg</code>, or one store \
             with <code>taskhook graph --store STORE</code>.</p>\n</section>",
            g.nodes.len()
        );
        return;
    }
    let l = layout(b, g);
    let _ = writeln!(
        o,
        "<div class=\"frame\"><svg role=\"img\" aria-label=\"dependency graph\" width=\"{w}\" height=\"{h}\" viewBox=\"0 0 {w} {h}\">",
        w = l.width,
        h = l.height
    );
    o.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"7\" \
         markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#6b7280\"/></marker></defs>\n",
    );
    for (title, y) in &l.bands {
        let _ = writeln!(
            o,
            "<text class=\"band\" x=\"10\" y=\"{}\">{}</text>",
            y + 18,
            safe(title, REF)
        );
    }
    for (name, x, y, w, h) in &l.frames {
        let _ = writeln!(
            o,
            "<rect class=\"layer\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" rx=\"6\"/><text x=\"{}\" y=\"{}\">layer {}</text>",
            x + 4,
            y + 12,
            safe(name, NODE_CHARS)
        );
    }
    for e in &g.edges {
        let (fx, fy) = l.at[e.from];
        let (tx, ty) = l.at[e.to];
        let (x1, y1) = (fx + NODE_W, fy + NODE_H / 2);
        let (x2, y2) = (tx, ty + NODE_H / 2);
        let bend = ((x2 - x1).abs() / 2).max(30);
        let kind = match e.kind {
            EdgeKind::Before => "before",
            EdgeKind::PartOf => "part_of",
        };
        // An edge that skips a column, or goes back, arcs below the boxes in its way.
        let below = if x2 - x1 > GAP_X + 1 || x2 < x1 {
            NODE_H
        } else {
            0
        };
        let _ = writeln!(
            o,
            "<path class=\"e {kind}\" d=\"M{x1},{y1} C{},{} {},{} {x2},{y2}\" marker-end=\"url(#arrow)\"/>",
            x1 + bend,
            y1 + below,
            x2 - bend,
            y2 + below
        );
    }
    for (i, n) in g.nodes.iter().enumerate() {
        let (x, y) = l.at[i];
        let (fill, stroke) = colours(n.phase);
        let cls = class(n.phase);
        let dash = if n.phase.is_none() {
            " stroke-dasharray=\"4 3\""
        } else {
            ""
        };
        // Reference, title, status; without a title the status moves up.
        let (second, third) = match n.title.as_deref() {
            Some(t) => (safe(t, NODE_CHARS), safe(&n.status, NODE_CHARS)),
            None => (safe(&n.status, NODE_CHARS), String::new()),
        };
        let _ = writeln!(
            o,
            "<g class=\"n {cls}\" data-s=\"s{}\" data-phase=\"{cls}\"><title>{} — {}</title>\
             <rect x=\"{x}\" y=\"{y}\" width=\"{NODE_W}\" height=\"{NODE_H}\" rx=\"6\" fill=\"{fill}\" stroke=\"{stroke}\"{dash}/>\
             <text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\">{}</text><text x=\"{}\" y=\"{}\" fill=\"#4b5563\">{}</text></g>",
            n.store_index,
            safe(&n.id, REF),
            safe(&n.status, TITLE),
            x + 6,
            y + 14,
            safe(&n.id, NODE_CHARS),
            x + 6,
            y + 28,
            second,
            x + 6,
            y + 41,
            third
        );
    }
    o.push_str("</svg></div>\n</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::board::model::fixture::{board, unit};

    #[test]
    fn escapes_markup_and_keeps_nothing_external() {
        let u = unit(
            "T1\"><script>alert(1)</script>",
            "<img src=x onerror=alert(1)> & \x1b]8;;http://evil\x07",
            Phase::Ready,
            &["T0"],
        );
        let b = board(vec![("projects", "web", vec![u])], vec![]);
        let page = render(&b, false);
        assert!(!page.contains("<script>alert"));
        assert!(!page.contains("<img"));
        assert!(page.contains("&lt;script&gt;alert(1)&lt;/script&gt;"));
        assert!(!page.contains('\x1b'));
        assert_eq!(
            page.matches("<script>").count(),
            1,
            "only the page's own script"
        );
        assert!(!page.contains(" src=\""), "no source attribute");
        assert!(page.contains("<svg"));
    }
}
