//! `dbio report`'s products over a selection of stored runs ([`PlanReport`],
//! written through `report::export`'s text, Markdown, CSV and JSON): `table.rs`
//! (the SLOB.R table), `stats.rs` + `stats_text.rs` (`--stats`,
//! `--scaling`), `select.rs` (which value a run shows), `rformat.rs`
//! (numbers as R prints them), `metric_names.rs` (a stored metric name's
//! unit and meaning), `curve.rs` (a latency-throughput curve's points and
//! its table, for `dbio curve` and the HTML report's hockey stick).

pub mod curve;
pub mod metric_names;
pub(crate) mod rformat;
pub mod select;
pub mod stats;
pub mod stats_text;
pub mod table;

/// What `dbio report` writes: the table, and the statistics asked for
/// (serialized as its JSON document: the table's fields, then `stats`
/// and `scaling`).
#[derive(serde::Serialize)]
pub struct PlanReport<'a> {
    #[serde(flatten)]
    pub table: &'a table::Table,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stats: Option<&'a stats::Summary>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scaling: Option<&'a [stats::ScalingFit]>,
}

impl PlanReport<'_> {
    /// The table, then the statistics and the scaling, in `style`.
    pub fn styled(&self, style: stats_text::Style) -> String {
        let t = self.table;
        let mut o = match style {
            stats_text::Style::Text => table::text(t),
            stats_text::Style::Markdown => table::markdown(t),
        };
        if let Some(s) = self.stats {
            o += "\n";
            o += &stats_text::summary(s, style);
        }
        if let Some(s) = self.scaling {
            o += "\n";
            o += &stats_text::scaling(&t.metric, s, style);
        }
        o
    }
}
