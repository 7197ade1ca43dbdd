//! A run under MPI on its HTML page, rendered by headless Chromium: the
//! job's line and a row per rank with the numbers the store holds (as the
//! terminal's per-rank table prints them), each rank's IOPS as a bar.
//! Compiled only with `--features mpi`.

use serde_json::Value;

use crate::common::browser::{charts, chromium, drawn, render};
use crate::common::run::dbio;
use crate::common::store::temp_store;
use crate::mpi::{mpirun, stderr};

crate::tests! {
    a_run_under_mpi_shows_each_rank_on_its_page [Tool("mpirun"), Tool("chromium")],
}

fn ok(args: &[&str]) -> String {
    let out = dbio().args(args).output().unwrap();
    assert!(out.status.success(), "dbio {args:?}: {}", stderr(&out));
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn a_run_under_mpi_shows_each_rank_on_its_page() {
    let _store = temp_store();
    let dir = tempfile::tempdir_in("/dev/shm").unwrap();
    let target = format!("{}/r{{rank}}", dir.path().display());
    let (out, left) = mpirun(
        2,
        &[
            "--target",
            &target,
            "--size",
            "4m",
            "--sessions",
            "2",
            "--ops",
            "3000",
            "--quiet",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(left.is_empty(), "segments left: {left:?}");
    let stored: Value = serde_json::from_str(&ok(&["runs", "show", "1", "--json"])).unwrap();
    let ranks = stored["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    // The terminal's table, for comparison with the page's.
    let text = ok(&["runs", "show", "1"]);

    let page = dir.path().join("run.html");
    ok(&["runs", "show", "1", "--html", page.to_str().unwrap()]);
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.contains("<a href=\"#ranks\">Ranks (MPI)</a>"));
    let part =
        &html[html.find("<h2 id=\"ranks\"").unwrap()..html.find("<h2 id=\"timeline\"").unwrap()];
    let host = ranks[0]["host"].as_str().unwrap();
    assert!(
        part.contains("<th>ranks</th><td>2 on 1 host</td>"),
        "{part}"
    );
    let skew = format!("{:.0} us", stored["mpi"]["start_skew_us"].as_f64().unwrap());
    assert!(part.contains(&format!("<td>{skew}</td>")), "{skew}: {part}");
    assert!(text.contains(&format!("start skew {skew}")), "{text}");
    for k in ranks {
        let rank = k["rank"].as_u64().unwrap();
        let t = &k["total"];
        let cells = [
            rank.to_string(),
            host.to_string(),
            k["sessions"].to_string(),
            format!("{:.0}", t["iops"].as_f64().unwrap()),
            format!("{:.1}", t["mib_per_s"].as_f64().unwrap()),
            format!("{:.3}", t["latency"]["mean_us"].as_f64().unwrap() / 1e3),
            format!("{:.3}", t["latency"]["p99_us"].as_f64().unwrap() / 1e3),
        ];
        let row = part
            .split("<tr>")
            .find(|r| r.starts_with(&format!("<td class=\"num\">{rank}</td><td>")))
            .unwrap_or_else(|| panic!("no row for rank {rank}: {part}"));
        let shown: Vec<&str> = row
            .split("</td>")
            .filter_map(|c| c.rsplit('>').next())
            .take(cells.len())
            .collect();
        assert_eq!(shown, cells, "rank {rank}'s row");
        assert!(row.contains("<td>completed</td>"), "{row}");
        // The same numbers in the terminal's table, on the rank's line.
        let line = text
            .lines()
            .find(|l| l.split_whitespace().take(2).eq([cells[0].as_str(), host]))
            .unwrap_or_else(|| panic!("rank {rank} in {text}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words[..cells.len()], cells, "{line}");
    }

    let browser = chromium().expect("chromium (scripts/test.sh installs it)");
    let r = render(&browser, &page, dir.path(), 3000);
    assert!(r.console.is_empty(), "console messages: {:#?}", r.console);
    let bars = charts(&r.dom)
        .into_iter()
        .find(|s| s.contains("<title>IOPS by rank</title>"))
        .expect("the IOPS by rank chart in the DOM");
    assert!(drawn(bars));
    assert_eq!(bars.matches("class=\"bar\"").count(), 2, "{bars}");
    for k in ranks {
        let label = format!("{} ({host})", k["rank"]);
        assert!(bars.contains(&format!(">{label}<")), "{label} in {bars}");
    }
}
