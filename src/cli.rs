//! Command-line interface (being written).
