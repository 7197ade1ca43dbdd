//! The HTML document around a report: one self-contained file with its CSS
//! inline, no script, and a Content-Security-Policy that forbids loading
//! anything (so the page provably works offline and never calls out).

use std::fmt::Write;

use crate::chart::escape;

/// The page's CSS, inlined into every report.
const STYLE: &str = include_str!("style.css");

/// The policy in the page: nothing may be fetched, only inline styles
/// apply; a browser logs a console error for anything else.
pub const CSP: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src data:";

/// An HTML page being assembled from sections.
pub struct Page {
    title: String,
    subtitle: String,
    nav: Vec<(String, String)>,
    body: String,
}

impl Page {
    pub fn new(title: &str, subtitle: &str) -> Page {
        Page {
            title: title.to_string(),
            subtitle: subtitle.to_string(),
            nav: Vec::new(),
            body: String::new(),
        }
    }

    /// Starts a section with a heading and a link to it in the navigation.
    pub fn section(&mut self, id: &str, heading: &str) {
        self.nav.push((id.to_string(), heading.to_string()));
        let _ = writeln!(
            self.body,
            "<h2 id=\"{}\">{}</h2>",
            escape(id),
            escape(heading)
        );
    }

    /// Appends markup (already escaped).
    pub fn html(&mut self, markup: &str) {
        self.body.push_str(markup);
        if !markup.ends_with('\n') {
            self.body.push('\n');
        }
    }

    /// A paragraph of text (escaped here).
    pub fn para(&mut self, class: &str, text: &str) {
        let _ = writeln!(self.body, "<p class=\"{class}\">{}</p>", escape(text));
    }

    /// The finished document.
    pub fn finish(self, footer: &str) -> String {
        let mut o = String::new();
        let _ = write!(
            o,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n<header>\n<h1>{}</h1>\n<p class=\"meta\">{}</p>\n<nav>",
            escape(&self.title),
            escape(&self.title),
            escape(&self.subtitle)
        );
        for (id, h) in &self.nav {
            let _ = write!(o, "<a href=\"#{}\">{}</a>", escape(id), escape(h));
        }
        let _ = write!(
            o,
            "</nav>\n</header>\n<main>\n{}</main>\n<footer>{}</footer>\n</body>\n</html>\n",
            self.body,
            escape(footer)
        );
        o
    }
}

/// A chart in a `<figure>` with a caption (escaped here).
pub fn figure(svg: &str, caption: &str) -> String {
    if caption.is_empty() {
        format!("<figure>{svg}</figure>\n")
    } else {
        format!(
            "<figure>{svg}<figcaption>{}</figcaption></figure>\n",
            escape(caption)
        )
    }
}

/// A table from a header and rows of cells that are already HTML.
pub fn table(class: &str, header: &[String], rows: &[Vec<String>]) -> String {
    let mut o = format!("<table class=\"{class}\">\n<tr>");
    for h in header {
        let _ = write!(o, "<th>{}</th>", escape(h));
    }
    o.push_str("</tr>\n");
    for r in rows {
        o.push_str("<tr>");
        for c in r {
            o.push_str(c);
        }
        o.push_str("</tr>\n");
    }
    o.push_str("</table>\n");
    o
}

/// A `<td>` of text (escaped here).
pub fn td(text: &str) -> String {
    format!("<td>{}</td>", escape(text))
}

/// A key/value table of text.
pub fn key_values(pairs: &[(String, String)]) -> String {
    let rows: Vec<Vec<String>> = pairs
        .iter()
        .map(|(k, v)| vec![format!("<th>{}</th>", escape(k)), td(v)])
        .collect();
    let mut o = String::from("<table class=\"kv\">\n");
    for r in rows {
        let _ = writeln!(o, "<tr>{}</tr>", r.concat());
    }
    o.push_str("</table>\n");
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_page_is_self_contained_and_escaped() {
        let mut p = Page::new("a <b>", "sub & title");
        p.section("s1", "Tables");
        p.para("note", "x < y");
        p.html(&table("t", &["h<".into()], &[vec![td("v&")]]));
        let out = p.finish("made by dbio");
        assert!(out.starts_with("<!DOCTYPE html>"));
        assert!(out.contains(&format!("content=\"{CSP}\"")));
        assert!(out.contains("<title>a &lt;b&gt;</title>"));
        assert!(out.contains("<a href=\"#s1\">Tables</a>"));
        assert!(out.contains("<p class=\"note\">x &lt; y</p>"));
        assert!(out.contains("<th>h&lt;</th>") && out.contains("<td>v&amp;</td>"));
        assert!(!out.contains("<script") && !out.contains("http://") && !out.contains("https://"));
    }
}
