//! Block-device counters from /proc/diskstats and the extended statistics
//! `iostat -x` derives from them (sysstat 12+: r/s … %util).
//!
//! The line layout (Documentation/admin-guide/iostats.rst): `major minor
//! name` followed by 4 fields (partitions before 2.6.25), 11 (before 4.18),
//! 15 (4.18+: discards) or 17 (5.5+: flushes):
//!
//! | # | field | | # | field |
//! |---|---|---|---|---|
//! | 1 | reads completed | | 10 | ms spent doing I/O (`io_ticks`) |
//! | 2 | reads merged | | 11 | weighted ms doing I/O (`time_in_queue`) |
//! | 3 | sectors read | | 12 | discards completed |
//! | 4 | ms spent reading | | 13 | discards merged |
//! | 5 | writes completed | | 14 | sectors discarded |
//! | 6 | writes merged | | 15 | ms spent discarding |
//! | 7 | sectors written | | 16 | flush requests completed |
//! | 8 | ms spent writing | | 17 | ms spent flushing |
//! | 9 | I/Os in progress (a gauge) | | | |
//!
//! Sectors are always 512 bytes here, whatever the device's block size. The
//! kernel prints the counts as `unsigned long` (32 bits on 32-bit kernels)
//! and the millisecond fields as `unsigned int` (32 bits everywhere: they
//! wrap after 49.7 days of busy time), so differences are taken modulo 2^32
//! when the earlier value fits in 32 bits and modulo 2^64 otherwise — the
//! rule sysstat applies.
//!
//! The formulas in [`rates`] are iostat's (`write_ext_stat` and
//! `compute_ext_disk_stats` in sysstat 12): per-second values divide by the
//! interval; `r_await` is read ms per completed read; `rareq-sz` is kB per
//! read; `%rrqm` is merges / (merges + reads); `aqu-sz` is weighted ms per
//! ms; `%util` is busy ms per ms, capped at 100 (the busy time is counted in
//! jiffies, so a one-second interval can otherwise read a little over 100).

use std::collections::HashMap;
use std::io::{self, Read};

use serde::{Deserialize, Serialize};

/// Where the kernel publishes the counters.
pub(crate) const PATH: &str = "/proc/diskstats";

/// One device's cumulative counters, as read from a line of /proc/diskstats.
/// Fields the kernel's format lacks are zero (see `fields`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiskCounters {
    pub major: u32,
    pub minor: u32,
    pub reads: u64,
    pub reads_merged: u64,
    pub sectors_read: u64,
    pub read_ms: u64,
    pub writes: u64,
    pub writes_merged: u64,
    pub sectors_written: u64,
    pub write_ms: u64,
    /// I/Os in flight when the line was printed (a gauge, not a counter).
    pub in_flight: u64,
    /// Milliseconds with at least one I/O in flight (`io_ticks`).
    pub io_ms: u64,
    /// Sum of every I/O's time in flight, in ms (`time_in_queue`).
    pub weighted_ms: u64,
    pub discards: u64,
    pub discards_merged: u64,
    pub sectors_discarded: u64,
    pub discard_ms: u64,
    pub flushes: u64,
    pub flush_ms: u64,
    /// How many statistics fields the line had: 4, 11, 15 or 17.
    pub fields: u8,
}

/// iostat's extended statistics for one device over one interval.
/// Sizes in kB are kibibytes (iostat's "kB": 2 sectors).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct DeviceRates {
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub d_per_s: f64,
    pub f_per_s: f64,
    pub rkib_per_s: f64,
    pub wkib_per_s: f64,
    pub dkib_per_s: f64,
    pub rrqm_per_s: f64,
    pub wrqm_per_s: f64,
    pub rrqm_pct: f64,
    pub wrqm_pct: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub d_await_ms: f64,
    pub f_await_ms: f64,
    pub rareq_sz_kib: f64,
    pub wareq_sz_kib: f64,
    pub aqu_sz: f64,
    pub util_pct: f64,
}

/// Parse one /proc/diskstats line into (device name, counters).
/// `None` for a line that is not in any known format.
pub(crate) fn parse_line(line: &str) -> Option<(&str, DiskCounters)> {
    let mut it = line.split_ascii_whitespace();
    let major = it.next()?.parse().ok()?;
    let minor = it.next()?.parse().ok()?;
    let name = it.next()?;
    let c = parse_fields(major, minor, it)?;
    Some((name, c))
}

/// The name field of a line, without parsing the numbers.
fn line_name(line: &str) -> Option<&str> {
    let mut it = line.split_ascii_whitespace();
    it.next()?;
    it.next()?;
    it.next()
}

fn parse_fields<'a>(
    major: u32,
    minor: u32,
    mut it: impl Iterator<Item = &'a str>,
) -> Option<DiskCounters> {
    let mut v = [0u64; 17];
    let mut n = 0;
    for (i, tok) in it.by_ref().take(17).enumerate() {
        v[i] = match tok.parse::<u64>() {
            Ok(x) => x,
            // Old kernels could print a negative in-flight count.
            Err(_) if i == 8 && tok.parse::<i64>().is_ok() => 0,
            Err(_) => return None,
        };
        n = i + 1;
    }
    let mut c = DiskCounters {
        major,
        minor,
        fields: n as u8,
        ..DiskCounters::default()
    };
    match n {
        4 => {
            // Partitions on kernels before 2.6.25: reads, sectors read,
            // writes, sectors written.
            c.reads = v[0];
            c.sectors_read = v[1];
            c.writes = v[2];
            c.sectors_written = v[3];
            return Some(c);
        }
        11 | 15 | 17 => {}
        _ => return None,
    }
    c.reads = v[0];
    c.reads_merged = v[1];
    c.sectors_read = v[2];
    c.read_ms = v[3];
    c.writes = v[4];
    c.writes_merged = v[5];
    c.sectors_written = v[6];
    c.write_ms = v[7];
    c.in_flight = v[8];
    c.io_ms = v[9];
    c.weighted_ms = v[10];
    c.discards = v[11];
    c.discards_merged = v[12];
    c.sectors_discarded = v[13];
    c.discard_ms = v[14];
    c.flushes = v[15];
    c.flush_ms = v[16];
    Some(c)
}

/// Parse the whole file's text: every device and partition by kernel name.
pub fn parse(text: &str) -> HashMap<String, DiskCounters> {
    text.lines()
        .filter_map(parse_line)
        .map(|(name, c)| (name.to_string(), c))
        .collect()
}

/// Parse only the devices in `names`, into `out` (same order; `None` for a
/// device the text does not list). Allocates nothing.
pub(crate) fn parse_selected(text: &str, names: &[String], out: &mut [Option<DiskCounters>]) {
    out.iter_mut().for_each(|o| *o = None);
    for line in text.lines() {
        let Some(name) = line_name(line) else {
            continue;
        };
        if let Some(i) = names.iter().position(|n| n == name) {
            out[i] = parse_line(line).map(|(_, c)| c);
        }
    }
}

/// One read of /proc/diskstats: every device and partition by kernel name.
pub fn read_all() -> io::Result<HashMap<String, DiskCounters>> {
    Ok(parse(&std::fs::read_to_string(PATH)?))
}

/// Read /proc/diskstats into `buf` (cleared first, capacity reused).
pub(crate) fn read_text(buf: &mut String) -> io::Result<()> {
    read_file(PATH, buf)
}

/// Read a /proc file into `buf`, reusing its capacity.
pub(crate) fn read_file(path: &str, buf: &mut String) -> io::Result<()> {
    buf.clear();
    std::fs::File::open(path)?.read_to_string(buf)?;
    Ok(())
}

/// `cur - prev` for a kernel counter that may have wrapped: modulo 2^32 when
/// the earlier value fits in 32 bits (an `unsigned int`, or an `unsigned
/// long` on a 32-bit kernel), modulo 2^64 otherwise.
pub(crate) fn counter_delta(prev: u64, cur: u64) -> u64 {
    if cur >= prev {
        cur - prev
    } else if prev <= u64::from(u32::MAX) {
        cur.wrapping_sub(prev) & u64::from(u32::MAX)
    } else {
        cur.wrapping_sub(prev)
    }
}

/// Counter differences between two readings, as floats so that window totals
/// can also be rebuilt from per-interval rates (see [`DiskDelta::from_rates`]).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DiskDelta {
    pub reads: f64,
    pub reads_merged: f64,
    pub sectors_read: f64,
    pub read_ms: f64,
    pub writes: f64,
    pub writes_merged: f64,
    pub sectors_written: f64,
    pub write_ms: f64,
    pub io_ms: f64,
    pub weighted_ms: f64,
    pub discards: f64,
    pub sectors_discarded: f64,
    pub discard_ms: f64,
    pub flushes: f64,
    pub flush_ms: f64,
}

impl DiskDelta {
    /// The differences `cur - prev`, wrap-aware. A device whose counters all
    /// went down (removed and added again) counts from zero, as iostat does.
    pub fn between(prev: &DiskCounters, cur: &DiskCounters) -> DiskDelta {
        let zero = DiskCounters::default();
        let prev = if was_reset(prev, cur) { &zero } else { prev };
        let d = |a: u64, b: u64| counter_delta(a, b) as f64;
        DiskDelta {
            reads: d(prev.reads, cur.reads),
            reads_merged: d(prev.reads_merged, cur.reads_merged),
            sectors_read: d(prev.sectors_read, cur.sectors_read),
            read_ms: d(prev.read_ms, cur.read_ms),
            writes: d(prev.writes, cur.writes),
            writes_merged: d(prev.writes_merged, cur.writes_merged),
            sectors_written: d(prev.sectors_written, cur.sectors_written),
            write_ms: d(prev.write_ms, cur.write_ms),
            io_ms: d(prev.io_ms, cur.io_ms),
            weighted_ms: d(prev.weighted_ms, cur.weighted_ms),
            discards: d(prev.discards, cur.discards),
            sectors_discarded: d(prev.sectors_discarded, cur.sectors_discarded),
            discard_ms: d(prev.discard_ms, cur.discard_ms),
            flushes: d(prev.flushes, cur.flushes),
            flush_ms: d(prev.flush_ms, cur.flush_ms),
        }
    }

    /// iostat's extended statistics for these differences over `secs`.
    pub fn rates(&self, secs: f64) -> DeviceRates {
        if secs <= 0.0 || !secs.is_finite() {
            return DeviceRates::default();
        }
        let per = |n: f64, d: f64| if d > 0.0 { n / d } else { 0.0 };
        let pct = |merged: f64, done: f64| per(merged * 100.0, merged + done);
        DeviceRates {
            r_per_s: self.reads / secs,
            w_per_s: self.writes / secs,
            d_per_s: self.discards / secs,
            f_per_s: self.flushes / secs,
            rkib_per_s: self.sectors_read / 2.0 / secs,
            wkib_per_s: self.sectors_written / 2.0 / secs,
            dkib_per_s: self.sectors_discarded / 2.0 / secs,
            rrqm_per_s: self.reads_merged / secs,
            wrqm_per_s: self.writes_merged / secs,
            rrqm_pct: pct(self.reads_merged, self.reads),
            wrqm_pct: pct(self.writes_merged, self.writes),
            r_await_ms: per(self.read_ms, self.reads),
            w_await_ms: per(self.write_ms, self.writes),
            d_await_ms: per(self.discard_ms, self.discards),
            f_await_ms: per(self.flush_ms, self.flushes),
            rareq_sz_kib: per(self.sectors_read / 2.0, self.reads),
            wareq_sz_kib: per(self.sectors_written / 2.0, self.writes),
            aqu_sz: self.weighted_ms / 1000.0 / secs,
            util_pct: (self.io_ms / 10.0 / secs).min(100.0),
        }
    }

    /// The differences that `rates` over `secs` came from (exact up to float
    /// rounding, except a %util that was capped at 100).
    pub(crate) fn from_rates(r: &DeviceRates, secs: f64) -> DiskDelta {
        let reads = r.r_per_s * secs;
        let writes = r.w_per_s * secs;
        let discards = r.d_per_s * secs;
        let flushes = r.f_per_s * secs;
        DiskDelta {
            reads,
            reads_merged: r.rrqm_per_s * secs,
            sectors_read: r.rkib_per_s * 2.0 * secs,
            read_ms: r.r_await_ms * reads,
            writes,
            writes_merged: r.wrqm_per_s * secs,
            sectors_written: r.wkib_per_s * 2.0 * secs,
            write_ms: r.w_await_ms * writes,
            io_ms: r.util_pct * 10.0 * secs,
            weighted_ms: r.aqu_sz * 1000.0 * secs,
            discards,
            sectors_discarded: r.dkib_per_s * 2.0 * secs,
            discard_ms: r.d_await_ms * discards,
            flushes,
            flush_ms: r.f_await_ms * flushes,
        }
    }

    /// Add another interval's differences.
    pub fn add(&mut self, o: &DiskDelta) {
        self.reads += o.reads;
        self.reads_merged += o.reads_merged;
        self.sectors_read += o.sectors_read;
        self.read_ms += o.read_ms;
        self.writes += o.writes;
        self.writes_merged += o.writes_merged;
        self.sectors_written += o.sectors_written;
        self.write_ms += o.write_ms;
        self.io_ms += o.io_ms;
        self.weighted_ms += o.weighted_ms;
        self.discards += o.discards;
        self.sectors_discarded += o.sectors_discarded;
        self.discard_ms += o.discard_ms;
        self.flushes += o.flushes;
        self.flush_ms += o.flush_ms;
    }
}

/// sysstat's test for a device that was removed and registered again: fewer
/// I/Os than before, and every sector count lower than before (or zero before).
fn was_reset(prev: &DiskCounters, cur: &DiskCounters) -> bool {
    let ios = |c: &DiskCounters| {
        c.reads
            .wrapping_add(c.writes)
            .wrapping_add(c.discards)
            .wrapping_add(c.flushes)
    };
    let lower = |p: u64, c: u64| p == 0 || c < p;
    ios(cur) < ios(prev)
        && lower(prev.sectors_read, cur.sectors_read)
        && lower(prev.sectors_written, cur.sectors_written)
        && lower(prev.sectors_discarded, cur.sectors_discarded)
}

/// iostat -x statistics between two readings `secs` seconds apart.
pub fn rates(prev: &DiskCounters, cur: &DiskCounters, secs: f64) -> DeviceRates {
    DiskDelta::between(prev, cur).rates(secs)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Real lines: kernel 6.x (17 fields), 4.19 (15), 4.14 (11), 2.6.18 partition (4).
    const V6: &str = "254       0 vda 316378 188543 90175710 229995 27772227 68751 724339939 4327968 0 590316 4572614 31472 30 146153984 13423 18308 1227";
    const V419: &str =
        "   8       0 sda 10299 2911 741098 6568 5383 6316 213888 9480 0 9072 14664 12 0 2048 3";
    const V414: &str =
        "   8       1 sda1 50483 13462 2869610 37708 30143 28911 1420546 86924 0 38024 124636";
    const V26_PART: &str = "   3    1 hda1 35486 38030 38030 38030";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-9 * b.abs().max(1.0)
    }

    #[test]
    fn parses_kernel_5_5_line_with_flush_fields() {
        let (name, c) = parse_line(V6).unwrap();
        assert_eq!(name, "vda");
        assert_eq!((c.major, c.minor, c.fields), (254, 0, 17));
        assert_eq!(
            (c.reads, c.reads_merged, c.sectors_read, c.read_ms),
            (316378, 188543, 90175710, 229995)
        );
        assert_eq!(
            (c.writes, c.writes_merged, c.sectors_written, c.write_ms),
            (27772227, 68751, 724339939, 4327968)
        );
        assert_eq!((c.in_flight, c.io_ms, c.weighted_ms), (0, 590316, 4572614));
        assert_eq!(
            (
                c.discards,
                c.discards_merged,
                c.sectors_discarded,
                c.discard_ms
            ),
            (31472, 30, 146153984, 13423)
        );
        assert_eq!((c.flushes, c.flush_ms), (18308, 1227));
    }

    #[test]
    fn parses_kernel_4_18_line_with_discards_and_no_flushes() {
        let (name, c) = parse_line(V419).unwrap();
        assert_eq!(name, "sda");
        assert_eq!(c.fields, 15);
        assert_eq!((c.io_ms, c.weighted_ms), (9072, 14664));
        assert_eq!(
            (
                c.discards,
                c.discards_merged,
                c.sectors_discarded,
                c.discard_ms
            ),
            (12, 0, 2048, 3)
        );
        assert_eq!((c.flushes, c.flush_ms), (0, 0));
    }

    #[test]
    fn parses_old_14_column_line() {
        let (name, c) = parse_line(V414).unwrap();
        assert_eq!((name, c.fields, c.minor), ("sda1", 11, 1));
        assert_eq!((c.reads, c.writes, c.weighted_ms), (50483, 30143, 124636));
        assert_eq!((c.discards, c.flushes), (0, 0));
    }

    #[test]
    fn parses_old_partition_format_and_rejects_garbage() {
        let (name, c) = parse_line(V26_PART).unwrap();
        assert_eq!(name, "hda1");
        assert_eq!(
            (
                c.reads,
                c.sectors_read,
                c.writes,
                c.sectors_written,
                c.fields
            ),
            (35486, 38030, 38030, 38030, 4)
        );
        assert!(parse_line("").is_none());
        assert!(parse_line("8 0 sda 1 2 3").is_none());
        assert!(parse_line("8 0 sda 1 2 3 x 5 6 7 8 9 10 11").is_none());
        // A negative in-flight count (old kernels) is read as 0.
        let neg = "8 0 sda 1 2 3 4 5 6 7 8 -1 10 11";
        assert_eq!(parse_line(neg).unwrap().1.in_flight, 0);
    }

    #[test]
    fn parse_and_parse_selected_agree() {
        let text = format!(
            "{V6}\n{V419}\n{V414}\n\n   7       0 loop0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n"
        );
        let all = parse(&text);
        assert_eq!(all.len(), 4);
        let names = vec!["sda1".to_string(), "nvme0n1".into(), "vda".into()];
        let mut out = [Some(DiskCounters::default()); 3];
        parse_selected(&text, &names, &mut out);
        assert_eq!(out[0], Some(all["sda1"]));
        assert_eq!(out[1], None);
        assert_eq!(out[2], Some(all["vda"]));
    }

    #[test]
    fn reads_this_machines_diskstats() {
        let all = read_all().unwrap();
        assert!(!all.is_empty());
        assert!(all.values().all(|c| [4, 11, 15, 17].contains(&c.fields)));
    }

    fn sample() -> (DiskCounters, DiskCounters) {
        let prev = DiskCounters {
            reads: 1000,
            reads_merged: 10,
            sectors_read: 80_000,
            read_ms: 500,
            writes: 2000,
            writes_merged: 100,
            sectors_written: 160_000,
            write_ms: 4000,
            io_ms: 10_000,
            weighted_ms: 20_000,
            discards: 5,
            sectors_discarded: 1000,
            discard_ms: 10,
            flushes: 50,
            flush_ms: 100,
            fields: 17,
            ..DiskCounters::default()
        };
        // Over 2 s: 400 reads of 8 KiB (16 sectors), 30 merged, 600 ms;
        // 600 writes of 16 KiB, 200 merged, 1800 ms; 2 discards of 1 MiB,
        // 8 ms; 10 flushes, 25 ms; busy 1500 ms; queue 3000 ms.
        let cur = DiskCounters {
            reads: 1400,
            reads_merged: 40,
            sectors_read: 80_000 + 400 * 16,
            read_ms: 1100,
            writes: 2600,
            writes_merged: 300,
            sectors_written: 160_000 + 600 * 32,
            write_ms: 5800,
            io_ms: 11_500,
            weighted_ms: 23_000,
            discards: 7,
            sectors_discarded: 1000 + 2 * 2048,
            discard_ms: 18,
            flushes: 60,
            flush_ms: 125,
            ..prev
        };
        (prev, cur)
    }

    #[test]
    fn rates_match_hand_computed_values() {
        let (prev, cur) = sample();
        let r = rates(&prev, &cur, 2.0);
        let want = DeviceRates {
            r_per_s: 200.0,
            w_per_s: 300.0,
            d_per_s: 1.0,
            f_per_s: 5.0,
            rkib_per_s: 1600.0, // 6400 sectors = 3200 KiB over 2 s
            wkib_per_s: 4800.0, // 19200 sectors = 9600 KiB
            dkib_per_s: 1024.0, // 4096 sectors = 2 MiB over 2 s
            rrqm_per_s: 15.0,
            wrqm_per_s: 100.0,
            rrqm_pct: 100.0 * 30.0 / 430.0,
            wrqm_pct: 25.0, // 200 / (200 + 600)
            r_await_ms: 1.5,
            w_await_ms: 3.0,
            d_await_ms: 4.0,
            f_await_ms: 2.5,
            rareq_sz_kib: 8.0,
            wareq_sz_kib: 16.0,
            aqu_sz: 1.5, // 3000 ms of queue per 2000 ms
            util_pct: 75.0,
        };
        assert_eq!(r, want);
    }

    #[test]
    fn wrapped_counters_give_the_true_difference() {
        let (mut prev, mut cur) = sample();
        // write_ms is an unsigned int in the kernel: wraps at 2^32.
        prev.write_ms = u64::from(u32::MAX) - 799; // 800 ms to the wrap
        cur.write_ms = 1000; // 1800 ms in all
        // io_ms likewise.
        prev.io_ms = u64::from(u32::MAX);
        cur.io_ms = 1499; // 1500 ms
        // A 64-bit sector counter wraps at 2^64.
        prev.sectors_read = u64::MAX - 1399;
        cur.sectors_read = 5000; // 1400 + 5000 = 6400 sectors
        // A 32-bit kernel's unsigned long read counter.
        prev.reads = u64::from(u32::MAX) - 99;
        cur.reads = 300; // 400 reads
        let r = rates(&prev, &cur, 2.0);
        assert!(close(r.w_await_ms, 3.0), "{r:?}");
        assert!(close(r.util_pct, 75.0), "{r:?}");
        assert!(close(r.rkib_per_s, 1600.0), "{r:?}");
        assert!(close(r.r_per_s, 200.0), "{r:?}");
        assert!(close(r.r_await_ms, 1.5), "{r:?}");
        assert_eq!(counter_delta(u64::MAX, 0), 1);
        assert_eq!(counter_delta(u64::from(u32::MAX), 0), 1);
        assert_eq!(counter_delta(5, 5), 0);
    }

    #[test]
    fn util_is_capped_at_100_and_idle_device_is_all_zero() {
        let (prev, mut cur) = sample();
        cur.io_ms = prev.io_ms + 2010; // 2010 busy ms in 2 s (jiffy rounding)
        assert_eq!(rates(&prev, &cur, 2.0).util_pct, 100.0);
        cur.io_ms = prev.io_ms + 1990;
        assert!(close(rates(&prev, &cur, 2.0).util_pct, 99.5));
        assert_eq!(rates(&prev, &prev, 1.0), DeviceRates::default());
        assert_eq!(rates(&prev, &cur, 0.0), DeviceRates::default());
    }

    #[test]
    fn a_device_registered_again_counts_from_zero() {
        let (prev, _) = sample();
        let fresh = DiskCounters {
            reads: 10,
            sectors_read: 160,
            writes: 0,
            fields: 17,
            ..DiskCounters::default()
        };
        let r = rates(&prev, &fresh, 1.0);
        assert_eq!((r.r_per_s, r.rkib_per_s, r.w_per_s), (10.0, 80.0, 0.0));
    }

    #[test]
    fn rates_can_be_turned_back_into_differences() {
        let (prev, cur) = sample();
        let d = DiskDelta::between(&prev, &cur);
        let back = DiskDelta::from_rates(&d.rates(2.0), 2.0);
        for (a, b) in [
            (back.reads, d.reads),
            (back.sectors_written, d.sectors_written),
            (back.read_ms, d.read_ms),
            (back.write_ms, d.write_ms),
            (back.flush_ms, d.flush_ms),
            (back.weighted_ms, d.weighted_ms),
            (back.io_ms, d.io_ms),
        ] {
            assert!(close(a, b), "{a} {b}");
        }
    }
}
