//! One run over time: dbio's own per-second series (ops/s and latency per
//! kind) beside what the devices under the target and the host did in the
//! same seconds (iostat -x r/s, w/s, await, %util; mpstat %user, %sys,
//! %iowait), as pairs of charts on the same time axis.

use serde_json::Value;

use crate::chart::{Axis, Band, Dash, Marker, Series, XyChart, color};
use crate::store::{SeriesKind, SeriesRow, StoredRun};

/// One kind's slice of a second.
type KindOf = fn(&SeriesRow) -> &SeriesKind;

/// One host figure of an interval.
type HostOf = fn(&TelemetryPoint) -> f64;

/// The device statistics of one interval (NaN: not recorded).
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceRates {
    pub name: String,
    pub r_s: f64,
    pub w_s: f64,
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
    pub ramp_s: f64,
    pub series: Vec<SeriesRow>,
    pub telemetry: Vec<TelemetryPoint>,
}

fn num(v: Option<&Value>, key: &str) -> f64 {
    v.and_then(|v| v.get(key))
        .and_then(Value::as_f64)
        .unwrap_or(f64::NAN)
}

impl Timeline {
    /// Takes the series from the store's rows and the telemetry from the
    /// stored report document.
    pub fn from_run(run: &StoredRun, variable: &str) -> Timeline {
        let telemetry = run
            .report
            .get("telemetry")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or_default()
            .iter()
            .map(|p| {
                let host = p.get("host");
                let devices = p
                    .get("devices")
                    .and_then(Value::as_array)
                    .map(Vec::as_slice)
                    .unwrap_or_default()
                    .iter()
                    .map(|d| {
                        let r = d.get("rates");
                        DeviceRates {
                            name: d
                                .get("name")
                                .and_then(Value::as_str)
                                .unwrap_or("?")
                                .to_string(),
                            r_s: num(r, "r_s"),
                            w_s: num(r, "w_s"),
                            r_await_ms: num(r, "r_await_ms"),
                            w_await_ms: num(r, "w_await_ms"),
                            util_pct: num(r, "util_pct"),
                        }
                    })
                    .collect();
                TelemetryPoint {
                    t_s: num(Some(p), "t_s"),
                    user_pct: num(host, "user_pct"),
                    system_pct: num(host, "system_pct"),
                    iowait_pct: num(host, "iowait_pct"),
                    devices,
                }
            })
            .collect();
        Timeline {
            run_id: run.row.id,
            variable: variable.to_string(),
            sessions: run.row.sessions.unwrap_or(0) as u32,
            ramp_s: run
                .report
                .get("ramp_s")
                .and_then(Value::as_f64)
                .unwrap_or(0.0),
            series: run.series.clone(),
            telemetry,
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

    /// Pairs of charts (dbio's own, the devices'/host's) to show side by side.
    pub fn charts(&self) -> Vec<(XyChart, XyChart)> {
        // A second's point sits at its end, like the telemetry intervals.
        let at = |r: &SeriesRow| r.t_s as f64 + 1.0;
        let kinds: [(&str, KindOf); 3] = [
            ("read", |r| &r.read),
            ("write", |r| &r.write),
            ("sync", |r| &r.sync),
        ];
        let present: Vec<_> = kinds
            .iter()
            .enumerate()
            .filter(|(_, (_, k))| self.series.iter().any(|r| k(r).ops > 0))
            .collect();

        let mut ops = self.chart("dbio requests/s", Axis::linear("requests/s").from_zero());
        let mut lat = self.chart("dbio latency", Axis::log("ms"));
        for (i, (name, k)) in &present {
            let mut s = Series::new(name, color(*i));
            s.marker = Marker::nth(*i);
            s.points = self
                .series
                .iter()
                .map(|r| (at(r), k(r).ops as f64))
                .collect();
            ops.series.push(s);
            for (dash, label, f) in [
                (
                    Dash::Solid,
                    "mean",
                    (|k: &SeriesKind| k.lat_mean_us) as fn(&_) -> f64,
                ),
                (Dash::Dashed, "p99", |k| k.lat_p99_us),
            ] {
                let mut s = Series::new(&format!("{name} {label}"), color(*i));
                s.dash = dash;
                s.marker = if dash == Dash::Solid {
                    Marker::nth(*i)
                } else {
                    Marker::None
                };
                s.points = self
                    .series
                    .iter()
                    .filter(|r| k(r).ops > 0)
                    .map(|r| (at(r), f(k(r)) / 1e3))
                    .collect();
                lat.series.push(s);
            }
        }

        let devices = self.devices();
        let mut dev_ops = self.chart("device r/s, w/s", Axis::linear("requests/s").from_zero());
        let mut dev_await = self.chart("device await", Axis::linear("ms").from_zero());
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
                .push(line("r/s", Dash::Solid, pick(|d| d.r_s)));
            dev_ops
                .series
                .push(line("w/s", Dash::Dashed, pick(|d| d.w_s)));
            dev_await
                .series
                .push(line("r_await", Dash::Solid, pick(|d| d.r_await_ms)));
            dev_await
                .series
                .push(line("w_await", Dash::Dashed, pick(|d| d.w_await_ms)));
            util.series
                .push(line("%util", Dash::Solid, pick(|d| d.util_pct)));
        }

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
        vec![(ops, dev_ops), (lat, dev_await), (cpu, util)]
    }
}
