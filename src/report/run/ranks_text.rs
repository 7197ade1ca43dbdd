//! The per-rank table under a run made under MPI: the job's line (ranks,
//! hosts, start skew, first and last done, imbalance), then each rank's
//! host, sessions, IOPS, throughput, latency and when it was done (a rank
//! that never reported: its number and that it did not).

use std::fmt::Write;

use crate::grid;
use crate::report::Report;

/// The table, or nothing for a run of one process.
pub fn render(r: &Report) -> String {
    let Some(m) = &r.mpi else {
        return String::new();
    };
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\nranks    {} on {} host{} ({}): start skew {:.0} us, done {:.2} .. {:.2} s, imbalance {}",
        m.ranks,
        m.hosts,
        if m.hosts == 1 { "" } else { "s" },
        m.library,
        m.start_skew_us,
        m.first_done_s,
        m.last_done_s,
        m.imbalance.map_or("-".into(), |i| format!("{i:.2}")),
    );
    let mut rows = vec![
        [
            "rank", "host", "sessions", "IOPS", "MiB/s", "mean ms", "p99 ms", "start us", "done s",
            "status",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for k in &r.ranks {
        let lat = &k.total.latency;
        rows.push(vec![
            k.rank.to_string(),
            k.host.clone(),
            k.sessions.to_string(),
            format!("{:.0}", k.total.iops),
            format!("{:.1}", k.total.mib_per_s),
            format!("{:.3}", lat.mean_us / 1e3),
            format!("{:.3}", lat.p99_us / 1e3),
            format!("{:.0}", k.start_offset_us),
            format!("{:.2}", k.done_s),
            match &k.error {
                Some(e) => format!("failed: {e}"),
                None => format!("{:?}", k.status).to_lowercase(),
            },
        ]);
    }
    // A rank that hung sent nothing: its row says so.
    for &rank in &m.missing_ranks {
        let mut row = vec!["-".to_string(); 10];
        row[0] = rank.to_string();
        row[9] = "did not report (hung?)".into();
        rows.push(row);
    }
    for line in grid::text(&rows, "rlrrrrrrrl").lines() {
        let _ = writeln!(o, "  {line}");
    }
    o
}
