//! fcd library.
