//! What a method does to the array, map or set it is called on, in one
//! table per answer: the checks that protect state a region reads (module
//! state, a factory's `state:` local, what a reviewed wrapper reads) all
//! judge a method call by these.

/// Methods that read an array and never call back with it.
pub(super) const READ_METHODS: &[&str] = &["join", "includes", "indexOf", "lastIndexOf", "at", "toString", "slice", "concat"];

/// Methods that change the array, map or set they are called on in place.
pub(super) const MUTATING_METHODS: &[&str] =
    &["push", "pop", "shift", "unshift", "splice", "sort", "reverse", "fill", "copyWithin", "set", "add", "delete", "clear"];
