//! The oracle, one test binary: its judgement of every hand-written fixture,
//! and the proof that it shares no code with the compiler.

mod fixtures;
mod independence;
