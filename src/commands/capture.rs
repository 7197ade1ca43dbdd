//! `dbio capture`: records every block request to the given devices (the
//! kernel's block tracepoints, in a tracefs instance of dbio's own) into a
//! dbio trace file, until `--time` passes or Ctrl-C, and says how many
//! requests it holds and how many events the kernel lost.

use crate::cli::capture::CaptureArgs;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::Context;

use super::CommandError;
use crate::trace::capture::{self, CaptureError, Options, Outcome, Target};
use crate::trace::tracefs::TracefsError;

fn usage(what: String) -> anyhow::Error {
    CommandError::Usage(what).into()
}

fn options(args: &CaptureArgs) -> anyhow::Result<Options> {
    let time = match args.time {
        Some(t) if !(t.is_finite() && t > 0.0) => {
            return Err(usage(format!(
                "--time {t}: give a number of seconds above 0"
            )));
        }
        t => t.map(Duration::from_secs_f64),
    };
    if args.buffer_kb < 4 {
        return Err(usage(format!(
            "--buffer-kb {}: give at least 4 (KiB per CPU)",
            args.buffer_kb
        )));
    }
    super::trace::check_new_output(&args.output)?;
    let mut targets = Vec::new();
    for d in &args.devices {
        let t = Target::resolve(d).map_err(|e| usage(e.to_string()))?;
        if targets.iter().any(|o: &Target| o.number == t.number) {
            return Err(usage(format!("--device {} is given twice", d.display())));
        }
        targets.push(t);
    }
    Ok(Options {
        targets,
        time,
        buffer_kb: args.buffer_kb,
        output: args.output.clone(),
    })
}

pub fn execute(args: &CaptureArgs) -> anyhow::Result<ExitCode> {
    let opts = options(args)?;
    let stop = super::interrupt_flag();
    let names: Vec<String> = args
        .devices
        .iter()
        .map(|d| d.display().to_string())
        .collect();
    let out = capture::capture(&opts, &stop, || {
        eprintln!(
            "capturing block requests to {} into {} ({})",
            names.join(", "),
            args.output.display(),
            match args.time {
                Some(t) => format!("for {t} s, Ctrl-C stops sooner"),
                None => "Ctrl-C stops".into(),
            }
        );
    })
    .map_err(|e| match e {
        CaptureError::Device { .. } => usage(e.to_string()),
        CaptureError::Tracefs(TracefsError::Unsupported(_)) => {
            anyhow::Error::from(CommandError::Failed(e.to_string()))
        }
        e => anyhow::Error::from(e),
    })
    .context("capturing")?;
    report(args, &out)?;
    Ok(ExitCode::SUCCESS)
}

fn report(args: &CaptureArgs, out: &Outcome) -> anyhow::Result<()> {
    let s = &out.summary;
    if args.json {
        let doc = serde_json::json!({
            "schema": "dbio.capture.v1",
            "output": args.output.display().to_string(),
            "capture": out,
        });
        super::output::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    }
    eprintln!(
        "captured {} requests in {:.1} s ({} reads, {} writes, {} flushes, {} discards; {} without completion) into {}",
        s.requests,
        out.seconds,
        s.reads,
        s.writes,
        s.flushes,
        s.discards,
        s.incomplete,
        args.output.display()
    );
    eprintln!(
        "lost events: {}{}",
        out.lost_events,
        if out.lost_events > 0 {
            " (the kernel's buffer overran: raise --buffer-kb)"
        } else {
            ""
        }
    );
    Ok(())
}
