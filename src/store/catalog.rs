//! Which metric names the store holds, and in how many runs: what
//! `dbio metrics` lists and what an unknown `--metric` is matched against.

use std::collections::BTreeMap;

use super::{Store, StoreError};

impl Store {
    /// Every metric name of the stored runs (under this build's names,
    /// [`crate::vocab::canonical_metric`]) with the number of runs that
    /// have it, ordered by name.
    pub fn metric_names(&self) -> Result<Vec<(String, u64)>, StoreError> {
        let mut stmt = self
            .conn
            .prepare_cached("SELECT name, COUNT(*) FROM metrics GROUP BY name")
            .map_err(|e| self.sql(e))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
            .and_then(|rows| rows.collect::<Result<Vec<_>, _>>())
            .map_err(|e| self.sql(e))?;
        let mut names: BTreeMap<String, u64> = BTreeMap::new();
        for (name, runs) in rows {
            let name = crate::vocab::canonical_metric(&name).into_owned();
            *names.entry(name).or_default() += runs.max(0) as u64;
        }
        Ok(names.into_iter().collect())
    }
}
