//! Rules: `when <predicate> -> effects | reject(code) | unknown(reason)`.
//!
//! These are the compiled, serializable forms stored in a summary and read
//! back by the verifier, plus their evaluation against one concrete call.
//! Evaluation never guesses: a predicate over a missing argument is false, a
//! template that names a value the call lacks makes the outcome UNKNOWN.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::effect::{Effect, Exposure};
use crate::sql::SqlGrammar;
pub use crate::template::{Pattern, Template, TemplateGap};
use crate::url::UrlTest;

/// One ordered first-match rule of a summary.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    pub when: Predicate,
    pub then: Outcome,
    /// Facts this rule was compiled from (its `requires`), for provenance.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub facts: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// Where the author wrote it: its position among the profile's
    /// `[[rules]]` and its line, so a decision names the author's rule, not
    /// its place in this summary (a shape keeps only the rules its facts
    /// allow). None for the catch-all fcd adds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<RuleSource>,
}

impl Rule {
    /// How a decision names the rule at `index` of its summary: with the
    /// author's rule it was compiled from, or as fcd's catch-all.
    pub fn named(&self, index: usize) -> String {
        match &self.source {
            Some(source) => format!("rule {index} ({source})"),
            None => format!("rule {index} (the catch-all fcd adds)"),
        }
    }
}

/// A rule's place in `profile.toml`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RuleSource {
    /// 0-based position among `[[rules]]` (`rules[N]` in load errors).
    pub rule: usize,
    /// 1-based line of the rule's `when`.
    pub line: u32,
}

impl std::fmt::Display for RuleSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "profile.toml rules[{}], line {}", self.rule, self.line)
    }
}

/// A condition over the call's arguments and the authenticated environment.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Predicate {
    Always,
    All(Vec<Predicate>),
    Any(Vec<Predicate>),
    Not(Box<Predicate>),
    /// A test on the argument with this name.
    Arg {
        name: String,
        test: Test,
    },
    /// A test on an environment value: `principal`, `destination` or `config.KEY`.
    Env {
        path: String,
        test: Test,
    },
}

/// A test on one value.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Test {
    /// A string starting with this prefix.
    StartsWith(String),
    /// A string the regular expression matches; named groups become template values.
    Matches(Pattern),
    /// A value of this JSON type.
    Type(ValueType),
    /// A value equal to this one.
    Equals(Value),
    /// The value is absent.
    Absent,
    /// The value is present.
    Present,
    /// An array at least one of whose elements passes the test (an empty array does not).
    AnyElement(Box<Test>),
    /// An array every element of which passes the test (an empty array does).
    EveryElement(Box<Test>),
    /// An absolute path that, after lexical normalization (`//`, `.` and `..`
    /// folded), is one of the directories the environment value at this path
    /// names (a string or an array of strings, each absolute and normalized
    /// the same way) or lies below one at a `/` boundary. Symbolic links are
    /// not followed: whether the handler resolves them is the envelope's to say.
    Inside(String),
    /// As [`Test::Inside`], but strictly below a directory: never one of the
    /// directories itself (a write aimed at the directory acts beside it).
    Below(String),
    /// An absolute path that, after the same lexical normalization, starts
    /// with one of the directories as a plain string, with no `/` boundary
    /// (`/srv/data2/x` is prefixed by `/srv/data`): the containment test of a
    /// handler that compares `normalize(path).startsWith(dir)`.
    PrefixedBy(String),
    /// A string that is one statement that only reads, by the grammar of
    /// the driver's SQL dialect and the reviewed allowlists it carries
    /// ([`crate::sql`]): never a pattern over the text.
    SqlRead(SqlGrammar),
    /// A string that is a URL by the named grammar, with its scheme and its
    /// host's class among the listed ones ([`crate::url`]); a text the
    /// grammar does not parse cannot be evaluated.
    Url(UrlTest),
}

/// JSON value types an argument may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ValueType {
    String,
    Integer,
    Number,
    Boolean,
    Object,
    Array,
}

impl ValueType {
    /// How a JSON value's type reads in a message: "a string", "an integer", …
    pub fn of_value(v: &Value) -> &'static str {
        match v {
            Value::Null => "null",
            Value::Bool(_) => "a boolean",
            Value::Number(n) if n.is_f64() => "a number",
            Value::Number(_) => "an integer",
            Value::String(_) => "a string",
            Value::Array(_) => "an array",
            Value::Object(_) => "an object",
        }
    }

    pub fn parse(s: &str) -> Option<ValueType> {
        Some(match s {
            "string" => ValueType::String,
            "integer" => ValueType::Integer,
            "number" => ValueType::Number,
            "boolean" => ValueType::Boolean,
            "object" => ValueType::Object,
            "array" => ValueType::Array,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            ValueType::String => "string",
            ValueType::Integer => "integer",
            ValueType::Number => "number",
            ValueType::Boolean => "boolean",
            ValueType::Object => "object",
            ValueType::Array => "array",
        }
    }

    pub fn holds(self, v: &Value) -> bool {
        match self {
            ValueType::String => v.is_string(),
            ValueType::Integer => v.is_i64() || v.is_u64(),
            ValueType::Number => v.is_number(),
            ValueType::Boolean => v.is_boolean(),
            ValueType::Object => v.is_object(),
            ValueType::Array => v.is_array(),
        }
    }
}

/// What a matched rule says.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum Outcome {
    /// The handler runs and has these effects.
    Effects(Vec<EffectTemplate>),
    /// The handler refuses the call before any effect, with this code.
    Reject(String),
    /// The call is outside the reviewed envelope.
    Unknown(String),
}

/// An effect record with `{…}` templates still to fill from the call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EffectTemplate {
    /// `domain:operation`.
    pub op: Template,
    pub principal: Template,
    pub destination: Template,
    pub resource: Template,
    pub exposure: Template,
    pub mutation: bool,
    pub write_scopes: Vec<Template>,
}

/// The values a call brings to evaluation.
pub struct Bindings<'a> {
    pub arguments: &'a serde_json::Map<String, Value>,
    pub principal: &'a str,
    pub destination: &'a str,
    pub config: &'a Value,
}

impl Bindings<'_> {
    fn env(&self, path: &str) -> Option<Value> {
        match path {
            "principal" => Some(Value::String(self.principal.to_owned())),
            "destination" => Some(Value::String(self.destination.to_owned())),
            // `principal_login` is the part after `user:`, the account's name.
            "principal_login" => Some(Value::String(self.principal.split_once(':').map_or(self.principal, |(_, l)| l).to_owned())),
            _ => {
                let key = path.strip_prefix("config.")?;
                self.config.get(key).cloned()
            }
        }
    }
}

impl Predicate {
    /// Whether the predicate holds; named regex groups of matching tests are
    /// added to `captures`. `Err` when a test cannot be evaluated on the value
    /// it is given (a pattern test on a non-string, an equality across JSON
    /// types, a regular expression that does not compile): the caller must
    /// decide UNKNOWN, never fall through to a later rule, since a negation or
    /// a later rule would otherwise read "cannot tell" as "does not hold".
    pub fn holds(&self, b: &Bindings<'_>, captures: &mut BTreeMap<String, String>) -> Result<bool, Unevaluable> {
        Ok(match self {
            Predicate::Always => true,
            Predicate::All(ps) => {
                for p in ps {
                    if !p.holds(b, captures)? {
                        return Ok(false);
                    }
                }
                true
            }
            Predicate::Any(ps) => {
                for p in ps {
                    if p.holds(b, captures)? {
                        return Ok(true);
                    }
                }
                false
            }
            Predicate::Not(p) => !p.holds(b, &mut BTreeMap::new())?,
            Predicate::Arg { name, test } => test.holds(b.arguments.get(name), b, captures).map_err(|e| e.on(&format!("argument `{name}`")))?,
            Predicate::Env { path, test } => test.holds(b.env(path).as_ref(), b, captures).map_err(|e| e.on(&format!("env `{path}`")))?,
        })
    }
}

/// Why a condition could not be evaluated on a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unevaluable(pub String);

impl Unevaluable {
    fn on(self, subject: &str) -> Unevaluable {
        Unevaluable(format!("{subject}: {}", self.0))
    }
}

impl Test {
    fn holds(&self, value: Option<&Value>, b: &Bindings<'_>, captures: &mut BTreeMap<String, String>) -> Result<bool, Unevaluable> {
        let not_string = |v: &Value| Unevaluable(format!("a string test on {v}, which is not a string"));
        let not_array = |v: &Value| Unevaluable(format!("an element test on {v}, which is not an array"));
        Ok(match (self, value) {
            (Test::Absent, v) => v.is_none() || v == Some(&Value::Null),
            (Test::Present, v) => !(v.is_none() || v == Some(&Value::Null)),
            // null is an omitted argument: only `absent`/`present` say anything about it.
            (_, None | Some(Value::Null)) => false,
            (Test::StartsWith(prefix), Some(v)) => v.as_str().ok_or_else(|| not_string(v))?.starts_with(prefix.as_str()),
            (Test::Matches(pattern), Some(v)) => {
                let s = v.as_str().ok_or_else(|| not_string(v))?;
                let Some(caps) = pattern.captures(s) else { return Ok(false) };
                captures.extend(caps);
                true
            }
            (Test::SqlRead(grammar), Some(v)) => grammar.reads(v.as_str().ok_or_else(|| not_string(v))?).is_ok(),
            (Test::Url(url), Some(v)) => url.holds(v.as_str().ok_or_else(|| not_string(v))?).map_err(Unevaluable)?,
            (Test::Type(t), Some(v)) => t.holds(v),
            (Test::Equals(want), Some(v)) if json_kind(want) != json_kind(v) => {
                return Err(Unevaluable(format!("`= {want}` compared with {v}, a value of another type")));
            }
            (Test::Equals(want), Some(v)) => want == v,
            // Every element is evaluated, so an element the test cannot judge
            // is never hidden by an earlier one that decided the answer: the
            // answer is UNKNOWN whenever any element is unevaluable. Element
            // groups are not template values (which element's would they be?).
            (Test::AnyElement(test) | Test::EveryElement(test), Some(v)) => {
                let elements = v.as_array().ok_or_else(|| not_array(v))?;
                let mut passed = 0;
                for (i, e) in elements.iter().enumerate() {
                    // An element is never absent: null in an array is a value the test must judge.
                    let judged = if e.is_null() { Err(Unevaluable("null".into())) } else { test.holds(Some(e), b, &mut BTreeMap::new()) };
                    passed += usize::from(judged.map_err(|u| u.on(&format!("element {i}")))?);
                }
                match self {
                    Test::AnyElement(_) => passed > 0,
                    _ => passed == elements.len(),
                }
            }
            (Test::Inside(path) | Test::Below(path) | Test::PrefixedBy(path), Some(v)) => {
                let file = v.as_str().ok_or_else(|| not_string(v))?;
                let file = normalize_absolute(file).ok_or_else(|| Unevaluable(format!("`{file}` is not an absolute path")))?;
                let roots = match b.env(path) {
                    Some(Value::String(dir)) => vec![dir],
                    Some(Value::Array(dirs)) if !dirs.is_empty() => dirs
                        .iter()
                        .map(|d| d.as_str().map(str::to_owned).ok_or_else(|| Unevaluable(format!("env `{path}` holds {d}, which is not a path"))))
                        .collect::<Result<_, _>>()?,
                    _ => return Err(Unevaluable(format!("env `{path}` names no directory"))),
                };
                let mut inside = false;
                for root in roots {
                    let root = normalize_absolute(&root).ok_or_else(|| Unevaluable(format!("env `{path}`: `{root}` is not an absolute path")))?;
                    let below = file != root && (root == "/" || file.strip_prefix(root.as_str()).is_some_and(|rest| rest.starts_with('/')));
                    inside |= match self {
                        Test::PrefixedBy(_) => file.starts_with(root.as_str()),
                        _ => below || (file == root && matches!(self, Test::Inside(_))),
                    };
                }
                inside
            }
        })
    }
}

/// An absolute `/`-separated path with empty and `.` segments dropped and
/// `..` folded into its parent (at the root it stays at the root, as POSIX
/// resolves it); `None` for a relative path or one holding a NUL byte.
pub fn normalize_absolute(path: &str) -> Option<String> {
    if !path.starts_with('/') || path.contains('\0') {
        return None;
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            s => segments.push(s),
        }
    }
    Some(format!("/{}", segments.join("/")))
}

/// The JSON type of a value, for comparisons that only make sense within one type.
fn json_kind(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// Fills a template's `{arg.NAME}`, `{env.PATH}` and `{CAPTURE}` placeholders from a call.
pub fn render(template: &Template, b: &Bindings<'_>, captures: &BTreeMap<String, String>) -> Result<String, TemplateGap> {
    template.render(&|key| placeholder_value(key, b, captures))
}

fn placeholder_value(key: &str, b: &Bindings<'_>, captures: &BTreeMap<String, String>) -> Result<String, TemplateGap> {
    if let Some(name) = key.strip_prefix("arg.") {
        match b.arguments.get(name) {
            Some(Value::String(s)) => Ok(s.clone()),
            Some(Value::Null) | None => Err(TemplateGap(format!("the call gives no argument `{name}`"))),
            Some(other) => Ok(other.to_string()),
        }
    } else if let Some(path) = key.strip_prefix("env.") {
        match b.env(path) {
            Some(Value::String(s)) => Ok(s),
            Some(Value::Null) | None => Err(TemplateGap(format!("the environment has no `{path}`"))),
            Some(other) => Ok(other.to_string()),
        }
    } else {
        captures.get(key).cloned().ok_or_else(|| TemplateGap(format!("no value for `{{{key}}}`")))
    }
}

impl EffectTemplate {
    /// The concrete effect for one call.
    pub fn instantiate(&self, b: &Bindings<'_>, captures: &BTreeMap<String, String>) -> Result<Effect, TemplateGap> {
        let op = render(&self.op, b, captures)?;
        let (domain, operation) = op.split_once(':').ok_or_else(|| TemplateGap(format!("operation `{op}` is not `domain:operation`")))?;
        let exposure_text = render(&self.exposure, b, captures)?;
        let exposure = Exposure::parse(&exposure_text).ok_or_else(|| TemplateGap(format!("exposure `{exposure_text}` is not none, private or public")))?;
        Ok(Effect {
            domain: domain.to_owned(),
            operation: operation.to_owned(),
            principal: render(&self.principal, b, captures)?,
            destination: render(&self.destination, b, captures)?,
            resource: render(&self.resource, b, captures)?,
            exposure,
            mutation: self.mutation,
            write_scopes: self.write_scopes.iter().map(|s| render(s, b, captures)).collect::<Result<_, _>>()?,
        })
    }
}

impl std::fmt::Display for Predicate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let join = |f: &mut std::fmt::Formatter<'_>, ps: &[Predicate], op: &str| {
            f.write_str("(")?;
            for (i, p) in ps.iter().enumerate() {
                if i > 0 {
                    write!(f, " {op} ")?;
                }
                write!(f, "{p}")?;
            }
            f.write_str(")")
        };
        match self {
            Predicate::Always => f.write_str("always"),
            Predicate::All(ps) => join(f, ps, "and"),
            Predicate::Any(ps) => join(f, ps, "or"),
            Predicate::Not(p) => write!(f, "not {p}"),
            Predicate::Arg { name, test } => write!(f, "{name} {test}"),
            Predicate::Env { path, test } => write!(f, "env.{path} {test}"),
        }
    }
}

impl std::fmt::Display for Test {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Test::StartsWith(p) => write!(f, "starts with {p:?}"),
            Test::Matches(r) => write!(f, "matches /{r}/"),
            Test::SqlRead(g) => write!(f, "is one statement that only reads, by {}'s grammar", g.dialect),
            Test::Url(u) => write!(f, "{u}"),
            Test::Type(t) => write!(f, "is a {}", t.name()),
            Test::Equals(v) => write!(f, "= {v}"),
            Test::Absent => f.write_str("is absent"),
            Test::Present => f.write_str("is present"),
            Test::AnyElement(t) => write!(f, "has an element that {t}"),
            Test::EveryElement(t) => write!(f, "has only elements that {t}"),
            Test::Inside(path) => write!(f, "is a path inside env.{path}"),
            Test::Below(path) => write!(f, "is a path strictly below env.{path}"),
            Test::PrefixedBy(path) => write!(f, "is a path that starts with env.{path} as a string"),
        }
    }
}

impl std::fmt::Display for Outcome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Outcome::Reject(code) => write!(f, "reject {code}"),
            Outcome::Unknown(reason) => write!(f, "unknown ({reason})"),
            Outcome::Effects(effects) => {
                let ops: Vec<String> = effects
                    .iter()
                    .map(|e| format!("{} on {} (exposure {}{})", e.op, e.resource, e.exposure, if e.mutation { ", mutation" } else { "" }))
                    .collect();
                write!(f, "effects {}", ops.join(", "))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn bindings(args: &Value) -> Bindings<'_> {
        static NULL: Value = Value::Null;
        Bindings { arguments: args.as_object().unwrap(), principal: "user:alice", destination: "d", config: &NULL }
    }

    #[test]
    fn regex_captures_fill_templates() {
        let args = json!({"target": "--output=/tmp/x"});
        let b = bindings(&args);
        let mut caps = BTreeMap::new();
        let p = Predicate::Arg { name: "target".into(), test: Test::Matches(Pattern::new("^--output=(?P<path>.+)$").unwrap()) };
        assert!(p.holds(&b, &mut caps).unwrap());
        assert_eq!(render(&"w {path} by {env.principal_login}".parse().unwrap(), &b, &caps).unwrap(), "w /tmp/x by alice");
    }

    #[test]
    fn missing_argument_is_a_template_gap() {
        let args = json!({});
        let err = render(&"{arg.repo_path}".parse().unwrap(), &bindings(&args), &BTreeMap::new()).unwrap_err();
        assert!(err.0.contains("repo_path"));
    }

    #[test]
    fn absent_counts_null() {
        let args = json!({"private": null});
        let b = bindings(&args);
        assert!(Test::Absent.holds(b.arguments.get("private"), &b, &mut BTreeMap::new()).unwrap());
    }

    #[test]
    fn placeholders_are_listed_and_braces_checked() {
        assert_eq!("{a}/{{x}}/{arg.b}".parse::<Template>().unwrap().placeholders(), vec!["a", "arg.b"]);
        assert!("{a".parse::<Template>().is_err());
    }

    #[test]
    fn a_test_on_a_value_of_the_wrong_type_cannot_be_evaluated() {
        let args = json!({"private": "true", "name": ["x"]});
        let b = bindings(&args);
        let mut caps = BTreeMap::new();
        let eq = Predicate::Arg { name: "private".into(), test: Test::Equals(json!(true)) };
        assert!(eq.holds(&b, &mut caps).is_err());
        // A negation must not turn "cannot tell" into "holds".
        let not_matching = Predicate::Not(Box::new(Predicate::Arg { name: "name".into(), test: Test::Matches(Pattern::new("^a$").unwrap()) }));
        assert!(not_matching.holds(&b, &mut caps).is_err());
        let any = Predicate::Any(vec![Predicate::Always, not_matching]);
        assert_eq!(any.holds(&b, &mut caps), Ok(true));
    }
    /// A URL test reads the argument with its grammar: a text the grammar
    /// refuses is UNKNOWN, so `not` never turns it into a pass.
    #[test]
    fn a_url_the_grammar_refuses_is_never_a_pass() {
        use crate::url::{HostClass, UrlTest};
        let private = Test::Url(UrlTest { parser: "whatwg".into(), schemes: None, hosts: Some(vec![HostClass::Loopback, HostClass::LinkLocal]) });
        let args = json!({ "u": "http://2130706433/", "v": "http://[::1", "w": 7 });
        let b = bindings(&args);
        let arg = |name: &str| Predicate::Arg { name: name.into(), test: private.clone() };
        assert_eq!(arg("u").holds(&b, &mut BTreeMap::new()), Ok(true));
        assert!(Predicate::Not(Box::new(arg("v"))).holds(&b, &mut BTreeMap::new()).is_err());
        assert!(arg("w").holds(&b, &mut BTreeMap::new()).is_err());
        assert_eq!(arg("absent").holds(&b, &mut BTreeMap::new()), Ok(false));
    }

    fn holds_with_config(test: Test, value: Value, config: &Value) -> Result<bool, Unevaluable> {
        let args = json!({ "v": value });
        let b = Bindings { arguments: args.as_object().unwrap(), principal: "user:alice", destination: "d", config };
        Predicate::Arg { name: "v".into(), test }.holds(&b, &mut BTreeMap::new())
    }

    #[test]
    fn element_tests_judge_every_element() {
        let dash = || Box::new(Test::StartsWith("-".into()));
        let none = Value::Null;
        assert_eq!(holds_with_config(Test::AnyElement(dash()), json!(["a", "-x"]), &none), Ok(true));
        assert_eq!(holds_with_config(Test::AnyElement(dash()), json!(["a", "b"]), &none), Ok(false));
        assert_eq!(holds_with_config(Test::AnyElement(dash()), json!([]), &none), Ok(false));
        assert_eq!(holds_with_config(Test::EveryElement(dash()), json!([]), &none), Ok(true));
        assert_eq!(holds_with_config(Test::EveryElement(dash()), json!(["-a", "b"]), &none), Ok(false));
        // An element the test cannot judge makes the whole test unevaluable, even after a decisive one.
        let err = holds_with_config(Test::AnyElement(dash()), json!(["-x", 3]), &none).unwrap_err();
        assert!(err.0.contains("element 1"), "{err:?}");
        assert!(holds_with_config(Test::EveryElement(dash()), json!(["a", null]), &none).is_err());
        assert!(holds_with_config(Test::AnyElement(dash()), json!("-x"), &none).is_err());
    }

    #[test]
    fn inside_normalizes_and_stops_at_a_slash() {
        let config = json!({ "dirs": ["/srv/data", "/tmp/x/"], "one": "/home/a", "bad": ["rel/dir"], "empty": [] });
        let inside = |v: &str, key: &str| holds_with_config(Test::Inside(format!("config.{key}")), json!(v), &config);
        assert_eq!(inside("/srv/data/f.txt", "dirs"), Ok(true));
        assert_eq!(inside("/srv/data", "dirs"), Ok(true));
        assert_eq!(inside("/srv/database/f", "dirs"), Ok(false));
        assert_eq!(inside("/srv/data/../etc/passwd", "dirs"), Ok(false));
        assert_eq!(inside("/srv/data/./a//b/../c", "dirs"), Ok(true));
        assert_eq!(inside("/tmp/x/y", "dirs"), Ok(true));
        assert_eq!(inside("/../../srv/data/z", "dirs"), Ok(true));
        assert_eq!(inside("/home/a/b", "one"), Ok(true));
        assert!(inside("srv/data/f", "dirs").is_err(), "a relative path depends on the server's directory");
        // `below` is `inside` without the directories themselves.
        let below = |v: &str, key: &str| holds_with_config(Test::Below(format!("config.{key}")), json!(v), &config);
        assert_eq!(below("/srv/data/f.txt", "dirs"), Ok(true));
        assert_eq!(below("/srv/data", "dirs"), Ok(false));
        assert_eq!(below("/srv/data/./", "dirs"), Ok(false));
        assert_eq!(below("/srv/data/x/..", "dirs"), Ok(false));
        assert_eq!(below("/srv/database/f", "dirs"), Ok(false));
        assert_eq!(below("/srv/data/../etc/passwd", "dirs"), Ok(false));
        assert!(below("data/f", "dirs").is_err());
        assert!(inside("/srv/data/f", "bad").is_err());
        assert!(inside("/srv/data/f", "empty").is_err());
        assert!(inside("/srv/data/f", "missing").is_err());
        assert_eq!(normalize_absolute("/a/b/../../.."), Some("/".into()));
    }

    #[test]
    fn prefixed_by_is_a_plain_string_prefix_after_normalization() {
        let config = json!({ "dirs": ["/srv/data", "/tmp/x/"], "one": "/srv/data", "root": "/", "bad": ["rel/dir"], "empty": [] });
        let prefixed = |v: &str, key: &str| holds_with_config(Test::PrefixedBy(format!("config.{key}")), json!(v), &config);
        assert_eq!(prefixed("/srv/data/f.txt", "one"), Ok(true));
        assert_eq!(prefixed("/srv/data", "one"), Ok(true));
        // No `/` boundary: a sibling whose name starts like the directory passes, as `startsWith` lets it.
        assert_eq!(prefixed("/srv/data2/notes.txt", "one"), Ok(true));
        assert_eq!(prefixed("/srv/database", "dirs"), Ok(true));
        assert_eq!(prefixed("/srv/dat", "one"), Ok(false));
        assert_eq!(prefixed("/srv", "one"), Ok(false));
        // Normalized first: a climb out is judged where it lands, `//` and `.` are dropped.
        assert_eq!(prefixed("/srv/data/../../etc/cron.d/job", "one"), Ok(false));
        assert_eq!(prefixed("/srv/data/../data2/x", "one"), Ok(true));
        assert_eq!(prefixed("//srv/./data//f", "one"), Ok(true));
        // The directory is normalized too: its trailing `/` is no boundary.
        assert_eq!(prefixed("/tmp/xy", "dirs"), Ok(true));
        assert_eq!(prefixed("/etc/passwd", "root"), Ok(true));
        assert!(prefixed("srv/data/f", "one").is_err(), "a relative path depends on the server's directory");
        assert!(prefixed("/srv/data/f", "bad").is_err());
        assert!(prefixed("/srv/data/f", "empty").is_err());
        assert!(prefixed("/srv/data/f", "missing").is_err());
        // Wherever `inside` holds, so does `prefixed-by`, never the other way round.
        for p in ["/srv/data/a", "/srv/data", "/srv/data2", "/srv/database/f", "/etc"] {
            let inside = holds_with_config(Test::Inside("config.one".into()), json!(p), &config).unwrap();
            assert!(!inside || prefixed(p, "one").unwrap(), "{p}");
        }
    }
}
