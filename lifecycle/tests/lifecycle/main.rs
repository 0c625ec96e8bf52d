//! The admission protocol as a lifecycle, one test binary: the exhaustive
//! model check and its documentation, the mutants that prove every safety
//! property is tested, and the model's traces replayed on the real runtime.

mod model;
mod mutants;
mod replay;
