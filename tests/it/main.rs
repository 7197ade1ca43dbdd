//! dbio's integration tests, one binary: every module covers one part of
//! the product through the real `dbio` binary, real files, loop devices,
//! filesystems and tools. A test that needs what this machine lacks (root,
//! a tool, device-mapper) is reported as ignored, with what it needs, in
//! the runner's own count — never as passed. `scripts/test.sh` installs the
//! tools and runs everything as root.

mod common;

mod bad_input;
mod block_devices;
mod capture;
mod cli_help;
mod compare;
mod curve;
mod device_gate;
mod fio_json;
mod import_awr;
mod import_fio;
mod import_fio_latency;
mod import_fuzz;
mod lab;
mod layers;
mod manual;
mod metrics;
mod metrics_due;
mod metrics_lab;
mod metrics_live;
#[cfg(feature = "mpi")]
mod metrics_mpi;
#[cfg(feature = "mpi")]
mod mpi;
#[cfg(feature = "mpi")]
mod mpi_faults;
#[cfg(feature = "mpi")]
mod mpi_hosts;
#[cfg(feature = "mpi")]
mod mpi_html;
#[cfg(not(feature = "mpi"))]
mod mpi_off;
#[cfg(feature = "mpi")]
mod mpi_plan;
#[cfg(feature = "mpi")]
mod mpi_region;
mod mysql;
mod mysql_cycle;
mod mysql_paths;
mod mysql_url;
mod non_utf8_paths;
mod open_loop;
mod open_loop_ops;
mod output_file;
mod pg;
mod pg_cycle;
mod pg_plans;
mod pg_trust;
mod plan_examples;
mod plan_run;
mod progress;
mod replay;
mod report_html;
mod report_kinds;
mod report_slob_html;
mod report_stats;
mod run_raw;
mod run_v2;
mod runs_export;
mod sessions_4k;
mod signals_pipes;
mod slob_cycle;
mod slob_dbwr_and_devices;
mod slob_flavor;
mod slob_innodb;
mod slob_model;
mod slob_pgmodel;
mod steady_state;
mod store_crash;
mod store_unsaved;
mod store_v1;
mod target_safety;
mod telemetry_chain;
mod telemetry_runs;
mod terminal_text;
mod verify;
mod verify_checked;
mod verify_content;
mod verify_interrupted;
mod verify_run;
mod verify_slob;
mod vs_engine;

fn main() {
    // The store tests run this binary again as a writer process.
    if store_crash::child_writer() {
        return;
    }
    let args = libtest_mimic::Arguments::from_args();
    let trials: Vec<_> = [
        bad_input::tests(),
        block_devices::tests(),
        cli_help::tests(),
        capture::tests(),
        replay::tests(),
        compare::tests(),
        curve::tests(),
        device_gate::tests(),
        fio_json::tests(),
        import_awr::tests(),
        import_fio::tests(),
        import_fio_latency::tests(),
        import_fuzz::tests(),
        lab::tests(),
        layers::tests(),
        manual::tests(),
        metrics::tests(),
        metrics_lab::tests(),
        metrics_due::tests(),
        metrics_live::tests(),
        #[cfg(feature = "mpi")]
        metrics_mpi::tests(),
        #[cfg(feature = "mpi")]
        mpi::tests(),
        #[cfg(feature = "mpi")]
        mpi_faults::tests(),
        #[cfg(feature = "mpi")]
        mpi_hosts::tests(),
        #[cfg(feature = "mpi")]
        mpi_html::tests(),
        #[cfg(feature = "mpi")]
        mpi_plan::tests(),
        #[cfg(feature = "mpi")]
        mpi_region::tests(),
        #[cfg(not(feature = "mpi"))]
        mpi_off::tests(),
        mysql::tests(),
        mysql_cycle::tests(),
        mysql_paths::tests(),
        mysql_url::tests(),
        non_utf8_paths::tests(),
        open_loop::tests(),
        open_loop_ops::tests(),
        output_file::tests(),
        pg::tests(),
        pg_cycle::tests(),
        pg_plans::tests(),
        pg_trust::tests(),
        plan_examples::tests(),
        plan_run::tests(),
        progress::tests(),
        report_html::tests(),
        report_kinds::tests(),
        report_slob_html::tests(),
        report_stats::tests(),
        signals_pipes::tests(),
        steady_state::tests(),
        run_raw::tests(),
        run_v2::tests(),
        runs_export::tests(),
        sessions_4k::tests(),
        slob_cycle::tests(),
        slob_dbwr_and_devices::tests(),
        slob_flavor::tests(),
        slob_innodb::tests(),
        slob_pgmodel::tests(),
        slob_model::tests(),
        store_crash::tests(),
        store_unsaved::tests(),
        store_v1::tests(),
        target_safety::tests(),
        telemetry_chain::tests(),
        telemetry_runs::tests(),
        terminal_text::tests(),
        verify::tests(),
        verify_checked::tests(),
        verify_content::tests(),
        verify_interrupted::tests(),
        verify_run::tests(),
        verify_slob::tests(),
        vs_engine::tests(),
    ]
    .into_iter()
    .flatten()
    .collect();
    common::report_ignored(&trials);
    libtest_mimic::run(&args, trials).exit();
}
