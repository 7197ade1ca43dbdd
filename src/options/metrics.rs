//! `--metrics-listen` and `--metrics-textfile` (live metrics, docs/metrics.md),
//! shared by `dbio run` and `dbio plan run`.

use std::net::SocketAddr;
use std::path::PathBuf;

use crate::metrics::Wanted;

#[derive(clap::Args, Debug, Clone, Default, PartialEq, Eq)]
#[command(next_help_heading = "Live metrics")]
pub struct MetricsArgs {
    /// Serve live metrics while running: Prometheus/OpenMetrics at http://ADDR:PORT/metrics and a live page at http://ADDR:PORT/ (an IP address and a port, e.g. 127.0.0.1:9464; port 0 picks a free one). Only that address is bound, before anything is laid out.
    #[arg(long, value_name = "ADDR:PORT", value_parser = crate::metrics::parse_listen)]
    pub metrics_listen: Option<SocketAddr>,

    /// Write the same metrics to DIR/dbio.prom every interval (a temporary file, then renamed) for node_exporter's textfile collector.
    #[arg(long, value_name = "DIR")]
    pub metrics_textfile: Option<PathBuf>,
}

impl MetricsArgs {
    pub fn wanted(&self) -> Wanted {
        Wanted {
            listen: self.metrics_listen,
            textfile: self.metrics_textfile.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::metrics::parse_listen;

    #[test]
    fn an_ip_and_a_port_is_a_listen_address_and_nothing_else_is() {
        assert_eq!(parse_listen("127.0.0.1:9464").unwrap().port(), 9464);
        assert!(parse_listen("[::1]:0").unwrap().is_ipv6());
        for bad in [
            "localhost:9464",
            "127.0.0.1",
            ":9464",
            "127.0.0.1:70000",
            "1.2.3.4:x",
            "",
        ] {
            assert!(parse_listen(bad).is_err(), "{bad}");
        }
    }
}
