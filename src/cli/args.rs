//! Command-line arguments (defined in `loki_hotpath::cli_args`, see there why).

pub use loki_hotpath::cli_args::*;
