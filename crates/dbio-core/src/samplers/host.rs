//! Host counters: CPU time by state, context switches and interrupts from
//! /proc/stat, the load average from /proc/loadavg, and the dirty and
//! writeback page-cache totals from /proc/meminfo.
//!
//! CPU percentages are computed the way mpstat computes its "all" line
//! (sysstat 12): the interval's total is user + nice + system + idle +
//! iowait + irq + softirq + steal jiffies (guest time is already inside user
//! and nice, so it is not added again), `%user` excludes guest time and
//! `%nice` excludes guest-nice time, and a counter that went backwards (CPU
//! hot-plug) gives 0. iostat's `%system` is `system_pct + irq_pct +
//! softirq_pct`.

use std::io;

use serde::{Deserialize, Serialize};

use super::diskstats::{counter_delta, read_file};

/// Cumulative CPU time of all CPUs, in jiffies (USER_HZ), from the `cpu` line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuTimes {
    pub user: u64,
    pub nice: u64,
    pub system: u64,
    pub idle: u64,
    pub iowait: u64,
    pub irq: u64,
    pub softirq: u64,
    pub steal: u64,
    pub guest: u64,
    pub guest_nice: u64,
}

impl CpuTimes {
    /// All jiffies of the states that partition CPU time (guest excluded:
    /// it is counted in user and nice).
    pub fn total(&self) -> u64 {
        self.user
            + self.nice
            + self.system
            + self.idle
            + self.iowait
            + self.irq
            + self.softirq
            + self.steal
    }
}

/// One reading of the host counters and gauges.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostCounters {
    pub cpu: CpuTimes,
    /// Context switches since boot.
    pub ctxt: u64,
    /// Interrupts serviced since boot (the first number of the `intr` line).
    pub intr: u64,
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
    /// Page cache waiting to be written back, kB (meminfo `Dirty`).
    pub dirty_kib: u64,
    /// Page cache being written back now, kB (meminfo `Writeback`).
    pub writeback_kib: u64,
}

/// Host rates over one interval; the load average and the dirty and
/// writeback sizes are the values at the interval's end.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct HostRates {
    pub user_pct: f64,
    pub nice_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub irq_pct: f64,
    pub softirq_pct: f64,
    pub steal_pct: f64,
    pub idle_pct: f64,
    pub ctxt_per_s: f64,
    pub intr_per_s: f64,
    pub load1: f64,
    pub load5: f64,
    pub load15: f64,
    pub dirty_kib: f64,
    pub writeback_kib: f64,
}

/// The `cpu` line, `ctxt` and `intr` of /proc/stat text. Missing columns of
/// older kernels are 0; `None` if there is no `cpu` line.
pub(crate) fn parse_stat(text: &str) -> Option<(CpuTimes, u64, u64)> {
    let mut cpu = None;
    let (mut ctxt, mut intr) = (0, 0);
    for line in text.lines() {
        let mut it = line.split_ascii_whitespace();
        match it.next() {
            Some("cpu") => {
                let mut v = [0u64; 10];
                for (slot, tok) in v.iter_mut().zip(it) {
                    *slot = tok.parse().ok()?;
                }
                cpu = Some(CpuTimes {
                    user: v[0],
                    nice: v[1],
                    system: v[2],
                    idle: v[3],
                    iowait: v[4],
                    irq: v[5],
                    softirq: v[6],
                    steal: v[7],
                    guest: v[8],
                    guest_nice: v[9],
                });
            }
            Some("ctxt") => ctxt = it.next().and_then(|t| t.parse().ok()).unwrap_or(0),
            Some("intr") => intr = it.next().and_then(|t| t.parse().ok()).unwrap_or(0),
            _ => {}
        }
    }
    cpu.map(|c| (c, ctxt, intr))
}

/// The 1, 5 and 15 minute load averages of /proc/loadavg text.
pub(crate) fn parse_loadavg(text: &str) -> Option<[f64; 3]> {
    let mut it = text.split_ascii_whitespace();
    let mut v = [0.0; 3];
    for slot in &mut v {
        *slot = it.next()?.parse().ok()?;
    }
    Some(v)
}

/// `Dirty` and `Writeback` of /proc/meminfo text, in kB (0 when absent).
pub(crate) fn parse_meminfo(text: &str) -> (u64, u64) {
    let (mut dirty, mut writeback) = (0, 0);
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else {
            continue;
        };
        let slot = match key {
            "Dirty" => &mut dirty,
            "Writeback" => &mut writeback,
            _ => continue,
        };
        *slot = rest
            .split_ascii_whitespace()
            .next()
            .and_then(|t| t.parse().ok())
            .unwrap_or(0);
    }
    (dirty, writeback)
}

/// Read /proc/stat, /proc/loadavg and /proc/meminfo once each.
pub fn read() -> io::Result<HostCounters> {
    read_with(&mut String::new())
}

/// Like [`read`], reading through `buf` (its capacity is reused).
pub(crate) fn read_with(buf: &mut String) -> io::Result<HostCounters> {
    read_file("/proc/stat", buf)?;
    let (cpu, ctxt, intr) = parse_stat(buf)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "no cpu line in /proc/stat"))?;
    read_file("/proc/loadavg", buf)?;
    let [load1, load5, load15] = parse_loadavg(buf).unwrap_or_default();
    read_file("/proc/meminfo", buf)?;
    let (dirty_kib, writeback_kib) = parse_meminfo(buf);
    Ok(HostCounters {
        cpu,
        ctxt,
        intr,
        load1,
        load5,
        load15,
        dirty_kib,
        writeback_kib,
    })
}

/// Host rates between two readings `secs` seconds apart (gauges from `cur`).
pub fn rates(prev: &HostCounters, cur: &HostCounters, secs: f64) -> HostRates {
    let (p, c) = (&prev.cpu, &cur.cpu);
    let total = c.total().saturating_sub(p.total());
    let pct = |a: u64, b: u64| {
        if total == 0 || b < a {
            0.0
        } else {
            (b - a) as f64 * 100.0 / total as f64
        }
    };
    let per_s = |a: u64, b: u64| {
        if secs > 0.0 {
            counter_delta(a, b) as f64 / secs
        } else {
            0.0
        }
    };
    HostRates {
        user_pct: pct(
            p.user.saturating_sub(p.guest),
            c.user.saturating_sub(c.guest),
        ),
        nice_pct: pct(
            p.nice.saturating_sub(p.guest_nice),
            c.nice.saturating_sub(c.guest_nice),
        ),
        system_pct: pct(p.system, c.system),
        iowait_pct: pct(p.iowait, c.iowait),
        irq_pct: pct(p.irq, c.irq),
        softirq_pct: pct(p.softirq, c.softirq),
        steal_pct: pct(p.steal, c.steal),
        // No tick at all in the interval: the CPUs were idle (mpstat).
        idle_pct: if total == 0 {
            100.0
        } else {
            pct(p.idle, c.idle)
        },
        ctxt_per_s: per_s(prev.ctxt, cur.ctxt),
        intr_per_s: per_s(prev.intr, cur.intr),
        load1: cur.load1,
        load5: cur.load5,
        load15: cur.load15,
        dirty_kib: cur.dirty_kib as f64,
        writeback_kib: cur.writeback_kib as f64,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const STAT: &str = "cpu  213068 0 228223 338728 53397 0 13149 1155 0 0
cpu0 105466 0 105985 183639 27058 0 114 585 0 0
cpu1 107601 0 122237 155088 26338 0 13034 569 0 0
intr 13872482 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 34 0 0
ctxt 114233058
btime 1763843580
processes 18456
procs_running 2
procs_blocked 0
softirq 9120337 3 3062171 2 1254 0 0 1402 2745601 0 3309904
";

    const MEMINFO: &str = "MemTotal:       24684096 kB
MemFree:        20102244 kB
Dirty:                76 kB
Writeback:            12 kB
AnonPages:        290664 kB
WritebackTmp:        999 kB
";

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn parses_proc_stat() {
        let (cpu, ctxt, intr) = parse_stat(STAT).unwrap();
        assert_eq!(
            cpu,
            CpuTimes {
                user: 213068,
                nice: 0,
                system: 228223,
                idle: 338728,
                iowait: 53397,
                irq: 0,
                softirq: 13149,
                steal: 1155,
                guest: 0,
                guest_nice: 0,
            }
        );
        assert_eq!((ctxt, intr), (114233058, 13872482));
        // A 2.6.11 kernel's cpu line has 8 columns.
        let (old, _, _) = parse_stat("cpu 1 2 3 4 5 6 7 8\n").unwrap();
        assert_eq!((old.steal, old.guest, old.softirq), (8, 0, 7));
        assert!(parse_stat("intr 5\n").is_none());
    }

    #[test]
    fn parses_meminfo_and_loadavg() {
        // WritebackTmp must not be taken for Writeback.
        assert_eq!(parse_meminfo(MEMINFO), (76, 12));
        assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), (0, 0));
        assert_eq!(
            parse_loadavg("0.17 2.31 3.72 2/86 18456\n"),
            Some([0.17, 2.31, 3.72])
        );
        assert_eq!(parse_loadavg("0.17\n"), None);
    }

    #[test]
    fn reads_this_machine() {
        let h = read().unwrap();
        assert!(h.cpu.total() > 0 && h.ctxt > 0 && h.intr > 0, "{h:?}");
    }

    #[test]
    fn rates_like_mpstat() {
        let prev = HostCounters {
            cpu: CpuTimes {
                user: 1000,
                nice: 100,
                system: 500,
                idle: 5000,
                iowait: 200,
                irq: 10,
                softirq: 40,
                steal: 0,
                guest: 50,
                guest_nice: 0,
            },
            ctxt: 10_000,
            intr: u64::from(u32::MAX) - 499,
            load1: 0.5,
            ..HostCounters::default()
        };
        // 2 s on 2 CPUs at 100 Hz: 400 jiffies.
        let cur = HostCounters {
            cpu: CpuTimes {
                user: 1000 + 80,
                nice: 100 + 4,
                system: 500 + 60,
                idle: 5000 + 200,
                iowait: 200 + 40,
                irq: 10 + 2,
                softirq: 40 + 10,
                steal: 4,
                guest: 50 + 20,
                guest_nice: 0,
            },
            ctxt: 14_000,
            intr: 1500, // wrapped at 2^32: 2000 interrupts
            load1: 1.25,
            load5: 0.75,
            load15: 0.5,
            dirty_kib: 4096,
            writeback_kib: 128,
        };
        let r = rates(&prev, &cur, 2.0);
        assert!(close(r.user_pct, 15.0), "{r:?}"); // (80 - 20 guest) / 400
        assert!(close(r.nice_pct, 1.0), "{r:?}");
        assert!(close(r.system_pct, 15.0), "{r:?}");
        assert!(close(r.iowait_pct, 10.0), "{r:?}");
        assert!(close(r.irq_pct, 0.5), "{r:?}");
        assert!(close(r.softirq_pct, 2.5), "{r:?}");
        assert!(close(r.steal_pct, 1.0), "{r:?}");
        assert!(close(r.idle_pct, 50.0), "{r:?}");
        assert!(close(r.ctxt_per_s, 2000.0), "{r:?}");
        assert!(close(r.intr_per_s, 1000.0), "{r:?}");
        assert_eq!(
            (r.load1, r.load5, r.dirty_kib, r.writeback_kib),
            (1.25, 0.75, 4096.0, 128.0)
        );
        // No ticks: idle; a counter going backwards (hot-plug): 0, not negative.
        assert_eq!(rates(&prev, &prev, 1.0).idle_pct, 100.0);
        let mut back = cur;
        back.cpu.iowait = 0;
        assert_eq!(rates(&prev, &back, 2.0).iowait_pct, 0.0);
    }
}
