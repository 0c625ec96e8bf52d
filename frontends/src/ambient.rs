//! Process-wide state: what a release may not change anywhere in its closure.
//!
//! Some operations change state every part of the process shares, and that
//! no region's facts show: the environment (which every child process a sink
//! starts inherits: `git` reads `GIT_DIR`, a database driver its `PG*`
//! variables), the working directory (every relative path a sink resolves),
//! the umask (the mode of every file a sink creates), signal handlers and the
//! logging configuration (what runs, and where text goes, on any event).
//! Writing any of them anywhere in the loaded closure escalates: by
//! assignment, augmented assignment, deletion, a mutating method or a call
//! that sets it. A region the profile pins with a `body` fact was read by a
//! reviewer, whose digest states everything it does: an operation inside it
//! does not escalate, and neither does a signal listener whose function is
//! such a region (`process.on("SIGTERM", shutdown)` with `shutdown` pinned).
//!
//! One [`Table`] per language, held by its frontend
//! ([`crate::Frontend::ambient_table`]), says which operations write such
//! state. Each frontend lists the candidate operations of a file with their
//! names resolved through imports and aliases ([`crate::Frontend::ambient`]); this
//! module matches them against the table, language-neutrally, and
//! [`crate::ambient_check`] escalates on the first one outside reviewed code.

use crate::ts::Node;

/// How an entry's path writes its state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Writes {
    /// Calling it writes (`os.putenv`); a reference that is not called may be called elsewhere.
    Call,
    /// Calling it with an argument writes (`process.umask(m)`; without one it reads).
    CallWithArgs,
    /// Calling it with a signal name (a literal `SIG…`, or anything not a
    /// literal) installs a handler (`process.on("SIGINT", …)`).
    Listener,
    /// An object: writing it, a member or an item of it, or calling one of
    /// the table's mutating methods on it (`os.environ.setdefault`).
    Object,
    /// Calling it writes, unless every argument is a keyword the entry lists
    /// with a value it allows: `logging.basicConfig(level=…, stream=sys.stderr)`
    /// only says how much is written to a standard stream, which no sink
    /// reads; `filename=` or `handlers=` sends text somewhere else.
    CallUnlessQuiet(&'static [Quiet]),
}

/// A keyword argument that leaves a configuration call without effect on
/// any sink, and the values it may have (`None`: any; otherwise the resolved
/// names allowed, such as `sys.stderr`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Quiet {
    pub keyword: &'static str,
    pub values: Option<&'static [&'static str]>,
}

/// One operation on process-wide state.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    /// The resolved path, as the language's frontend spells it.
    pub path: &'static str,
    /// The state it writes, for the reason.
    pub state: &'static str,
    pub writes: Writes,
}

/// One language's operations on process-wide state.
pub struct Table {
    pub entries: &'static [Entry],
    /// Methods that change the object they are called on.
    pub mutators: &'static [&'static str],
    /// Calls that write their first argument (`Object.assign(process.env, …)`).
    pub writes_first_argument: &'static [&'static str],
}

pub const ENV: &str = "the process environment";
pub const CWD: &str = "the working directory";
pub const UMASK: &str = "the umask";
pub const SIGNALS: &str = "the signal handlers";
pub const LOGGING: &str = "the logging configuration";

pub const fn call(path: &'static str, state: &'static str) -> Entry {
    Entry { path, state, writes: Writes::Call }
}

pub const fn object(path: &'static str, state: &'static str) -> Entry {
    Entry { path, state, writes: Writes::Object }
}

pub const fn any(keyword: &'static str) -> Quiet {
    Quiet { keyword, values: None }
}

/// What a frontend found at one node, its names resolved.
#[derive(Debug, Clone)]
pub enum Use {
    /// `PATH` named as a value or a callee that is not called here.
    Reference(String),
    /// `PATH(…)`: the callee, the number of arguments, the first argument
    /// as a plain string literal when it is one, and the keyword arguments
    /// (Python's `name=value`), each value's resolved name when it is one.
    Called { callee: String, args: usize, first: Option<String>, keywords: Vec<(String, Option<String>)> },
    /// `PATH` (or `PATH[…]`, spelled `PATH[]`) assigned, augmented, deleted
    /// or handed to a call that writes its first argument.
    Written(String),
}

/// A candidate operation of one file.
#[derive(Debug, Clone)]
pub struct Op<'a> {
    pub node: Node<'a>,
    pub what: Use,
    /// The function a call installs (its last argument), when the file
    /// binds it exactly once or it is written inline: a signal listener
    /// whose function is a pinned region is reviewed code.
    pub handler: Option<Node<'a>>,
}

impl<'a> Op<'a> {
    pub fn new(node: Node<'a>, what: Use) -> Op<'a> {
        Op { node, what, handler: None }
    }
}

/// The entry `what` writes, if any.
pub fn classify(table: &Table, what: &Use) -> Option<&'static Entry> {
    let under = |path: &str, object: &str| {
        path.strip_prefix(object).is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('[') || rest.starts_with('('))
    };
    let method_of = |path: &str| {
        table
            .entries
            .iter()
            .filter(|e| e.writes == Writes::Object)
            .find(|e| path.strip_prefix(e.path).and_then(|rest| rest.strip_prefix('.')).is_some_and(|m| table.mutators.contains(&m)))
    };
    match what {
        Use::Written(path) => table.entries.iter().find(|e| e.writes == Writes::Object && under(path, e.path)),
        Use::Reference(path) => table.entries.iter().find(|e| e.writes != Writes::Object && e.path == path).or_else(|| method_of(path)),
        Use::Called { callee, args, first, keywords } => table
            .entries
            .iter()
            .find(|e| {
                e.path == callee
                    && match e.writes {
                        Writes::Call => true,
                        Writes::CallWithArgs => *args > 0,
                        Writes::Listener => first.as_deref().is_none_or(|s| s.starts_with("SIG")),
                        Writes::CallUnlessQuiet(quiet) => !is_quiet(quiet, *args, keywords),
                        Writes::Object => false,
                    }
            })
            .or_else(|| method_of(callee)),
    }
}

/// Whether a call's arguments are all keywords of `quiet`, each with a value it allows.
fn is_quiet(quiet: &[Quiet], args: usize, keywords: &[(String, Option<String>)]) -> bool {
    args == keywords.len()
        && keywords.iter().all(|(name, value)| {
            quiet.iter().any(|q| q.keyword == name && q.values.is_none_or(|allowed| value.as_deref().is_some_and(|v| allowed.contains(&v))))
        })
}

/// Whether a write to `path` is one [`crate::ambient_check`] judges (so another check can leave it to it).
pub fn is_state_write(table: &Table, path: &str) -> bool {
    classify(table, &Use::Written(path.to_owned())).is_some()
}
