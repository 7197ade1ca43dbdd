//! `--output FILE` (`run`, `report`, `compare`): what the command prints on
//! stdout — the report, the JSON document, the table — goes to FILE
//! instead, as fio's `--output`. It is written to a file of its own beside
//! FILE and renamed over FILE only once the command printed something: a
//! command refused before it printed leaves an existing FILE as it was.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use super::CommandError;

/// stdout redirected to a file that becomes `path` when the command ends.
pub struct OutputFile {
    path: PathBuf,
    partial: PathBuf,
}

impl OutputFile {
    /// Sends stdout to a new file beside `path`; a directory, a missing
    /// directory or one dbio cannot write in is refused in one line.
    pub fn redirect(path: &Path) -> Result<OutputFile, CommandError> {
        let refuse = |why: String| {
            CommandError::Usage(format!(
                "--output {}: {why}; give a file in a directory you can write",
                path.display()
            ))
        };
        if path.is_dir() {
            return Err(refuse("is a directory".into()));
        }
        let name = path
            .file_name()
            .ok_or_else(|| refuse("names no file".into()))?;
        let mut partial_name = std::ffi::OsString::from(".");
        partial_name.push(name);
        partial_name.push(format!(".dbio-{}", std::process::id()));
        let partial = path.with_file_name(partial_name);
        let file = File::options()
            .write(true)
            .create_new(true)
            .open(&partial)
            .map_err(|e| refuse(format!("cannot create a file there: {e}")))?;
        let _ = std::io::stdout().flush();
        rustix::stdio::dup2_stdout(&file)
            .map_err(|e| refuse(format!("cannot write to it: {e}")))?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            partial,
        })
    }

    /// Ends the redirection: what was printed replaces `path` (and the
    /// line on stderr says so); nothing printed, nothing changed.
    pub fn finish(self) -> Result<(), CommandError> {
        let _ = std::io::stdout().flush();
        let printed = std::fs::metadata(&self.partial).map_or(0, |m| m.len());
        if printed == 0 {
            let _ = std::fs::remove_file(&self.partial);
            return Ok(());
        }
        std::fs::rename(&self.partial, &self.path).map_err(|e| {
            CommandError::Failed(format!(
                "the output is in {} but could not be renamed to {}: {e}",
                self.partial.display(),
                self.path.display()
            ))
        })?;
        eprintln!("output written to {}", self.path.display());
        Ok(())
    }
}
