//! Device and host telemetry beside a run: what iostat -x and mpstat would
//! have shown, recorded by dbio itself.
//!
//! The run loop makes one [`Telemetry`] for the devices of the target's chain
//! (`target::chain::Chain::devices`), calls [`Telemetry::sample`] once a second
//! for the per-second series, and [`Telemetry::mark`] at the end of the ramp
//! and at the end of the window:
//!
//! ```no_run
//! # use dbio_core::samplers::telemetry::{Telemetry, summary};
//! let mut tele = Telemetry::start(vec!["vda".into()]);
//! let ramp_end = tele.mark();
//! let point = tele.sample(1.0); // each second
//! let window_end = tele.mark();
//! let window = summary(&ramp_end, &window_end); // exact window averages
//! ```
//!
//! A summary is computed from the counters at the two marks, so it is the
//! window's true average (total reads / window seconds, total read ms / total
//! reads, …), not a mean of per-second values. [`average`] rebuilds the same
//! from a stretch of per-second points when no marks were taken: rates are
//! turned back into counter differences (r/s × seconds, r_await × reads, …),
//! which is exact as long as the points cover the stretch without gaps.
//!
//! Gauges (load average, dirty and writeback kB) have no counters: a summary
//! gives their mean over every reading from the first mark to the second.

use serde::{Deserialize, Serialize};

use super::diskstats::{self, DeviceRates, DiskCounters, DiskDelta};
use super::host::{self, HostCounters, HostRates};
use crate::measure::clock::now_ns;

/// One device's rates in a point or summary; `None` when the device was not
/// in /proc/diskstats at one of the two readings (removed, or not yet added).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DeviceSample {
    pub name: String,
    pub rates: Option<DeviceRates>,
}

/// Rates over one sampling interval, ending `t_s` seconds into the run.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TelemetryPoint {
    /// The caller's time label for the end of the interval.
    pub t_s: f64,
    /// The interval's length measured on the monotonic clock.
    pub interval_s: f64,
    pub host: HostRates,
    pub devices: Vec<DeviceSample>,
}

/// Averages over a window.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TelemetrySummary {
    /// The window's length.
    pub seconds: f64,
    pub host: HostRates,
    pub devices: Vec<DeviceSample>,
}

/// Running sums of the gauges over every reading taken so far.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct Gauges {
    readings: u64,
    load1: f64,
    load5: f64,
    load15: f64,
    dirty_kib: f64,
    writeback_kib: f64,
}

impl Gauges {
    fn add(&mut self, h: &HostCounters) {
        self.readings += 1;
        self.load1 += h.load1;
        self.load5 += h.load5;
        self.load15 += h.load15;
        self.dirty_kib += h.dirty_kib as f64;
        self.writeback_kib += h.writeback_kib as f64;
    }
}

/// The counters at one moment (a [`Telemetry::mark`]).
#[derive(Clone, Debug)]
pub struct Snapshot {
    at_ns: u64,
    names: Vec<String>,
    host: Option<HostCounters>,
    disks: Vec<Option<DiskCounters>>,
    /// Gauge sums including this reading.
    gauges: Gauges,
}

/// One reading of everything, into reused buffers.
#[derive(Clone, Debug)]
struct Reading {
    at_ns: u64,
    host: Option<HostCounters>,
    disks: Vec<Option<DiskCounters>>,
}

/// The sampler: keeps the previous reading and the read buffer between calls.
pub struct Telemetry {
    names: Vec<String>,
    prev: Reading,
    next: Reading,
    gauges: Gauges,
    buf: String,
}

impl Telemetry {
    /// Start sampling `devices` (kernel names, e.g. "vda", "loop2"): takes
    /// the first reading. Devices missing from /proc/diskstats, and files
    /// that cannot be read, give `None` rates and zero host rates, not errors.
    pub fn start(devices: Vec<String>) -> Telemetry {
        let n = devices.len();
        let empty = Reading {
            at_ns: 0,
            host: None,
            disks: vec![None; n],
        };
        let mut t = Telemetry {
            names: devices,
            prev: empty.clone(),
            next: empty,
            gauges: Gauges::default(),
            buf: String::with_capacity(16 << 10),
        };
        t.read_next();
        std::mem::swap(&mut t.prev, &mut t.next);
        t
    }

    /// The devices sampled, in the order of every point's `devices`.
    pub fn devices(&self) -> &[String] {
        &self.names
    }

    /// Take a reading into `self.next` and add its gauges.
    fn read_next(&mut self) {
        self.next.host = host::read_with(&mut self.buf).ok();
        if diskstats::read_text(&mut self.buf).is_ok() {
            diskstats::parse_selected(&self.buf, &self.names, &mut self.next.disks);
        } else {
            self.next.disks.iter_mut().for_each(|d| *d = None);
        }
        self.next.at_ns = now_ns();
        if let Some(h) = &self.next.host {
            self.gauges.add(h);
        }
    }

    /// Rates since the previous `sample` (or `start`), labelled `t_s`.
    /// Reads /proc/stat, /proc/loadavg, /proc/meminfo and /proc/diskstats
    /// once each.
    pub fn sample(&mut self, t_s: f64) -> TelemetryPoint {
        self.read_next();
        let secs = self.next.at_ns.saturating_sub(self.prev.at_ns) as f64 / 1e9;
        let point = TelemetryPoint {
            t_s,
            interval_s: secs,
            host: host_rates(self.prev.host.as_ref(), self.next.host.as_ref(), secs),
            devices: self
                .names
                .iter()
                .zip(self.prev.disks.iter().zip(&self.next.disks))
                .map(|(name, (p, c))| DeviceSample {
                    name: name.clone(),
                    rates: p
                        .zip(c.as_ref())
                        .map(|(p, c)| diskstats::rates(&p, c, secs)),
                })
                .collect(),
        };
        std::mem::swap(&mut self.prev, &mut self.next);
        point
    }

    /// Take a reading now and return it as a window edge. Does not change
    /// what the next [`sample`](Telemetry::sample) measures from.
    pub fn mark(&mut self) -> Snapshot {
        self.read_next();
        Snapshot {
            at_ns: self.next.at_ns,
            names: self.names.clone(),
            host: self.next.host,
            disks: self.next.disks.clone(),
            gauges: self.gauges,
        }
    }
}

fn host_rates(prev: Option<&HostCounters>, cur: Option<&HostCounters>, secs: f64) -> HostRates {
    match (prev, cur) {
        (Some(p), Some(c)) => host::rates(p, c, secs),
        _ => HostRates::default(),
    }
}

/// Exact averages between two marks of the same [`Telemetry`] (devices are
/// matched by name, in `from`'s order).
pub fn summary(from: &Snapshot, to: &Snapshot) -> TelemetrySummary {
    let secs = to.at_ns.saturating_sub(from.at_ns) as f64 / 1e9;
    let mut host = host_rates(from.host.as_ref(), to.host.as_ref(), secs);
    // Gauges: the mean of the readings from `from` to `to`, both included.
    let (a, b) = (&from.gauges, &to.gauges);
    if let Some(f) = &from.host
        && b.readings > a.readings
    {
        let n = (b.readings - a.readings + 1) as f64;
        host.load1 = (b.load1 - a.load1 + f.load1) / n;
        host.load5 = (b.load5 - a.load5 + f.load5) / n;
        host.load15 = (b.load15 - a.load15 + f.load15) / n;
        host.dirty_kib = (b.dirty_kib - a.dirty_kib + f.dirty_kib as f64) / n;
        host.writeback_kib = (b.writeback_kib - a.writeback_kib + f.writeback_kib as f64) / n;
    }
    let devices = from
        .names
        .iter()
        .zip(&from.disks)
        .map(|(name, p)| {
            let c = to
                .names
                .iter()
                .position(|n| n == name)
                .and_then(|i| to.disks[i].as_ref());
            DeviceSample {
                name: name.clone(),
                rates: p.as_ref().zip(c).map(|(p, c)| diskstats::rates(p, c, secs)),
            }
        })
        .collect();
    TelemetrySummary {
        seconds: secs,
        host,
        devices,
    }
}

/// Averages over the points whose interval's midpoint lies in
/// [`from_s`, `to_s`], rebuilt from the rates as counter differences: equal
/// to [`summary`] between the first point's start and the last point's end
/// when the points follow each other without gaps. CPU percentages, context
/// switch and interrupt rates and gauges are weighted by interval length.
/// Devices follow the first point's order; a device's intervals without
/// rates are left out of its average.
pub fn average(points: &[TelemetryPoint], from_s: f64, to_s: f64) -> TelemetrySummary {
    let chosen: Vec<&TelemetryPoint> = points
        .iter()
        .filter(|p| {
            let mid = p.t_s - p.interval_s / 2.0;
            p.interval_s > 0.0 && mid >= from_s && mid <= to_s
        })
        .collect();
    let Some(first) = chosen.first() else {
        return TelemetrySummary::default();
    };
    let seconds: f64 = chosen.iter().map(|p| p.interval_s).sum();
    let mut host = HostRates::default();
    for p in &chosen {
        let w = p.interval_s / seconds;
        let (h, o) = (&mut host, &p.host);
        h.user_pct += o.user_pct * w;
        h.nice_pct += o.nice_pct * w;
        h.system_pct += o.system_pct * w;
        h.iowait_pct += o.iowait_pct * w;
        h.irq_pct += o.irq_pct * w;
        h.softirq_pct += o.softirq_pct * w;
        h.steal_pct += o.steal_pct * w;
        h.idle_pct += o.idle_pct * w;
        h.ctxt_per_s += o.ctxt_per_s * w;
        h.intr_per_s += o.intr_per_s * w;
        h.load1 += o.load1 * w;
        h.load5 += o.load5 * w;
        h.load15 += o.load15 * w;
        h.dirty_kib += o.dirty_kib * w;
        h.writeback_kib += o.writeback_kib * w;
    }
    let devices = first
        .devices
        .iter()
        .map(|d| {
            let mut total = DiskDelta::default();
            let mut secs = 0.0;
            for p in &chosen {
                let rates = p.devices.iter().find(|x| x.name == d.name);
                if let Some(r) = rates.and_then(|x| x.rates.as_ref()) {
                    total.add(&DiskDelta::from_rates(r, p.interval_s));
                    secs += p.interval_s;
                }
            }
            DeviceSample {
                name: d.name.clone(),
                rates: (secs > 0.0).then(|| total.rates(secs)),
            }
        })
        .collect();
    TelemetrySummary {
        seconds,
        host,
        devices,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(t_s: f64, interval_s: f64, r_per_s: f64, r_await: f64, util: f64) -> TelemetryPoint {
        TelemetryPoint {
            t_s,
            interval_s,
            host: HostRates {
                user_pct: r_per_s / 10.0,
                idle_pct: 100.0 - r_per_s / 10.0,
                load1: util,
                ..HostRates::default()
            },
            devices: vec![DeviceSample {
                name: "vda".into(),
                rates: Some(DeviceRates {
                    r_per_s,
                    rkib_per_s: r_per_s * 8.0,
                    r_await_ms: r_await,
                    rareq_sz_kib: 8.0,
                    util_pct: util,
                    ..DeviceRates::default()
                }),
            }],
        }
    }

    #[test]
    fn average_is_the_window_total_not_the_mean_of_seconds() {
        // 100 reads at 1 ms, then 300 reads at 3 ms: 400 reads, 1000 ms of
        // read time: r_await 2.5 ms (the mean of the seconds would say 2).
        let pts = [
            point(1.0, 1.0, 999.0, 9.0, 10.0), // ramp: left out
            point(2.0, 1.0, 100.0, 1.0, 20.0),
            point(3.0, 1.0, 300.0, 3.0, 60.0),
            point(4.0, 1.0, 999.0, 9.0, 10.0), // after the window
        ];
        let s = average(&pts, 1.0, 3.0);
        assert_eq!(s.seconds, 2.0);
        let r = s.devices[0].rates.as_ref().unwrap();
        assert!((r.r_per_s - 200.0).abs() < 1e-9, "{r:?}");
        assert!((r.r_await_ms - 2.5).abs() < 1e-9, "{r:?}");
        assert!((r.rkib_per_s - 1600.0).abs() < 1e-9, "{r:?}");
        assert!((r.rareq_sz_kib - 8.0).abs() < 1e-9, "{r:?}");
        assert!((r.util_pct - 40.0).abs() < 1e-9, "{r:?}");
        assert!((s.host.user_pct - 20.0).abs() < 1e-9, "{:?}", s.host);
        assert!((s.host.load1 - 40.0).abs() < 1e-9, "{:?}", s.host);
        assert_eq!(average(&pts, 10.0, 20.0), TelemetrySummary::default());
    }

    #[test]
    fn a_device_that_disappears_has_no_rates() {
        let mut t = Telemetry::start(vec!["no-such-device-dbio".into()]);
        let p = t.sample(1.0);
        assert_eq!(p.devices.len(), 1);
        assert_eq!(p.devices[0].rates, None);
        let s = average(&[p], 0.0, 2.0);
        assert_eq!(s.devices[0].rates, None);
    }

    #[test]
    fn marks_give_exact_window_rates_and_gauge_means() {
        let dev = diskstats::read_all()
            .unwrap()
            .into_keys()
            .min()
            .expect("some block device");
        let mut t = Telemetry::start(vec![dev.clone()]);
        let a = t.mark();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let p = t.sample(0.03);
        let b = t.mark();
        let s = summary(&a, &b);
        assert!(s.seconds >= 0.03 && s.seconds < 5.0, "{s:?}");
        assert_eq!(s.devices[0].name, dev);
        let r = s.devices[0].rates.as_ref().expect("device present");
        assert!(r.util_pct >= 0.0 && r.util_pct <= 100.0);
        let h = &s.host;
        let sum = h.user_pct
            + h.nice_pct
            + h.system_pct
            + h.iowait_pct
            + h.irq_pct
            + h.softirq_pct
            + h.steal_pct
            + h.idle_pct;
        // Jiffies are coarse; with any tick in the window the states add up.
        assert!(sum == 0.0 || (sum - 100.0).abs() < 1e-6, "{h:?}");
        assert_eq!(b.gauges.readings, a.gauges.readings + 2);
        assert!(p.interval_s > 0.0);
        // The mark did not move the sampling chain: the point covers
        // start → sample, not mark → sample.
        assert!(p.interval_s >= 0.03);
    }
}
