//! `dbio run`'s io_uring setup options (fio's `--fixedbufs`,
//! `--registerfiles`, `--sqthread_poll`, and what liburing users add) and
//! their validation into [`UringOpts`], recorded in the run's config.

use clap::{ArgAction, Args};

use crate::config::EngineKind;
use crate::engine::uring::{Submit, Taskrun, UringOpts};
use crate::options::choice::choice;
use crate::options::refused::Refused;

#[derive(Args, Debug, Clone)]
pub struct UringArgs {
    /// io_uring: register each session's buffers with the kernel once (fio's --fixedbufs).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    pub fixedbufs: bool,

    /// io_uring: register the data files with the kernel once (fio's --registerfiles).
    #[arg(long, value_name = "BOOL", default_value_t = true, action = ArgAction::Set)]
    pub registerfiles: bool,

    /// io_uring: register the ring's own fd (Linux 5.18+), saving a file lookup per system call.
    #[arg(long, value_name = "BOOL", default_value_t = false, action = ArgAction::Set)]
    pub register_ring: bool,

    /// io_uring: a kernel thread per session polls for submissions (SQPOLL, fio's --sqthread_poll), sleeping after MS idle; its CPU counts in the run's.
    #[arg(long, value_name = "MS")]
    pub sqthread_poll: Option<u32>,

    /// io_uring: who runs completion work in the kernel.
    #[arg(long, value_parser = choice::<Taskrun>(), default_value = "auto")]
    pub uring_taskrun: Taskrun,

    /// io_uring: when queued requests go to the kernel: each in its own system call as it is queued (as fio does), or all in one when the session waits.
    #[arg(long, value_parser = choice::<Submit>(), default_value = "auto")]
    pub uring_submit: Submit,
}

impl UringArgs {
    fn opts(&self) -> UringOpts {
        UringOpts {
            fixedbufs: self.fixedbufs,
            registerfiles: self.registerfiles,
            register_ring: self.register_ring,
            sqthread_poll_ms: self.sqthread_poll,
            taskrun: self.uring_taskrun,
            submit: self.uring_submit,
        }
    }

    /// The first io_uring option given with a value other than its default.
    pub fn given(&self) -> Option<&'static str> {
        let (o, d) = (self.opts(), UringOpts::default());
        [
            (o.fixedbufs != d.fixedbufs, "--fixedbufs"),
            (o.registerfiles != d.registerfiles, "--registerfiles"),
            (o.register_ring != d.register_ring, "--register-ring"),
            (o.sqthread_poll_ms != d.sqthread_poll_ms, "--sqthread-poll"),
            (o.taskrun != d.taskrun, "--uring-taskrun"),
            (o.submit != d.submit, "--uring-submit"),
        ]
        .into_iter()
        .find_map(|(given, name)| given.then_some(name))
    }

    /// The setup a raw run records: `None` unless the engine is io_uring,
    /// where an io_uring option is refused.
    pub fn into_opts(self, engine: EngineKind) -> Result<Option<UringOpts>, Refused> {
        if engine == EngineKind::IoUring {
            return Ok(Some(self.opts()));
        }
        match self.given() {
            Some(name) => Err(Refused::from(format!(
                "{name} is an io_uring setting: add --engine io_uring or leave {name} out"
            ))),
            None => Ok(None),
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::cli::tests::config;
    use crate::engine::uring::{Submit, Taskrun, UringOpts};

    /// The io_uring setup a raw run records.
    fn uring(c: &crate::config::RunConfig) -> Option<UringOpts> {
        c.workload.raw().and_then(|r| r.uring)
    }

    #[test]
    fn io_uring_records_its_setup_and_others_record_none() {
        let c = config(&["--engine", "io_uring"]).unwrap();
        assert_eq!(uring(&c), Some(UringOpts::default()));
        let c = config(&[
            "--engine",
            "io_uring",
            "--fixedbufs",
            "false",
            "--register-ring",
            "true",
            "--sqthread-poll",
            "20",
            "--uring-taskrun",
            "coop",
            "--uring-submit",
            "batch",
        ])
        .unwrap();
        let u = uring(&c).unwrap();
        assert!(!u.fixedbufs && u.registerfiles && u.register_ring);
        assert_eq!((u.sqthread_poll_ms, u.taskrun), (Some(20), Taskrun::Coop));
        assert_eq!(u.submit, Submit::Batch);
        assert_eq!(uring(&config(&[]).unwrap()), None);
    }

    #[test]
    fn io_uring_options_are_refused_where_they_do_nothing() {
        for (args, needle) in [
            (
                &["--sqthread-poll", "5"][..],
                "--sqthread-poll is an io_uring setting",
            ),
            (
                &["--fixedbufs", "false"][..],
                "--fixedbufs is an io_uring setting",
            ),
            (
                &[
                    "--workload",
                    "slob",
                    "--engine",
                    "io_uring",
                    "--register-ring",
                    "true",
                ][..],
                "--register-ring does not apply to --workload slob",
            ),
        ] {
            let e = config(args).unwrap_err();
            assert!(e.contains(needle), "{args:?}: {e}");
            assert_eq!(e.lines().count(), 1, "{e}");
        }
    }
}
