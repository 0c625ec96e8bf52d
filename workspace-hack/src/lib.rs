//! No code: this crate exists for its manifest. cargo-hakari writes into it
//! the union of the third-party features every build of the workspace asks
//! for, and every crate depends on it, so `cargo test --workspace`,
//! `cargo xtask …` and `cargo build --bin fcd` resolve each dependency to
//! the same features and share one build of it instead of rebuilding it
//! (on CI's fresh machine each such switch cost minutes). After changing a
//! dependency, run `cargo hakari generate` (see README.md here).
