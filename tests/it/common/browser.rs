//! Headless Chromium for the HTML report tests: a page rendered to a
//! screenshot and to the DOM the browser built (with its console lines),
//! the screenshot's ink and colours, and the page's charts.

use std::path::{Path, PathBuf};
use std::process::Command;

pub fn chromium() -> Option<PathBuf> {
    ["chromium", "chromium-browser"].iter().find_map(|name| {
        let ok = Command::new(name)
            .arg("--version")
            .output()
            .ok()?
            .status
            .success();
        ok.then(|| PathBuf::from(name))
    })
}

/// What Chromium made of a page: the console lines, the DOM and the PNG.
pub struct Rendered {
    pub console: Vec<String>,
    pub dom: String,
    pub png: Vec<u8>,
}

pub fn render(browser: &Path, page: &Path, dir: &Path, height: u32) -> Rendered {
    let url = format!("file://{}", page.display());
    let common = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--enable-logging=stderr",
        "--v=0",
    ];
    let shot = dir.join("shot.png");
    let out = Command::new(browser)
        .args(common)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size=1280,{height}"))
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut console: Vec<String> = String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains(":CONSOLE"))
        .map(str::to_string)
        .collect();
    let out = Command::new(browser)
        .args(common)
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "--dump-dom: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    console.extend(
        String::from_utf8_lossy(&out.stderr)
            .lines()
            .filter(|l| l.contains(":CONSOLE"))
            .map(str::to_string),
    );
    Rendered {
        console,
        dom: String::from_utf8_lossy(&out.stdout).into_owned(),
        png: std::fs::read(&shot).unwrap(),
    }
}

/// (share of non-white pixels, distinct colours, pixels of each colour asked).
pub fn pixels(png: &[u8], colors: &[[u8; 3]]) -> (f64, usize, Vec<usize>) {
    let decoder = png::Decoder::new(std::io::Cursor::new(png));
    let mut reader = decoder.read_info().unwrap();
    let mut buf = vec![0; reader.output_buffer_size().unwrap()];
    let info = reader.next_frame(&mut buf).unwrap();
    let step = info.color_type.samples();
    assert!(step >= 3, "an RGB screenshot, got {:?}", info.color_type);
    let mut distinct = std::collections::HashSet::new();
    let (mut ink, mut hits) = (0usize, vec![0usize; colors.len()]);
    let px: Vec<&[u8]> = buf[..info.buffer_size()].chunks(step).collect();
    for p in &px {
        let rgb = [p[0], p[1], p[2]];
        distinct.insert(rgb);
        if rgb != [255, 255, 255] {
            ink += 1;
        }
        for (i, c) in colors.iter().enumerate() {
            if rgb == *c {
                hits[i] += 1;
            }
        }
    }
    (ink as f64 / px.len() as f64, distinct.len(), hits)
}

/// Every `<svg` of the markup, each checked for drawn data.
pub fn charts(markup: &str) -> Vec<&str> {
    markup
        .split("<svg")
        .skip(1)
        .map(|s| s.split("</svg>").next().unwrap())
        .collect()
}

pub fn drawn(svg: &str) -> bool {
    let data = svg.matches("class=\"series\"").count()
        + svg.matches("class=\"point\"").count()
        + svg.matches("class=\"bar\"").count();
    data > 0 && !svg.contains(">no data<")
}
