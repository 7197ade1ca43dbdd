//! The environment a run happened in: host, kernel, CPU, memory and dbio's
//! version — what makes two runs comparable or not. The storage side (the
//! chain of filesystem and devices under the target) is resolved by
//! `target::chain` and recorded beside it.

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Environment {
    pub hostname: String,
    pub kernel: String,
    pub cpu_model: String,
    pub cpus: usize,
    pub memory_bytes: u64,
    pub dbio_version: String,
}

impl Environment {
    /// Reads the host's description (never fails: unknown parts stay empty).
    pub fn capture() -> Environment {
        let uname = rustix::system::uname();
        let text = |b: &std::ffi::CStr| b.to_string_lossy().into_owned();
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Environment {
            hostname: text(uname.nodename()),
            kernel: format!("{} {}", text(uname.sysname()), text(uname.release())),
            cpu_model: cpu_model(&cpuinfo),
            cpus: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(0),
            memory_bytes: mem_total(&meminfo),
            dbio_version: env!("CARGO_PKG_VERSION").into(),
        }
    }
}

fn cpu_model(cpuinfo: &str) -> String {
    cpuinfo
        .lines()
        .find_map(|l| {
            let (k, v) = l.split_once(':')?;
            matches!(k.trim(), "model name" | "Model" | "cpu model").then(|| v.trim().to_string())
        })
        .unwrap_or_default()
}

fn mem_total(meminfo: &str) -> u64 {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kb| kb * 1024)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_and_memory() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel name\t: Intel(R) Xeon(R) CPU @ 2.20GHz\n";
        assert_eq!(cpu_model(cpuinfo), "Intel(R) Xeon(R) CPU @ 2.20GHz");
        assert_eq!(
            mem_total("MemTotal:       24591564 kB\nMemFree: 1 kB\n"),
            24_591_564 * 1024
        );
        assert_eq!(mem_total("garbage"), 0);
    }

    #[test]
    fn captures_this_host() {
        let e = Environment::capture();
        assert!(e.kernel.starts_with("Linux "), "{e:?}");
        assert!(e.cpus >= 1 && e.memory_bytes > 0, "{e:?}");
        assert!(!e.hostname.is_empty());
    }
}
