//! Exit codes and error types (being written).
