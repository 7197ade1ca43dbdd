//! `dbio import awr-info` + `dbio report --model`: SLOB.R's READS, REDO,
//! WRITES and READWRITE tables reproduced to the last digit R prints, on an
//! awr_info.sh file in SLOB.R's format (READERS, WRITERS, REDO in bytes)
//! written here. Every expected number is worked out by hand in the
//! comments (SLOB.R's myavg: drop every copy of the min and the max, average
//! the rest) and printed as R prints a matrix column (7 significant digits).
//! Cells where SLOB.R prints NaN show dbio's plain mean, marked `*`.

use std::path::Path;

use crate::common::run::dbio;
use crate::common::store::temp_store;

/// One awr_info.sh row: file, readers, writers, preads, pwrites, redo bytes.
fn row(file: &str, r: u32, w: u32, preads: &str, pwrites: &str, redo: &str) -> String {
    format!("{file}|{r}|{w}|300|{preads}|{pwrites}|{redo}|db file sequential read|\n")
}

fn awrinfo() -> String {
    let mut t = String::from("FILE|READERS|WRITERS|ELAPSED|PREADS|PWRITES|REDO|TOP WAIT|\n");
    // READS: XFS 8 readers, ties at min (100 x2) and max (400 x2).
    for (i, p) in ["100", "100", "250", "300", "400", "400"]
        .iter()
        .enumerate()
    {
        t += &row(&format!("SLOB-AWR-XFS-{i}.0.8"), 8, 0, p, "2", "1000");
    }
    // XFS 16: n = 2 (SLOB.R: NaN); XFS 32: three runs.
    t += &row("SLOB-AWR-XFS-1.0.16", 16, 0, "500", "2", "1000");
    t += &row("SLOB-AWR-XFS-2.0.16", 16, 0, "600", "2", "1000");
    for (i, p) in ["700", "710", "720"].iter().enumerate() {
        t += &row(&format!("SLOB-AWR-XFS-{i}.0.32"), 32, 0, p, "2", "1000");
    }
    // EXT3 8: one run (NaN); EXT3 16: four runs; EXT3 32: none (missing cell).
    t += &row("SLOB-AWR-EXT3-1.0.8", 8, 0, "123.4", "2", "1000");
    for (i, p) in ["1000", "1100", "1234.5678", "1300"].iter().enumerate() {
        t += &row(&format!("SLOB-AWR-EXT3-{i}.0.16"), 16, 0, p, "2", "1000");
    }
    // REDO: writers only, redo / (pwrites * 8192) far above 2.
    for (i, r) in ["300000000", "326480426", "330000000", "350000000"]
        .iter()
        .enumerate()
    {
        t += &row(&format!("SLOB-AWR-XFS-{i}.8.0"), 0, 8, "10", "100", r);
    }
    for (i, r) in ["310000000", "320000000", "330000000", "320000000"]
        .iter()
        .enumerate()
    {
        t += &row(&format!("SLOB-AWR-XFS-{i}.16.0"), 0, 16, "10", "100", r);
    }
    for i in 0..3 {
        t += &row(
            &format!("SLOB-AWR-EXT3-{i}.8.0"),
            0,
            8,
            "10",
            "100",
            "200000001",
        );
    }
    for (i, r) in ["250000000", "260000000", "270000000"].iter().enumerate() {
        t += &row(&format!("SLOB-AWR-EXT3-{i}.16.0"), 0, 16, "10", "100", r);
    }
    // WRITES: redo / (pwrites * 8192) = 1e6 / (5000 * 8192) < 2. The
    // extremes of reads and writes are in different runs, so trimming each
    // apart (SLOB.R) differs from trimming the sums (6200 at XFS 8).
    for (i, (p, w)) in [
        ("1000", "5000"),
        ("1100", "5100"),
        ("1200", "5300"),
        ("1300", "5200"),
    ]
    .iter()
    .enumerate()
    {
        t += &row(&format!("SLOB-AWR-XFS-W{i}.4.0"), 0, 4, p, w, "1000000");
    }
    for i in 0..2 {
        t += &row(
            &format!("SLOB-AWR-XFS-W{i}.16.0"),
            0,
            16,
            "2000",
            "8000",
            "1000000",
        );
    }
    for (i, (p, w)) in [
        ("900.5", "4000.25"),
        ("950.25", "4100.5"),
        ("1000.125", "4200.75"),
    ]
    .iter()
    .enumerate()
    {
        t += &row(&format!("SLOB-AWR-EXT3-W{i}.4.0"), 0, 4, p, w, "1000000");
    }
    t
}

/// The table's cells, by variable, as printed (header first).
fn cells(out: &[u8]) -> Vec<Vec<String>> {
    String::from_utf8_lossy(out)
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with('*'))
        .map(|l| l.split_whitespace().map(str::to_string).collect())
        .collect()
}

fn report(args: &[&str]) -> Vec<Vec<String>> {
    let out = dbio()
        .arg("report")
        .args(args)
        .arg("--digits")
        .arg("7")
        .assert()
        .success();
    cells(&out.get_output().stdout)
}

fn import(file: &Path) {
    dbio()
        .args(["import", "awr-info"])
        .arg(file)
        .args(["--variable-regex", r"-(?P<variable>XFS|EXT3)-W?\d+\."])
        .assert()
        .success();
}

fn slob_r_tables_are_reproduced_to_the_last_printed_digit() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("awrinfo");
    std::fs::write(&file, awrinfo()).unwrap();
    import(&file);

    // READS (PREADS of READS runs):
    //  XFS 8:  100 100 250 300 400 400 -> (250 + 300) / 2 = 275
    //  XFS 16: 500 600 -> NaN; plain mean 550
    //  XFS 32: 700 710 720 -> 710
    //  XFS Overall: drop 100 100 720 -> (250+300+400+400+500+600+700+710)/8 = 482.5
    //  EXT3 8: one run -> NaN; plain 123.4
    //  EXT3 16: drop 1000, 1300 -> (1100 + 1234.5678) / 2 = 1167.2839 -> 1167.284
    //  EXT3 Overall: drop 123.4, 1300 -> (1000 + 1100 + 1234.5678) / 3 = 1111.5226 -> 1111.523
    //  Column decimals as R: 8 -> "275"; 16 -> 3; 32 -> 0; Overall -> 3.
    assert_eq!(
        report(&["--model", "reads"]),
        [
            vec!["variable", "8", "16", "32", "Overall"],
            vec!["EXT3", "123*", "1167.284", "-", "1111.523"],
            vec!["XFS", "275", "550.000*", "710", "482.500"],
        ]
    );

    // REDO (REDO bytes of REDO runs):
    //  XFS 8: drop 300000000, 350000000 -> (326480426 + 330000000) / 2 = 328240213
    //  XFS 16: drop 310000000, 330000000 -> 320000000 (R prints 3.2e+08 alone)
    //  EXT3 8: all equal -> NaN; plain 200000001
    //  EXT3 16: 260000000
    //  Overalls: XFS drop 3e8, 3.5e8 -> 1936480426 / 6 = 322746737.67 -> 322746738;
    //            EXT3 drop the three 200000001 and 270000000 -> 255000000
    //  Column 16 holds 320000000 and 260000000: R prints "3.2e+08" and "2.6e+08".
    assert_eq!(
        report(&["--model", "redo", "--metric", "db.redo_bytes_s"]),
        [
            vec!["variable", "8", "16", "Overall"],
            vec!["EXT3", "200000001*", "2.6e+08", "255000000"],
            vec!["XFS", "328240213", "3.2e+08", "322746738"],
        ]
    );

    // WRITES (PWRITES of WRITES runs):
    //  XFS 4: drop 5000, 5300 -> 5150; XFS 16: 8000 8000 -> NaN, plain 8000
    //  EXT3 4: 4100.5; Overall XFS: drop 5000, 8000 x2 -> (5100+5300+5200)/3 = 5200
    assert_eq!(
        report(&["--model", "writes"]),
        [
            vec!["variable", "4", "16", "Overall"],
            vec!["EXT3", "4100.5", "-", "4100.5"],
            vec!["XFS", "5150.0", "8000*", "5200.0"],
        ]
    );

    // READWRITE: PREADS and PWRITES of WRITES runs, each trimmed, then added.
    //  XFS 4: reads drop 1000, 1300 -> 1150; writes 5150 -> 6300 (the sums'
    //         trimmed mean would be 6200)
    //  XFS 16: NaN + NaN; plain 2000 + 8000 = 10000
    //  EXT3 4: 950.25 + 4100.5 = 5050.75
    //  Overall XFS: reads drop 1000, 2000 x2 -> 1200; writes 5200 -> 6400
    assert_eq!(
        report(&["--model", "readwrite"]),
        [
            vec!["variable", "4", "16", "Overall"],
            vec!["EXT3", "5050.75", "-", "5050.75"],
            vec!["XFS", "6300.00", "10000*", "6400.00"],
        ]
    );
}

fn the_redo_model_shows_mib_per_second_and_json_keeps_full_precision() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("awrinfo");
    std::fs::write(&file, awrinfo()).unwrap();
    import(&file);
    let out = dbio()
        .args(["report", "--model", "redo", "--format", "json"])
        .assert()
        .success();
    let t: serde_json::Value = serde_json::from_slice(&out.get_output().stdout).unwrap();
    let xfs = t["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["variable"] == "XFS")
        .unwrap();
    let mib = 1_048_576.0;
    let expect = [
        (326480426.0 / mib + 330000000.0 / mib) / 2.0,
        320000000.0 / mib,
    ];
    for (cell, want) in xfs["cells"].as_array().unwrap().iter().zip(expect) {
        let got = cell["value"].as_f64().unwrap();
        assert!((got - want).abs() < 1e-9 * want, "{got} vs {want}");
    }
}

fn malformed_files_are_refused_with_line_and_column_and_nothing_is_stored() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("awrinfo");
    let bad = awrinfo().replace("|1234.5678|", "|12,34|");
    std::fs::write(&file, &bad).unwrap();
    let line = bad.lines().position(|l| l.contains("12,34")).unwrap() + 1;
    let out = dbio()
        .args(["import", "awr-info"])
        .arg(&file)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("line {line}, PREADS: \"12,34\" is not a number")),
        "{err}"
    );
    let list = dbio().args(["runs", "list"]).assert().success();
    assert!(String::from_utf8_lossy(&list.get_output().stdout).starts_with("no stored runs"));
    // A good file imports once; a second import is refused unless --again.
    std::fs::write(&file, awrinfo()).unwrap();
    import(&file);
    let again = dbio()
        .args(["import", "awr-info"])
        .arg(&file)
        .assert()
        .code(2);
    assert!(String::from_utf8_lossy(&again.get_output().stderr).contains("imported already"));
}

/// awr_info.sh run over two directories of reports (its FILE column as
/// given on its command line).
const ARMS: &str = "FILE|SESSIONS|ELAPSED|PREADS|PWRITES|TOP WAIT|\n\
XFS/awr.txt.8|8|300|1000|234|w|\n\
XFS/awr.txt.16|16|300|2000|100|w|\n\
EXT4/awr.txt.8|8|300|500|5|w|\n\
EXT4/awr.txt.16|16|300|900.5|0|w|\n";

fn stdout(args: &[&str]) -> String {
    let out = dbio().args(args).assert().success();
    String::from_utf8_lossy(&out.get_output().stdout).to_string()
}

fn arms_in_directories_stay_apart_and_show_their_numbers() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("awrinfo");
    std::fs::write(&file, ARMS).unwrap();
    dbio()
        .args(["import", "awr-info", "--model", "reads"])
        .arg(&file)
        .assert()
        .success();
    let table = report(&["--model", "reads"]);
    let vars: Vec<&str> = table.iter().map(|r| r[0].as_str()).collect();
    assert_eq!(vars, ["variable", "EXT4/awr", "XFS/awr"], "{table:?}");
    assert_eq!(table[0][1..3], ["8", "16"], "{table:?}");
    assert_eq!(table[2][1..3], ["1000*", "2000.0*"], "{table:?}");
    // runs list: AWR's physical reads + writes per second as IOPS.
    let list = stdout(&["runs", "list"]);
    let iops: Vec<&str> = list
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().rev().nth(1).unwrap())
        .collect();
    assert_eq!(iops, ["1234", "2100", "505", "900"], "{list}");
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&["runs", "export", "--format", "json"])).unwrap();
    let reads: Vec<f64> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["db_physical_reads_per_s"].as_f64().unwrap())
        .collect();
    assert_eq!(reads, [1000.0, 2000.0, 500.0, 900.5]);
    assert_eq!(json[0]["db_physical_writes_per_s"], 234.0);
    // Without --model, report says where the numbers are.
    let out = dbio().arg("report").assert().code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert!(err.contains("4 of them imported from awr_info.sh"), "{err}");
    assert!(err.contains("--model reads|redo|writes|readwrite"), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
}

fn bad_rows_are_all_reported_then_the_file_is_refused() {
    let _store = temp_store();
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("awrinfo");
    let text = ARMS
        .replace("XFS/awr.txt.8|8|300", "XFS/awr.txt.8|0|300")
        .replace("XFS/awr.txt.16|16|300", "XFS/awr.txt.16|16|0")
        .replace("EXT4/awr.txt.8|8|", "EXT4/awr.txt.8|32|")
        .replace("|900.5|", "|9OO|");
    std::fs::write(&file, &text).unwrap();
    let out = dbio()
        .args(["import", "awr-info"])
        .arg(&file)
        .assert()
        .code(2);
    let err = String::from_utf8_lossy(&out.get_output().stderr).to_string();
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    let problems: Vec<&str> = err.trim_end().split("; [").collect();
    assert_eq!(problems.len(), 5, "{err}");
    for (got, want) in problems.iter().zip([
        "5 problems, nothing imported: [1] line 2, SESSIONS: SESSIONS is 0 but the file name \"XFS/awr.txt.8\" says 8",
        "2] line 2, SESSIONS: 0 sessions",
        "3] line 3, ELAPSED: 0 s",
        "4] line 4, SESSIONS: SESSIONS is 32 but the file name \"EXT4/awr.txt.8\" says 8",
        "5] line 5, PREADS: \"9OO\" is not a number",
    ]) {
        assert!(got.contains(want), "{want:?} in\n{err}");
    }
    let list = stdout(&["runs", "list"]);
    assert!(list.starts_with("no stored runs"), "{list}");
}

crate::tests! {
    slob_r_tables_are_reproduced_to_the_last_printed_digit,
    the_redo_model_shows_mib_per_second_and_json_keeps_full_precision,
    malformed_files_are_refused_with_line_and_column_and_nothing_is_stored,
    arms_in_directories_stay_apart_and_show_their_numbers,
    bad_rows_are_all_reported_then_the_file_is_refused,
}
