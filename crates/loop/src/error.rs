//! Errors of the generation loop.

/// What went wrong before or during generation.
#[derive(Debug, thiserror::Error)]
pub enum LoopError {
    /// The request is invalid; nothing was sent to a model.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// A sample could not be read, profiled or checked.
    #[error("sample data: {0}")]
    Data(String),
}
