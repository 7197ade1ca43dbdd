//! Micro-benchmark of the block pickers and the random fill: nanoseconds
//! per pick for each distribution, and fill bandwidth.
//! `cargo bench --bench dist` (a test build of it does nothing).

use std::hint::black_box;
use std::time::Instant;

use dbio::rng::Rng;
use dbio::workload::dist::{BlockPicker, Distribution, Hotspot};

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        return;
    }
    const CALLS: u32 = 20_000_000;
    let n = 300_000_000u64;
    let spot = Hotspot {
        offset_blocks: 1000,
        size_blocks: 1 << 20,
        every: 10,
    };
    let cases = [
        ("uniform", Distribution::Uniform, None),
        ("zipf:0.8", Distribution::Zipf { theta: 0.8 }, None),
        ("zipf:1.2", Distribution::Zipf { theta: 1.2 }, None),
        ("pareto:0.2", Distribution::Pareto { h: 0.2 }, None),
        ("pareto:0.9", Distribution::Pareto { h: 0.9 }, None),
        (
            "zipf:1.2 + hotspot/10",
            Distribution::Zipf { theta: 1.2 },
            Some(spot),
        ),
    ];
    for (name, dist, hot) in cases {
        let mut p = BlockPicker::new(dist, n, hot).expect("valid");
        let mut rng = Rng::new(1);
        let start = Instant::now();
        let mut acc = 0u64;
        for _ in 0..CALLS {
            acc = acc.wrapping_add(p.next(&mut rng));
        }
        let ns = start.elapsed().as_nanos() as f64 / f64::from(CALLS);
        black_box(acc);
        println!("{name:>24}: {ns:6.2} ns/call");
    }
    let mut rng = Rng::new(1);
    let mut buf = vec![0u8; 1 << 20];
    let start = Instant::now();
    for _ in 0..1000 {
        rng.fill(black_box(&mut buf));
    }
    let secs = start.elapsed().as_secs_f64();
    println!(
        "{:>24}: {:6.2} GB/s",
        "Rng::fill",
        1000.0 * buf.len() as f64 / secs / 1e9
    );
}
