//! A run made under MPI on its page, from the `mpi` and `ranks` parts of
//! the stored report (`ranks::merge` computed them when the run ended):
//! the job's line (ranks, hosts, start skew, first and last done,
//! imbalance), each rank's IOPS as a bar, and the per-rank table the
//! terminal prints (`ranks::text`) with the same numbers.

use serde::Deserialize;
use serde_json::Value;

use super::page::{figure, key_values, table, td};
use crate::chart::{HBar, HBarChart, color, escape};

/// The job: the parts of `ranks::MpiSummary` the page shows.
#[derive(Debug, Deserialize)]
pub struct Job {
    pub ranks: u32,
    pub hosts: u32,
    #[serde(default)]
    pub library: String,
    pub start_skew_us: f64,
    pub first_done_s: f64,
    pub last_done_s: f64,
    pub imbalance: Option<f64>,
}

/// One rank: the parts of `ranks::RankSummary` the page shows.
#[derive(Debug, Deserialize)]
pub struct Rank {
    pub rank: u32,
    pub host: String,
    pub status: String,
    pub error: Option<String>,
    pub sessions: u32,
    pub start_offset_us: f64,
    pub done_s: f64,
    pub total: Total,
}

#[derive(Debug, Deserialize)]
pub struct Total {
    pub iops: f64,
    pub mib_per_s: f64,
    pub latency: Latency,
}

#[derive(Debug, Deserialize)]
pub struct Latency {
    pub mean_us: f64,
    pub p99_us: f64,
}

/// The job and its ranks; `None` for a run of one process.
pub fn from_report(report: &Value) -> Option<(Job, Vec<Rank>)> {
    let job = serde_json::from_value(report.get("mpi")?.clone()).ok()?;
    let ranks = serde_json::from_value(report.get("ranks")?.clone()).ok()?;
    Some((job, ranks))
}

/// The section's markup: the job's facts, a bar per rank, the table.
pub fn section(job: &Job, ranks: &[Rank]) -> String {
    let facts = vec![
        (
            "ranks".to_string(),
            format!(
                "{} on {} host{}",
                job.ranks,
                job.hosts,
                if job.hosts == 1 { "" } else { "s" }
            ),
        ),
        ("MPI library".into(), job.library.clone()),
        ("start skew".into(), format!("{:.0} us", job.start_skew_us)),
        (
            "done".into(),
            format!("{:.2} .. {:.2} s", job.first_done_s, job.last_done_s),
        ),
        (
            "imbalance (fastest / slowest rank)".into(),
            job.imbalance.map_or("-".into(), |i| format!("{i:.2}")),
        ),
    ];
    let mut o = key_values(&facts);
    o += &figure(&iops_chart(ranks).render(), "");
    o += &rank_table(ranks);
    o
}

/// Each rank's IOPS as a bar, labelled with its host.
pub fn iops_chart(ranks: &[Rank]) -> HBarChart {
    let mut c = HBarChart::new("IOPS by rank", "IOPS");
    for k in ranks {
        let text = format!(
            "{:.0} IOPS · {:.1} MiB/s · p99 {:.3} ms",
            k.total.iops,
            k.total.mib_per_s,
            k.total.latency.p99_us / 1e3
        );
        c.bars.push(HBar {
            name: format!("{} ({})", k.rank, k.host),
            value: k.total.iops,
            tip: format!("rank {} on {}: {text}", k.rank, k.host),
            text,
            color: color(0),
        });
    }
    c
}

/// The per-rank table, with the numbers as `ranks::text` prints them.
fn rank_table(ranks: &[Rank]) -> String {
    let num = |v: String| format!("<td class=\"num\">{}</td>", escape(&v));
    let header: Vec<String> = [
        "rank", "host", "sessions", "IOPS", "MiB/s", "mean ms", "p99 ms", "start us", "done s",
        "status",
    ]
    .map(String::from)
    .to_vec();
    let rows: Vec<Vec<String>> = ranks
        .iter()
        .map(|k| {
            vec![
                num(k.rank.to_string()),
                td(&k.host),
                num(k.sessions.to_string()),
                num(format!("{:.0}", k.total.iops)),
                num(format!("{:.1}", k.total.mib_per_s)),
                num(format!("{:.3}", k.total.latency.mean_us / 1e3)),
                num(format!("{:.3}", k.total.latency.p99_us / 1e3)),
                num(format!("{:.0}", k.start_offset_us)),
                num(format!("{:.2}", k.done_s)),
                td(&match &k.error {
                    Some(e) => format!("failed: {e}"),
                    None => k.status.clone(),
                }),
            ]
        })
        .collect();
    table("ranks", &header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rank(i: u32, host: &str, iops: f64, error: Option<&str>) -> Value {
        json!({"rank": i, "host": host, "status": if error.is_some() {"failed"} else {"completed"},
               "error": error, "sessions": 2, "start_offset_us": 12.4, "done_s": 1.234,
               "total": {"iops": iops, "mib_per_s": 3.5, "requests": 10,
                         "latency": {"mean_us": 150.0, "p99_us": 2500.0}}})
    }

    #[test]
    fn a_run_of_one_process_has_no_rank_section() {
        assert!(from_report(&json!({"total": {}})).is_none());
    }

    #[test]
    fn the_section_shows_the_job_and_every_rank_escaped() {
        let report = json!({
            "mpi": {"ranks": 2, "hosts": 1, "library": "Open MPI v4.1.4", "start_skew_us": 37.6,
                    "first_done_s": 1.0, "last_done_s": 1.5, "imbalance": 2.0},
            "ranks": [rank(0, "a<b", 2000.0, None), rank(1, "a<b", 1000.0, Some("disk & gone"))],
        });
        let (job, ranks) = from_report(&report).unwrap();
        let html = section(&job, &ranks);
        assert!(
            html.contains("<th>ranks</th><td>2 on 1 host</td>"),
            "{html}"
        );
        assert!(html.contains("<td>38 us</td>") && html.contains("<td>2.00</td>"));
        assert!(html.contains("<td class=\"num\">2000</td><td class=\"num\">3.5</td><td class=\"num\">0.150</td><td class=\"num\">2.500</td>"), "{html}");
        assert!(html.contains("<td>failed: disk &amp; gone</td>"));
        assert!(html.contains("<td>a&lt;b</td>") && !html.contains("a<b"));
        assert_eq!(iops_chart(&ranks).bars.len(), 2);
        assert_eq!(html.matches("class=\"bar\"").count(), 2, "{html}");
    }
}
