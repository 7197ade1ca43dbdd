//! A run made under MPI on its page, from the `mpi` and `ranks` parts of
//! the stored report (`ranks::merge` computed them when the run ended):
//! the job's line (ranks, hosts, start skew, first and last done,
//! imbalance), each rank's IOPS as a bar, and the per-rank table the
//! terminal prints (`report::run::ranks_text`) with the same numbers.

use super::page::{figure, key_values, table, td};
use crate::chart::{HBar, HBarChart, color, escape};
use crate::document::Report;
use crate::document::mpi::{MpiSummary as Job, RankSummary as Rank};

/// The job and its ranks; `None` for a run of one process.
pub fn from_report(report: &Report) -> Option<(&Job, &[Rank])> {
    Some((report.mpi.as_ref()?, &report.ranks))
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

/// The per-rank table, with the numbers as `run::ranks_text` prints them.
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
                    None => k.status.name().to_string(),
                }),
            ]
        })
        .collect();
    table("ranks", &header, &rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{CpuSummary, Latency, OpSummary};
    use crate::harness::Status;

    fn rank(i: u32, host: &str, iops: f64, error: Option<&str>) -> Rank {
        let total = OpSummary {
            requests: 10,
            iops,
            mib_per_s: 3.5,
            latency: Latency {
                mean_us: 150.0,
                p99_us: 2500.0,
                ..Latency::default()
            },
            ..OpSummary::default()
        };
        Rank {
            rank: i,
            host: host.into(),
            status: if error.is_some() {
                Status::Failed
            } else {
                Status::Completed
            },
            error: error.map(String::from),
            sessions: 2,
            start_offset_us: 12.4,
            start_skew_us: 0.0,
            measured_s: 1.0,
            done_s: 1.234,
            peak_rss_bytes: 0,
            read: None,
            write: None,
            sync: None,
            total,
            cpu: CpuSummary {
                user_s: 0.0,
                sys_s: 0.0,
                us_per_io: 0.0,
            },
            slob: None,
            histograms: Default::default(),
            environment: serde_json::Value::Null,
            storage: serde_json::Value::Null,
            telemetry_window: serde_json::Value::Null,
        }
    }

    #[test]
    fn a_run_of_one_process_has_no_rank_section() {
        assert!(from_report(&crate::report::run::tests::sample()).is_none());
    }

    #[test]
    fn the_section_shows_the_job_and_every_rank_escaped() {
        let mut report = crate::report::run::tests::sample();
        report.mpi = Some(Job {
            ranks: 2,
            hosts: 1,
            library: "Open MPI v4.1.4".into(),
            start_skew_us: 37.6,
            first_done_s: 1.0,
            last_done_s: 1.5,
            imbalance: Some(2.0),
            missing_ranks: Vec::new(),
        });
        report.ranks = vec![
            rank(0, "a<b", 2000.0, None),
            rank(1, "a<b", 1000.0, Some("disk & gone")),
        ];
        let (job, ranks) = from_report(&report).unwrap();
        let html = section(job, ranks);
        assert!(
            html.contains("<th>ranks</th><td>2 on 1 host</td>"),
            "{html}"
        );
        assert!(html.contains("<td>38 us</td>") && html.contains("<td>2.00</td>"));
        assert!(html.contains("<td class=\"num\">2000</td><td class=\"num\">3.5</td><td class=\"num\">0.150</td><td class=\"num\">2.500</td>"), "{html}");
        assert!(html.contains("<td>failed: disk &amp; gone</td>"));
        assert!(html.contains("<td>a&lt;b</td>") && !html.contains("a<b"));
        assert_eq!(iops_chart(ranks).bars.len(), 2);
        assert_eq!(html.matches("class=\"bar\"").count(), 2, "{html}");
    }
}
