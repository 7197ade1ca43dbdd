//! TEMPORARY stub (being replaced by the real module).
use super::rng::Rng;
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Distribution {
    Uniform,
    Zipf { theta: f64 },
    Pareto { h: f64 },
}
impl std::str::FromStr for Distribution {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        if s == "uniform" {
            Ok(Distribution::Uniform)
        } else {
            Err("expected uniform, zipf:THETA or pareto:H".into())
        }
    }
}
impl std::fmt::Display for Distribution {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        write!(f, "uniform")
    }
}
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hotspot {
    pub offset_blocks: u64,
    pub size_blocks: u64,
    pub every: u32,
}
#[derive(Clone)]
pub struct BlockPicker {
    n: u64,
    hot: Option<Hotspot>,
    i: u64,
}
#[derive(thiserror::Error, Debug)]
pub enum DistError {
    #[error("bad")]
    Bad,
}
impl BlockPicker {
    pub fn new(_d: Distribution, nblocks: u64, hot: Option<Hotspot>) -> Result<Self, DistError> {
        Ok(BlockPicker {
            n: nblocks,
            hot,
            i: 0,
        })
    }
    #[inline]
    pub fn next(&mut self, rng: &mut Rng) -> u64 {
        self.i += 1;
        if let Some(h) = self.hot {
            if self.i % h.every as u64 == 0 {
                return h.offset_blocks + rng.below(h.size_blocks);
            }
        }
        rng.below(self.n)
    }
}
