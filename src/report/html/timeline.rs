//! One run over time: dbio's own per-second series (ops/s and latency per
//! kind; for a SLOB model run physical reads, redo, commits and the
//! writers' writes) beside what the devices under the target and the host
//! did in the same seconds (iostat -x r/s, w/s, MiB/s, await, %util;
//! mpstat %user, %sys, %iowait), as pairs of charts on the same time axis.
//! Panels without data are left out, and [`Timeline::left_out`] says why.

use crate::chart::{Axis, Band, Dash, Marker, Series, XyChart, color};
use crate::document::Report;
use crate::samplers::{diskstats, telemetry};
use crate::store::{SeriesKind, SeriesRow, StoredRun};

/// One kind's slice of a second.
type KindOf = fn(&SeriesRow) -> &SeriesKind;

/// One host figure of an interval.
type HostOf = fn(&TelemetryPoint) -> f64;

/// The device statistics of one interval (NaN: not recorded).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceRates {
    pub name: String,
    pub r_per_s: f64,
    pub w_per_s: f64,
    pub rkib_per_s: f64,
    pub wkib_per_s: f64,
    pub r_await_ms: f64,
    pub w_await_ms: f64,
    pub util_pct: f64,
}

/// One telemetry interval.
#[derive(Clone, Debug, PartialEq)]
pub struct TelemetryPoint {
    /// End of the interval, seconds since the sessions started.
    pub t_s: f64,
    pub user_pct: f64,
    pub system_pct: f64,
    pub iowait_pct: f64,
    pub devices: Vec<DeviceRates>,
}

/// A run's series and telemetry.
#[derive(Clone, Debug, PartialEq)]
pub struct Timeline {
    pub run_id: i64,
    pub variable: String,
    pub sessions: u32,
    /// A SLOB model run: its series are physical reads, the writers'
    /// writes and commits with their redo.
    pub slob: bool,
    pub ramp_s: f64,
    /// When the run ended, seconds since the sessions started (ramp +
    /// measured): the last second of the series may be cut short.
    pub end_s: Option<f64>,
    pub series: Vec<SeriesRow>,
    pub telemetry: Vec<TelemetryPoint>,
}

impl TelemetryPoint {
    /// One interval of the run document's telemetry (NaN: a device's
    /// rates not recorded).
    fn of(p: &telemetry::TelemetryPoint) -> TelemetryPoint {
        let devices = p
            .devices
            .iter()
            .map(|d| {
                let r =
                    |f: fn(&diskstats::DeviceRates) -> f64| d.rates.as_ref().map_or(f64::NAN, f);
                DeviceRates {
                    name: d.name.clone(),
                    r_per_s: r(|r| r.r_per_s),
                    w_per_s: r(|r| r.w_per_s),
                    rkib_per_s: r(|r| r.rkib_per_s),
                    wkib_per_s: r(|r| r.wkib_per_s),
                    r_await_ms: r(|r| r.r_await_ms),
                    w_await_ms: r(|r| r.w_await_ms),
                    util_pct: r(|r| r.util_pct),
                }
            })
            .collect();
        TelemetryPoint {
            t_s: p.t_s,
            user_pct: p.host.user_pct,
            system_pct: p.host.system_pct,
            iowait_pct: p.host.iowait_pct,
            devices,
        }
    }
}

impl Timeline {
    /// Takes the series from the store's rows and the telemetry from the
    /// stored report document (an import's: none).
    pub fn from_run(run: &StoredRun, variable: &str) -> Timeline {
        let report = Report::from_stored(&run.report).ok();
        let r = report.as_ref();
        Timeline {
            run_id: run.row.id,
            variable: variable.to_string(),
            sessions: run.row.sessions.unwrap_or(0) as u32,
            slob: r.is_some_and(|r| r.slob.is_some()),
            ramp_s: r.map_or(0.0, |r| r.ramp_s),
            end_s: r.map(|r| r.ramp_s + r.measured_s).filter(|e| *e > 0.0),
            series: run.series.clone(),
            telemetry: r.map_or_else(Vec::new, |r| {
                r.telemetry.iter().map(TelemetryPoint::of).collect()
            }),
        }
    }

    /// Device names in the order first seen.
    fn devices(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for d in self.telemetry.iter().flat_map(|p| &p.devices) {
            if !out.contains(&d.name) {
                out.push(d.name.clone());
            }
        }
        out
    }

    /// The same time axis for every chart of the run: 0 to the last second
    /// or interval recorded.
    fn time_ticks(&self) -> Vec<f64> {
        let end = self
            .series
            .iter()
            .map(|r| r.t_s as f64 + 1.0)
            .chain(self.telemetry.iter().map(|p| p.t_s))
            .filter(|t| t.is_finite())
            .fold(1.0, f64::max);
        crate::chart::scale::linear_ticks(0.0, end, 6).2
    }

    fn chart(&self, title: &str, y: Axis) -> XyChart {
        let mut c = XyChart::new(
            &format!("{title} — run {}", self.run_id),
            Axis::linear("seconds since start").with_ticks(self.time_ticks()),
            y,
        );
        c.width = 520.0;
        c.height = 280.0;
        if self.ramp_s > 0.0 {
            c.bands.push(Band {
                x0: 0.0,
                x1: self.ramp_s,
                label: "ramp".into(),
            });
        }
        c
    }

    /// Pairs of charts (dbio's own, the devices'/host's) to show side by
    /// side; a chart without data is `None`.
    pub fn charts(&self) -> Vec<(Option<XyChart>, Option<XyChart>)> {
        let present = self.present();
        let lat = self.latency(&present);
        let [dev_ops, dev_mib, dev_await, util] = self.device_charts();
        let cpu = self.host_cpu();
        let pairs = if self.slob {
            vec![
                (
                    self.per_second(&present, "physical reads/s", &[0], |k| k.ops),
                    dev_ops,
                ),
                (self.redo(&present), dev_mib),
                (self.per_second(&present, "commits/s", &[2], |k| k.ops), cpu),
                (lat, dev_await),
                (
                    self.per_second(&present, "DBWR + LGWR writes/s", &[1], |k| k.ops),
                    util,
                ),
            ]
        } else {
            vec![
                (
                    self.per_second(&present, "dbio requests/s", &[0, 1, 2], |k| k.ops),
                    dev_ops,
                ),
                (lat, dev_await),
                (cpu, util),
            ]
        };
        let keep = |c: XyChart| c.has_data().then_some(c);
        pairs.into_iter().map(|(a, b)| (keep(a), keep(b))).collect()
    }

    /// A second's point sits at its end, like the telemetry intervals; the
    /// last second, cut short by the end of the run, at the end.
    fn at(&self, r: &SeriesRow) -> f64 {
        self.span(r).0
    }

    /// A second's count per second: the last second's divided by the part
    /// of the second it had.
    fn rate(&self, r: &SeriesRow, count: i64) -> f64 {
        count as f64 / self.span(r).1
    }

    /// The kinds of request the series has (index, name, field): read,
    /// write, sync — for the model physical reads, writers' writes, commits.
    fn present(&self) -> Vec<(usize, &'static str, KindOf)> {
        let names: [&str; 3] = if self.slob {
            ["physical reads", "DBWR + LGWR writes", "commits"]
        } else {
            ["read", "write", "sync"]
        };
        let kinds: [KindOf; 3] = [|r| &r.read, |r| &r.write, |r| &r.sync];
        (0..3)
            .filter(|&i| self.series.iter().any(|r| kinds[i](r).ops > 0))
            .map(|i| (i, names[i], kinds[i]))
            .collect()
    }

    /// A per-second chart of the present kinds in `which`, `f` of each.
    fn per_second(
        &self,
        present: &[(usize, &str, KindOf)],
        title: &str,
        which: &[usize],
        f: fn(&SeriesKind) -> i64,
    ) -> XyChart {
        let mut c = self.chart(title, Axis::linear("per second").from_zero());
        for &(i, name, k) in present.iter().filter(|p| which.contains(&p.0)) {
            let mut s = Series::new(name, color(i));
            s.marker = Marker::nth(i);
            s.points = self
                .series
                .iter()
                .map(|r| (self.at(r), self.rate(r, f(k(r)))))
                .collect();
            c.series.push(s);
        }
        c
    }

    /// dbio's latency: each present kind's mean (solid) and p99 (dashed).
    fn latency(&self, present: &[(usize, &str, KindOf)]) -> XyChart {
        let mut lat = self.chart("dbio latency", Axis::log("ms (log scale)"));
        for &(i, name, k) in present {
            for (dash, label, f) in [
                (
                    Dash::Solid,
                    "mean",
                    (|k: &SeriesKind| k.lat_mean_us) as fn(&_) -> f64,
                ),
                (Dash::Dashed, "p99", |k| k.lat_p99_us),
            ] {
                let mut s = Series::new(&format!("{name} {label}"), color(i));
                s.dash = dash;
                s.marker = if dash == Dash::Solid {
                    Marker::nth(i)
                } else {
                    Marker::None
                };
                s.points = self
                    .series
                    .iter()
                    .filter(|r| k(r).ops > 0)
                    .map(|r| (self.at(r), f(k(r)) / 1e3))
                    .collect();
                lat.series.push(s);
            }
        }
        lat
    }

    /// The devices' charts: r/s and w/s, MiB/s, await, %util.
    fn device_charts(&self) -> [XyChart; 4] {
        let devices = self.devices();
        let mut dev_ops = self.chart("device r/s, w/s", Axis::linear("requests/s").from_zero());
        let mut dev_mib = self.chart("device MiB/s", Axis::linear("MiB/s").from_zero());
        // The same kind of axis as dbio's latency beside it.
        let mut dev_await = self.chart("device await", Axis::log("ms (log scale)"));
        let mut util = self.chart("device %util", Axis::linear("%util").from_zero());
        for (i, dev) in devices.iter().enumerate() {
            let pick = |f: fn(&DeviceRates) -> f64| -> Vec<(f64, f64)> {
                self.telemetry
                    .iter()
                    .filter_map(|p| {
                        let d = p.devices.iter().find(|d| &d.name == dev)?;
                        Some((p.t_s, f(d)))
                    })
                    .collect()
            };
            let line = |label: &str, dash: Dash, pts| {
                let mut s = Series::new(&format!("{dev} {label}"), color(i));
                s.dash = dash;
                s.marker = if dash == Dash::Solid {
                    Marker::nth(i)
                } else {
                    Marker::Square
                };
                s.points = pts;
                s
            };
            dev_ops
                .series
                .push(line("r/s", Dash::Solid, pick(|d| d.r_per_s)));
            dev_ops
                .series
                .push(line("w/s", Dash::Dashed, pick(|d| d.w_per_s)));
            dev_mib
                .series
                .push(line("read", Dash::Solid, pick(|d| d.rkib_per_s / 1024.0)));
            dev_mib.series.push(line(
                "written",
                Dash::Dashed,
                pick(|d| d.wkib_per_s / 1024.0),
            ));
            dev_await
                .series
                .push(line("r_await", Dash::Solid, pick(|d| d.r_await_ms)));
            dev_await
                .series
                .push(line("w_await", Dash::Dashed, pick(|d| d.w_await_ms)));
            util.series
                .push(line("%util", Dash::Solid, pick(|d| d.util_pct)));
        }
        [dev_ops, dev_mib, dev_await, util]
    }

    /// The host's CPU: %user, %sys, %iowait.
    fn host_cpu(&self) -> XyChart {
        let mut cpu = self.chart("host CPU", Axis::linear("% of all CPUs").from_zero());
        let host: [(&str, HostOf); 3] = [
            ("%user", |p| p.user_pct),
            ("%sys", |p| p.system_pct),
            ("%iowait", |p| p.iowait_pct),
        ];
        for (i, (name, f)) in host.iter().enumerate() {
            let mut s = Series::new(name, color(i + 4));
            s.marker = Marker::nth(i);
            s.points = self.telemetry.iter().map(|p| (p.t_s, f(p))).collect();
            cpu.series.push(s);
        }
        cpu
    }

    /// The model's redo generated by commits, MiB/s.
    fn redo(&self, present: &[(usize, &str, KindOf)]) -> XyChart {
        let mut redo = self.chart(
            "redo generated by commits",
            Axis::linear("MiB/s").from_zero(),
        );
        if present.iter().any(|p| p.0 == 2) {
            let mut s = Series::new("redo", color(2));
            s.marker = Marker::nth(2);
            s.points = self
                .series
                .iter()
                .map(|r| (self.at(r), self.rate(r, r.sync.bytes) / 1048576.0))
                .collect();
            redo.series.push(s);
        }
        redo
    }

    /// Where a second's point sits and how long it lasted: its end, 1 s;
    /// the run's end and the part of the second before it for the last.
    fn span(&self, r: &SeriesRow) -> (f64, f64) {
        let (t0, t1) = (r.t_s as f64, r.t_s as f64 + 1.0);
        match self.end_s {
            Some(e) if e > t0 && e < t1 => (e, e - t0),
            _ => (t1, 1.0),
        }
    }

    /// Why panels are left out, once for the run (empty: every panel drawn).
    pub fn left_out(&self) -> Vec<String> {
        let mut why = Vec::new();
        if !self
            .series
            .iter()
            .any(|r| r.read.ops + r.write.ops + r.sync.ops > 0)
        {
            why.push("no per-second series (an imported run carries none, or the run ended within its first second)".to_string());
        }
        if self.telemetry.is_empty() {
            why.push("no device or host telemetry (an imported run, or a run shorter than one --interval)".to_string());
        } else if self.devices().is_empty() {
            why.push("no block device under the target (tmpfs, or a device dbio could not resolve): the device panels are left out".to_string());
        }
        why
    }
}
