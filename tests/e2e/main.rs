//! End-to-end tests against real compilers.
