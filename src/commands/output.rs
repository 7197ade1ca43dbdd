//! A command's output on stdout. A reader that closes the pipe early
//! (`dbio runs list | head -1`) ends the command normally, as ripgrep does:
//! nothing more is written, nothing is printed about it, exit 0.

use std::io::{self, Write};

use super::CommandError;

/// True when a write failed because the reader closed the pipe.
pub fn is_closed(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
}

/// Maps a write error: a closed pipe to [`CommandError::Closed`], anything
/// else to a failure naming it.
pub fn write_error(e: io::Error) -> CommandError {
    if is_closed(&e) {
        CommandError::Closed
    } else {
        CommandError::Failed(format!("cannot write the output: {e}"))
    }
}

/// Writes `text` to stdout and flushes it.
pub fn print(text: &str) -> anyhow::Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(write_error)?;
    Ok(())
}

/// Writes a text report to stdout fitted to the terminal's width
/// ([`crate::grid::fit`]: `COLUMNS`, else the terminal's; whole in a pipe).
pub fn print_text(text: &str) -> anyhow::Result<()> {
    print(&crate::grid::fit(text, crate::grid::terminal_width()))
}

/// Writes `text` to stdout for a command whose work goes on whatever
/// happens to its output (a run is saved even when nobody reads its
/// report); a write error other than a closed pipe is said on stderr.
pub fn print_anyway(text: &str) {
    match print(text) {
        Err(e) if super::exit_code(&e) != 0 => eprintln!("warning: {}", super::error_line(&e)),
        _ => {}
    }
}
