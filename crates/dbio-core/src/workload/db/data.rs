//! SLOB's data shape on any server: keys scattered over the rows (row `g`
//! holds key `g × SCATTER mod SCALE`, a permutation since SCATTER is a
//! prime above any SCALE, so a work unit of adjacent keys lands on pages
//! far apart), and what a load reports.

use serde::Serialize;

/// The multiplier that scatters keys over pages (a prime above any SCALE
/// dbio allows, so it is coprime to it; g × P stays below 2^63).
pub const SCATTER: u64 = 2_654_435_761;
/// Largest SCALE (rows per table) the key formula handles.
pub const MAX_SCALE: u64 = 3_000_000_000;

/// How the data was made.
#[derive(Clone, Debug, Default, Serialize)]
pub struct LoadReport {
    pub reused: bool,
    pub tables: u32,
    pub rows_per_table: u64,
    /// Table + index bytes over all tables.
    pub bytes: u64,
    pub seconds: f64,
    pub mib_per_s: f64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scattered_keys_are_a_permutation() {
        for scale in [1u64, 7, 300, 1000] {
            let mut seen = vec![false; scale as usize];
            for g in 0..scale {
                seen[(g * SCATTER % scale) as usize] = true;
            }
            assert!(seen.iter().all(|&s| s), "{scale}");
        }
        assert!(MAX_SCALE.checked_mul(SCATTER).is_some());
    }
}
