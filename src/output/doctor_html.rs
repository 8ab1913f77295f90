//! `doctor -o html`: one self-contained page to attach to a support ticket. No script, no
//! external asset (styles inline, pictures inline SVG), so it opens offline and anywhere;
//! every ServiceSet's chain drawn as a picture, each link's state in words beside its
//! colour; the findings with their hints; when the objects were captured and by which
//! version of the tool. Everything read from the cluster is escaped; the report holds no
//! Secret data (doctor removes it before diagnosing).

use std::fmt::Write as _;
use std::io::{self, Write};

use chrono::{DateTime, Utc};

use super::doctor::{all_findings, set_status, state_words, status_word, summary_line, worst};
use crate::core::doctor::{Report, ServiceSetView, ServiceView, Severity};

/// What the page says about where the report comes from.
pub struct Page<'a> {
    /// When the objects were read: now for a live cluster, the bundle's capture time for a
    /// dump saved with `--save` (None for other saved files).
    pub captured: Option<DateTime<Utc>>,
    /// The time ages were judged against.
    pub judged_at: DateTime<Utc>,
    /// The cluster's server, or the saved files.
    pub source: &'a str,
}

/// Text for HTML content and attribute values.
fn esc(s: &str) -> String {
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

fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// The CSS class and word of a severity (None: nothing wrong).
fn class(sev: Option<Severity>) -> (&'static str, &'static str) {
    match sev {
        Some(Severity::Error) => ("error", "error"),
        Some(Severity::Warning) => ("warning", "warning"),
        Some(Severity::Info) => ("info", "note"),
        None => ("ok", "ok"),
    }
}

const STYLE: &str = "\
:root{--ok:#1a7f37;--ok-bg:#dafbe1;--error:#cf222e;--error-bg:#ffebe9;--warning:#9a6700;\
--warning-bg:#fff8c5;--info:#0969da;--info-bg:#ddf4ff;--line:#8c959f;--text:#1f2328;--dim:#59636e}
body{font-family:system-ui,-apple-system,\"Segoe UI\",\"DejaVu Sans\",sans-serif;color:var(--text);\
margin:2rem;line-height:1.45;max-width:80rem}
h1{font-size:1.5rem;margin:0 0 .25rem}h2{font-size:1.15rem;margin:2rem 0 .5rem}
.meta{color:var(--dim);margin:0}.summary{font-weight:600}
table{border-collapse:collapse;margin:1rem 0}th,td{text-align:left;padding:.25rem .75rem;\
border-bottom:1px solid #d1d9e0}th{font-size:.8rem;text-transform:uppercase;color:var(--dim)}
code,.mono{font-family:ui-monospace,\"DejaVu Sans Mono\",Menlo,monospace;font-size:.9em}
.badge{display:inline-block;padding:0 .5rem;border-radius:1rem;font-size:.85rem;font-weight:600}
.badge.ok{background:var(--ok-bg);color:var(--ok)}.badge.error{background:var(--error-bg);\
color:var(--error)}.badge.warning{background:var(--warning-bg);color:var(--warning)}\
.badge.info{background:var(--info-bg);color:var(--info)}
.finding{border-left:4px solid var(--line);padding:.25rem .75rem;margin:.5rem 0}
.finding.error{border-color:var(--error)}.finding.warning{border-color:var(--warning)}\
.finding.info{border-color:var(--info)}
.finding .hint{color:var(--dim);margin:.15rem 0 0}.finding .chain{color:var(--dim);font-size:.85rem}
svg.chain{display:block;margin:.5rem 0;max-width:100%;height:auto}
svg.chain text{font-family:ui-monospace,\"DejaVu Sans Mono\",Menlo,monospace;font-size:12px}
svg.chain rect{stroke-width:1.5}
svg.chain .ok rect{fill:var(--ok-bg);stroke:var(--ok)}svg.chain .error rect{fill:var(--error-bg);\
stroke:var(--error)}svg.chain .warning rect{fill:var(--warning-bg);stroke:var(--warning)}\
svg.chain .info rect{fill:var(--info-bg);stroke:var(--info)}svg.chain .none rect{fill:#f6f8fa;\
stroke:var(--line);stroke-dasharray:4 3}
svg.chain .state{font-weight:700}svg.chain line,svg.chain path{stroke:var(--line);fill:none;\
stroke-width:1.5}svg.chain polygon{fill:var(--line)}
footer{margin-top:3rem;color:var(--dim);font-size:.85rem}
";

/// Writes the page.
pub fn html(out: &mut dyn Write, r: &Report, page: &Page) -> io::Result<()> {
    let mut h = String::new();
    let summary = summary_line(r);
    let _ = write!(
        h,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"generator\" content=\"kubectl-ksm {version}\">\n\
         <title>kubectl ksm doctor: {title}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n\
         <header>\n<h1>kubectl ksm doctor</h1>\n",
        version = env!("CARGO_PKG_VERSION"),
        title = esc(&summary),
    );
    let captured = page
        .captured
        .map_or_else(|| "unknown (saved objects)".to_string(), time);
    let _ = write!(
        h,
        "<p class=\"meta\">Objects captured {} from {}; ages judged at {}; kubectl-ksm {}.</p>\n\
         <p class=\"summary\">{}</p>\n</header>\n",
        esc(&captured),
        esc(page.source),
        time(page.judged_at),
        env!("CARGO_PKG_VERSION"),
        esc(&summary)
    );
    summary_table(&mut h, r);
    if !r.general.is_empty() {
        h.push_str("<section>\n<h2>The whole diagnosis</h2>\n");
        for i in &r.general {
            finding(&mut h, r, *i);
        }
        h.push_str("</section>\n");
    }
    for v in &r.service_sets {
        service_set(&mut h, r, v);
    }
    for m in r
        .multi_cluster_services
        .iter()
        .filter(|m| !m.findings.is_empty())
    {
        let (cls, word) = class(worst(r, &m.findings));
        let _ = writeln!(
            h,
            "<section>\n<h2><span class=\"badge {cls}\">{word}</span> MultiClusterService {}</h2>",
            esc(&m.name)
        );
        for i in &m.findings {
            finding(&mut h, r, *i);
        }
        h.push_str("</section>\n");
    }
    h.push_str(
        "<footer>Written by <code>kubectl ksm doctor -o html</code>. Secret data is never \
         read into this report.</footer>\n</body>\n</html>\n",
    );
    out.write_all(h.as_bytes())
}

fn summary_table(h: &mut String, r: &Report) {
    if r.service_sets.is_empty() {
        h.push_str("<p>No ServiceSets found.</p>\n");
        return;
    }
    h.push_str(
        "<table>\n<thead><tr><th>Namespace</th><th>ServiceSet</th><th>Provider</th>\
         <th>Healthy</th><th>Status</th></tr></thead>\n<tbody>\n",
    );
    for v in &r.service_sets {
        let (status, ok) = set_status(r, v);
        let cls = match status {
            "problems" => "error",
            "warnings" => "warning",
            _ => "ok",
        };
        let _ = writeln!(
            h,
            "<tr><td>{}</td><td><a href=\"#{}\">{}</a></td><td>{}</td><td>{ok}/{}</td>\
             <td><span class=\"badge {cls}\">{status}</span></td></tr>",
            esc(&v.service_set.namespace),
            anchor(v),
            esc(&v.service_set.name),
            esc(&v.provider),
            v.services.len(),
        );
    }
    h.push_str("</tbody>\n</table>\n");
}

fn anchor(v: &ServiceSetView) -> String {
    esc(&format!(
        "serviceset-{}-{}",
        v.service_set.namespace, v.service_set.name
    ))
}

fn service_set(h: &mut String, r: &Report, v: &ServiceSetView) {
    let all = all_findings(v);
    let (cls, _) = class(worst(r, &all));
    let _ = writeln!(
        h,
        "<section id=\"{}\">\n<h2><span class=\"badge {cls}\">{}</span> ServiceSet {}/{} \
         <span class=\"meta\">(provider {}, {} chain)</span></h2>",
        anchor(v),
        status_word(worst(r, &all)),
        esc(&v.service_set.namespace),
        esc(&v.service_set.name),
        esc(&v.provider),
        v.translation
    );
    for i in &v.findings {
        finding(h, r, *i);
    }
    chain_picture(h, r, v);
    for s in &v.services {
        if s.findings.is_empty() {
            continue;
        }
        let _ = writeln!(
            h,
            "<h3 class=\"mono\">service {}/{}</h3>",
            esc(&s.namespace),
            esc(&s.name)
        );
        for i in &s.findings {
            finding(h, r, *i);
        }
    }
    h.push_str("</section>\n");
}

fn finding(h: &mut String, r: &Report, i: usize) {
    let f = &r.findings[i];
    let (cls, word) = class(Some(f.severity));
    let _ = write!(
        h,
        "<div class=\"finding {cls}\"><span class=\"badge {cls}\">{word}</span> <code>{}</code> {}",
        f.code,
        esc(&f.message)
    );
    if let Some(s) = &f.subject
        && !s.chain.is_empty()
    {
        let _ = write!(
            h,
            "<div class=\"chain mono\">{}</div>",
            esc(&s.chain.join(" → "))
        );
    }
    if let Some(help) = &f.help {
        let _ = write!(h, "<p class=\"hint\">hint: {}</p>", esc(help));
    }
    h.push_str("</div>\n");
}

/// One box of the picture: its lines of text and its state.
struct Node {
    lines: Vec<String>,
    /// The CSS class (ok, error, warning, info, none: not there yet).
    class: &'static str,
    /// The state in words, on the box's first line (colour is never the only sign).
    word: &'static str,
}

/// Characters of a line in a box: longer ones are cut (the whole text is in the findings
/// and in the box's tooltip).
const MAX_CHARS: usize = 56;
/// The width of a character of the picture's monospace font at 12px.
const CHAR_W: f64 = 7.3;
const LINE_H: f64 = 16.0;
const PAD: f64 = 8.0;
const GAP: f64 = 36.0;

fn cut(s: &str) -> String {
    if s.chars().count() <= MAX_CHARS {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(MAX_CHARS - 1).collect();
        t.push('…');
        t
    }
}

/// The class of the findings about `object` (a link of the chain, `Kind/ns/name`) among
/// `ids`, if any is about it.
fn link_class(r: &Report, ids: &[usize], object: &str) -> Option<Severity> {
    ids.iter()
        .filter(|i| {
            r.findings[**i]
                .subject
                .as_ref()
                .is_some_and(|s| s.object.to_string() == object)
        })
        .map(|i| r.findings[*i].severity)
        .min()
}

/// The links of a service's chain, left to right: the service, the provider's object, its
/// source. A link a finding is about takes the finding's colour; the service is as bad as
/// its worst finding; a provider object not seen is dashed.
fn service_nodes(r: &Report, v: &ServiceSetView, s: &ServiceView) -> Vec<Node> {
    let state = state_words(v, s).unwrap_or_else(|| "no state".into());
    let (cls, word) = class(worst(r, &s.findings));
    let mut nodes = vec![Node {
        lines: vec![format!("service {}/{}", s.namespace, s.name), state],
        class: cls,
        word,
    }];
    for object in [&s.flux_object, &s.source] {
        match object {
            Some(o) => {
                // `Kind/namespace/name`, then what the chain says of it (the Sveltos
                // release in a ClusterSummary).
                let (id, rest) = o.split_once(' ').unwrap_or((o, ""));
                let (cls, word) = class(link_class(r, &s.findings, id));
                let mut lines: Vec<String> = id.splitn(2, '/').map(str::to_string).collect();
                if !rest.is_empty() {
                    lines.push(rest.to_string());
                }
                nodes.push(Node {
                    lines,
                    class: cls,
                    word,
                });
            }
            // No provider object seen: dashed. No source: Sveltos has none to show (it
            // fetches charts itself), and a missing Flux source is a finding on its object.
            None if nodes.len() == 1 => {
                nodes.push(Node {
                    lines: vec!["no provider object seen".to_string()],
                    class: "none",
                    word: "missing",
                });
                break;
            }
            None => break,
        }
    }
    nodes
}

/// The ServiceSet on the left, a row per service to its right: service → provider object →
/// source, each box with its state in words.
fn chain_picture(h: &mut String, r: &Report, v: &ServiceSetView) {
    let head = Node {
        lines: vec![
            "ServiceSet".to_string(),
            format!("{}/{}", v.service_set.namespace, v.service_set.name),
            format!("provider {}", v.provider),
        ],
        class: class(worst(r, &v.findings)).0,
        word: class(worst(r, &v.findings)).1,
    };
    let rows: Vec<Vec<Node>> = v.services.iter().map(|s| service_nodes(r, v, s)).collect();
    let width_of = |n: &Node| {
        let chars = n
            .lines
            .iter()
            .map(|l| cut(l).chars().count())
            .chain([n.word.len() + 2 + cut(&n.lines[0]).chars().count()])
            .max()
            .unwrap_or(0);
        chars as f64 * CHAR_W + 2.0 * PAD
    };
    let height_of = |n: &Node| n.lines.len() as f64 * LINE_H + 2.0 * PAD;
    // Column widths: the widest box of each column.
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut col_w = vec![0.0f64; columns];
    for row in &rows {
        for (c, n) in row.iter().enumerate() {
            col_w[c] = col_w[c].max(width_of(n));
        }
    }
    let row_h = rows
        .iter()
        .flatten()
        .map(height_of)
        .fold(height_of(&head), f64::max)
        + 12.0;
    let head_w = width_of(&head);
    let total_w = head_w + col_w.iter().map(|w| w + GAP).sum::<f64>() + 2.0;
    let total_h = (rows.len().max(1) as f64 * row_h).max(height_of(&head)) + 2.0;
    let label = format!(
        "Chain of ServiceSet {}/{}: {}",
        v.service_set.namespace,
        v.service_set.name,
        rows.iter()
            .map(|row| row
                .iter()
                .map(|n| format!("{} ({})", n.lines.join(" "), n.word))
                .collect::<Vec<_>>()
                .join(" → "))
            .collect::<Vec<_>>()
            .join("; ")
    );
    let _ = writeln!(
        h,
        "<svg class=\"chain\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{total_w:.0}\" \
         height=\"{total_h:.0}\" viewBox=\"0 0 {total_w:.0} {total_h:.0}\" role=\"img\" \
         aria-label=\"{}\">",
        esc(&label)
    );
    let head_y = (total_h - height_of(&head)) / 2.0;
    draw_node(h, &head, 1.0, head_y, head_w);
    let head_right = 1.0 + head_w;
    for (ri, row) in rows.iter().enumerate() {
        let mid = ri as f64 * row_h + row_h / 2.0 + 1.0;
        let mut x = head_right + GAP;
        // From the ServiceSet to the row's first box.
        let _ = writeln!(
            h,
            "<path d=\"M{:.1} {:.1} C{:.1} {:.1} {:.1} {:.1} {:.1} {:.1}\"/>",
            head_right,
            total_h / 2.0,
            head_right + GAP / 2.0,
            total_h / 2.0,
            head_right + GAP / 2.0,
            mid,
            x - 6.0,
            mid
        );
        arrow_head(h, x, mid);
        for (c, n) in row.iter().enumerate() {
            let w = col_w[c];
            draw_node(h, n, x, mid - height_of(n) / 2.0, w);
            if c + 1 < row.len() {
                let _ = writeln!(
                    h,
                    "<line x1=\"{:.1}\" y1=\"{mid:.1}\" x2=\"{:.1}\" y2=\"{mid:.1}\"/>",
                    x + w,
                    x + w + GAP - 6.0
                );
                arrow_head(h, x + w + GAP, mid);
            }
            x += w + GAP;
        }
    }
    h.push_str("</svg>\n");
}

fn arrow_head(h: &mut String, x: f64, y: f64) {
    let _ = writeln!(
        h,
        "<polygon points=\"{:.1},{:.1} {:.1},{:.1} {:.1},{:.1}\"/>",
        x,
        y,
        x - 7.0,
        y - 4.0,
        x - 7.0,
        y + 4.0
    );
}

fn draw_node(h: &mut String, n: &Node, x: f64, y: f64, w: f64) {
    let ht = n.lines.len() as f64 * LINE_H + 2.0 * PAD;
    let _ = write!(
        h,
        "<g class=\"{}\"><title>{}</title><rect x=\"{x:.1}\" y=\"{y:.1}\" width=\"{w:.1}\" \
         height=\"{ht:.1}\" rx=\"6\"/>",
        n.class,
        esc(&format!("{} ({})", n.lines.join(" "), n.word))
    );
    for (i, line) in n.lines.iter().enumerate() {
        let ty = y + PAD + LINE_H * (i as f64 + 0.75);
        let _ = write!(h, "<text x=\"{:.1}\" y=\"{ty:.1}\">", x + PAD);
        if i == 0 {
            let _ = write!(h, "<tspan class=\"state\">{}</tspan> ", n.word);
        }
        let _ = write!(h, "{}</text>", esc(&cut(line)));
    }
    h.push_str("</g>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_from_the_cluster_is_escaped() {
        assert_eq!(
            esc("<script>alert(\"x\" & 'y')</script>"),
            "&lt;script&gt;alert(&quot;x&quot; &amp; &#39;y&#39;)&lt;/script&gt;"
        );
    }

    #[test]
    fn long_lines_are_cut_with_an_ellipsis() {
        let long = "x".repeat(80);
        assert_eq!(cut(&long).chars().count(), MAX_CHARS);
        assert!(cut(&long).ends_with('…'));
        assert_eq!(cut("short"), "short");
    }
}
