//! fcd-model: the vocabulary every stage of fcd shares, and nothing that parses
//! source. Effects, facts and anchors ([`effect`]); ordered first-match rules
//! and effect templates ([`rules`]); the digest-bound summary ([`summary`]);
//! the one serialization that is hashed or signed ([`canon`]); input errors
//! that name file, line and reason ([`error`]).
//!
//! The verifier and the runtime depend on this crate alone, so checking a
//! summary or a certificate never builds a tree-sitter grammar.

pub mod canon;
pub mod command_line;
pub mod effect;
pub mod error;
pub mod refusal;
pub mod rules;
pub mod sql;
pub mod summary;
pub mod template;
pub mod url;

pub use error::InputError;
