//! `--rate` and `--arrival` checked for any workload that takes a rate
//! (`WorkloadConfig::paced`): raw's I/O requests, the model's operations,
//! the servers' transactions. One line for what does not fit.

use super::{Refused, RunArgs};
use crate::config::{Arrival, Paced};

impl RunArgs {
    /// The rate and its arrivals for a run of `sessions` sessions pacing
    /// `paced` (`None, None`: a closed loop). `think` says SLOB's think time
    /// was given, which paces the sessions its own way.
    pub(crate) fn pacing(
        &self,
        sessions: u32,
        paced: Paced,
        think: bool,
    ) -> Result<(Option<u64>, Option<Arrival>), Refused> {
        let (one, many) = (one(paced), paced.name());
        let Some(rate) = self.rate else {
            return match self.arrival {
                Some(_) => Err(format!(
                    "--arrival shapes --rate's schedule; give --rate N ({many} per second) with it"
                )
                .into()),
                None => Ok((None, None)),
            };
        };
        if rate < u64::from(sessions) {
            return Err(format!(
                "--rate {rate} is below one {one} per second per session (--sessions {sessions})"
            )
            .into());
        }
        if think {
            return Err(format!(
                "--rate {rate} paces the {many} and --think-frequency adds think time between them; give one of the two"
            )
            .into());
        }
        Ok((Some(rate), Some(self.arrival.unwrap_or(Arrival::Uniform))))
    }
}

/// One unit of `paced`, in words.
fn one(paced: Paced) -> &'static str {
    match paced {
        Paced::Requests => "request",
        Paced::Operations => "operation",
        Paced::Transactions => "transaction",
    }
}
