//! How the control API refuses a request.

/// A request refused: its HTTP status and a one-line reason.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    /// HTTP status (4xx: the request; 503: the pipeline is stopping).
    pub status: u16,
    /// What is wrong, naming the field or the name.
    pub message: String,
}

impl ApiError {
    /// 400: the body or a value in it.
    pub fn bad(message: impl Into<String>) -> Self {
        Self { status: 400, message: message.into() }
    }

    /// 404: a path or a name that does not exist.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self { status: 404, message: message.into() }
    }

    /// 409: a change the running pipeline cannot make.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self { status: 409, message: message.into() }
    }

    /// The JSON body of the error.
    pub fn body(&self) -> String {
        serde_json::json!({ "error": self.message }).to_string()
    }
}
