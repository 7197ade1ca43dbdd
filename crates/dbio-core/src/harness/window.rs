//! The harness's seam for what records only while a run's threads run
//! (a block-layer capture): opened once every thread has built its state,
//! just before the clock starts, and closed once every thread has ended —
//! so a server's start, a load or a layout before the threads, and a
//! server's shutdown after them, stay out of what it records.

/// Opened and closed by the harness around the run's threads, from the
/// thread that runs the harness.
pub trait Window: Sync {
    /// Every thread is ready; the clock starts when this returns. An error
    /// (one line, naming its cause) fails the run before its start.
    fn open(&self) -> Result<(), String>;
    /// Every thread has ended (also after a failed `open`, or a run that
    /// never started).
    fn close(&self);
}
