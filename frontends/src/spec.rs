//! What a frontend is asked to find: regions and fact specifications.
//!
//! The profile compiler (crate `fcd`) turns reviewed TOML into these plain
//! values; frontends never read TOML themselves. The vocabulary is generic on
//! purpose: a call with an argument shape, a guard that exits before a node.
//! Languages implement the vocabulary; profiles combine it.

use std::collections::BTreeMap;
use std::fmt;

/// A reviewed source span, by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionSpec {
    /// The profile's name for the region.
    pub name: String,
    pub kind: RegionKind,
    /// A region some releases do not have (a helper added later). When it is
    /// absent nothing calls it and its facts are not stated; when present it
    /// is analysed like any other region.
    pub optional: bool,
    /// The one file (a path from the release root, as anchors print it)
    /// where the region is looked for, when the release defines the name in
    /// more than one file (a helper a bundle copies beside its own module).
    /// The closed call path still checks that each call reaches this
    /// definition and no other.
    pub file: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegionKind {
    /// A function (or method) definition with this name, anywhere in the files; in Python, a class too.
    Function(String),
    /// The outermost function literal inside the function with this name (a
    /// handler a constructor receives as a closure).
    Literal(String),
    /// A module-level variable declaration with this name (a data table).
    Variable(String),
    /// The code that runs when the tool with this name is called: the branch
    /// of a dispatcher that matches the name, or the function a registration
    /// names it for. Verifies the path from the tool's name to the handler.
    Route(String),
    /// The function literal passed, as the last argument, to a call whose
    /// first argument is the string literal with this name: the callback a
    /// registration API runs for the tool (`server.registerTool("write_file",
    /// {…}, async (args) => {…})`). The registering call is one of the
    /// region's call sites, so its callee must be reviewed, and the name must
    /// be a string literal nowhere else in the analysed code.
    Callback(String),
    /// The `case "NAME":` clause of a `switch` on the called tool's name in a
    /// request handler (`switch (name) { case "write_file": … }`): what runs
    /// for the tool is that clause and the handler's statements around the
    /// `switch`; the other clauses are another tool's.
    Case(String),
}

impl fmt::Display for RegionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionKind::Function(name) => write!(f, "function `{name}`"),
            RegionKind::Literal(name) => write!(f, "function literal inside `{name}`"),
            RegionKind::Variable(name) => write!(f, "module-level variable `{name}`"),
            RegionKind::Route(tool) => write!(f, "route of the tool `{tool}`"),
            RegionKind::Callback(tool) => write!(f, "callback registered for the tool `{tool}`"),
            RegionKind::Case(tool) => write!(f, "`case {tool:?}:` of the tool dispatcher"),
        }
    }
}

/// One expected argument of a call or a guard test.
///
/// Written in profiles as `param:NAME`, `var:NAME`, `result:CALLEE`, `str:TEXT`,
/// `format:TEMPLATE` or `any`, with a trailing `?` when the argument may be absent;
/// a leading `*` asks for a splat (Python `*files`, JavaScript `...files`) of that shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArgPattern {
    pub shape: ArgShape,
    pub optional: bool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArgShape {
    /// The region's parameter NAME, unchanged since entry (`#N`: the parameter
    /// at position N, whatever its name; read by the JavaScript frontend).
    Param(String),
    /// A local variable NAME of the region, bound exactly once and never assigned again.
    Var(String),
    /// The tool call's argument NAME, unchanged: `arguments["NAME"]` where
    /// `arguments` is a parameter of the dispatching function, or a parameter
    /// NAME of a function a registration routes the tool to.
    Arg(String),
    /// A local bound exactly once, by its declaration, to the result of a call
    /// of this callee (`const policy = policyFromReadonly(…)`), never assigned
    /// again; `CALLEE(WHAT)` also names what the call's one argument is.
    Result(String),
    /// A splat or spread argument (Python `*files`, JavaScript `...files`)
    /// whose expression has the inner shape: it stands for as many positional
    /// arguments as the value has elements.
    Splat(Box<ArgShape>),
    /// Any single argument (never a splat, which may be several).
    Any,
    /// An argument that is exactly this name or member chain (`A.B.C`).
    Ref(String),
    /// (JavaScript) a local of a function enclosing the region (a factory's
    /// `let`), every use of which in that function is a reviewed one.
    State(String),
    /// A plain string literal with exactly this content.
    Str(String),
    /// A formatted string whose literal parts are the template's and whose
    /// holes (`{name}`) are exactly these identifiers.
    Format(String),
    /// (Python) `str(X)` of one positional argument X of the inner shape:
    /// the value as text (`str(url)` of a pydantic `AnyUrl` is its URL).
    Text(Box<ArgShape>),
}

impl ArgPattern {
    /// Parses the profile spelling; the error says what is accepted.
    pub fn parse(text: &str) -> Result<ArgPattern, String> {
        let (body, optional) = match text.strip_suffix('?') {
            Some(b) => (b, true),
            None => (text, false),
        };
        if let Some(inner) = body.strip_prefix('*') {
            if inner.starts_with('*') || inner.ends_with('?') {
                return Err(format!("`{text}`: a splat is `*` before one argument pattern (`*param:NAME`), with `?` only at the very end"));
            }
            let inner = ArgPattern::parse(inner).map_err(|e| format!("`{text}`: after `*`: {e}"))?;
            return Ok(ArgPattern { shape: ArgShape::Splat(Box::new(inner.shape)), optional });
        }
        Ok(ArgPattern { shape: ArgShape::parse(body, text)?, optional })
    }
}

impl ArgShape {
    /// One shape's spelling (`body`, from the pattern `text`).
    fn parse(body: &str, text: &str) -> Result<ArgShape, String> {
        let name_ok = |name: &str| !name.is_empty() && name.chars().all(|c| c.is_alphanumeric() || c == '_');
        let shape = if let Some(inner) = body.strip_prefix("str(").and_then(|b| b.strip_suffix(')')) {
            if inner.starts_with('*') || inner.ends_with('?') {
                return Err(format!("`{text}`: `str(…)` holds one argument pattern, with `?` only at the very end"));
            }
            ArgShape::Text(Box::new(ArgShape::parse(inner, text)?))
        } else if let Some(name) = body.strip_prefix("param:") {
            let position = name.strip_prefix('#').is_some_and(|i| !i.is_empty() && i.chars().all(|c| c.is_ascii_digit()));
            if !name_ok(name) && !position {
                return Err(format!("`{text}`: a parameter name is letters, digits and `_` (or `#N`, the parameter at position N)"));
            }
            ArgShape::Param(name.to_owned())
        } else if let Some(name) = body.strip_prefix("var:") {
            if !name_ok(name) {
                return Err(format!("`{text}`: a variable name is letters, digits and `_`"));
            }
            ArgShape::Var(name.to_owned())
        } else if let Some(name) = body.strip_prefix("arg:") {
            if !name_ok(name) {
                return Err(format!("`{text}`: an argument name is letters, digits and `_`"));
            }
            ArgShape::Arg(name.to_owned())
        } else if let Some(callee) = body.strip_prefix("result:") {
            // `CALLEE(WHAT)`: the call's one argument is WHAT (JavaScript).
            let name = match callee.split_once('(') {
                Some((name, rest)) if rest.len() > 1 && rest.ends_with(')') => name,
                Some(_) => return Err(format!("`{text}`: `result:CALLEE(WHAT)` needs a non-empty WHAT and a closing `)`")),
                None => callee,
            };
            if name.is_empty() || !name.split('.').all(name_ok) {
                return Err(format!("`{text}`: a callee is dotted names"));
            }
            ArgShape::Result(callee.to_owned())
        } else if body == "any" {
            ArgShape::Any
        } else if let Some(path) = body.strip_prefix("ref:") {
            if path.is_empty() || !path.split('.').all(name_ok) {
                return Err(format!("`{text}`: a reference is dotted names"));
            }
            ArgShape::Ref(path.to_owned())
        } else if let Some(name) = body.strip_prefix("state:") {
            if !name_ok(name) {
                return Err(format!("`{text}`: state is one plain name"));
            }
            ArgShape::State(name.to_owned())
        } else if let Some(s) = body.strip_prefix("str:") {
            ArgShape::Str(s.to_owned())
        } else if let Some(t) = body.strip_prefix("format:") {
            ArgShape::Format(t.to_owned())
        } else {
            return Err(format!(
                "`{text}` is not an argument pattern: expected `param:NAME`, `var:NAME`, `arg:NAME`, `result:CALLEE`, `ref:A.B`, `state:NAME`, `str:TEXT`, `format:TEMPLATE` or `any`, optionally after `*` (a splat) and ending in `?`"
            ));
        };
        Ok(shape)
    }
}

impl fmt::Display for ArgPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.shape)?;
        if self.optional {
            f.write_str("?")?;
        }
        Ok(())
    }
}

impl fmt::Display for ArgShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ArgShape::Splat(inner) => write!(f, "*{inner}")?,
            ArgShape::Param(n) => write!(f, "param:{n}")?,
            ArgShape::Var(n) => write!(f, "var:{n}")?,
            ArgShape::Arg(n) => write!(f, "arg:{n}")?,
            ArgShape::Result(c) => write!(f, "result:{c}")?,
            ArgShape::Any => f.write_str("any")?,
            ArgShape::Ref(p) => write!(f, "ref:{p}")?,
            ArgShape::State(n) => write!(f, "state:{n}")?,
            ArgShape::Str(s) => write!(f, "str:{s}")?,
            ArgShape::Format(t) => write!(f, "format:{t}")?,
            ArgShape::Text(inner) => write!(f, "str({inner})")?,
        }
        Ok(())
    }
}

/// A fact to extract from one region.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FactSpec {
    /// The profile's name for the fact.
    pub name: String,
    pub region: String,
    pub kind: FactKind,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FactKind {
    /// Exactly one call to `callee` in the region, whose positional arguments
    /// match `args` (unchecked when `None`) and which takes no keyword or splat
    /// arguments. With `matching`, only the calls whose arguments match are
    /// counted: none means no fact, two or more a duplicate.
    ///
    /// `keywords` are the keyword (Python) or named (C#) arguments the call
    /// may have, by name, each with its pattern (`?` optional); without it a
    /// keyword argument is outside the shape.
    Call { callee: String, args: Option<Vec<ArgPattern>>, keywords: Option<BTreeMap<String, ArgPattern>>, matching: bool },
    /// A conditional at the top level of the region whose test is a call to
    /// `callee` on `receiver` with `args`, whose body exits on every path, and
    /// which runs before the call fact `before`.
    ///
    /// `receiver` is the method's receiver (Python `target.startswith`), absent
    /// for a plain function call; `negated` asks for `not f(…)` / `!f(…)`; a
    /// `returns` text must appear as a string literal in the exiting return.
    Guard {
        callee: String,
        receiver: Option<ArgPattern>,
        args: Vec<ArgPattern>,
        before: String,
        negated: bool,
        returns: Option<String>,
        /// (JavaScript) the other `&&` conjuncts the test may carry: bare
        /// identifiers bound once in the region; any other conjunct escalates.
        conjuncts: Vec<String>,
        /// (JavaScript) the test compares the call's result with this string
        /// literal (`f(…) === "deny"`, either side) instead of testing it as a boolean.
        equals: Option<String>,
    },
    /// How a tool argument is read and what it is when omitted: exactly one
    /// binding `VAR := HELPER(…, "argument", …)` in the region, where HELPER is
    /// one of the reviewed helpers, each with its rule for the default.
    /// In C#, `argument` may also be the member chain passed to the helper, and
    /// `definition` names the option definition whose explicit default factory
    /// overrides the helper's zero value; `inert` lists the members of the
    /// definition's initializer that do not change the value (any other escalates).
    Default { argument: String, helpers: Vec<(String, DefaultRule)>, definition: Option<String>, inert: Option<Vec<String>> },
    /// What the field `field` of the struct passed as argument `arg` of the
    /// call fact `sink` receives: the variable of the default fact `from`
    /// (optionally through the call `wrap`), or a literal.
    /// (In C#, the field is a member initializer anywhere in the region, and
    /// `wrap` names the nested initializer member holding the value.)
    Field { sink: Option<String>, arg: Option<usize>, field: String, wrap: Option<String>, from: String },
    /// (C#) An option a framework binds from an attribute: the region's one
    /// parameter whose type the closure declares with the auto-property
    /// `property` of type `ty` (as written, `bool?`), carrying the attribute
    /// `attribute` whose named arguments are all `inert` (no name, alias or
    /// default of its own). Omitted, the option leaves the property unset.
    Option { property: String, attribute: String, ty: String, argument: String, inert: Vec<String> },
    /// Where the variable of the default or option fact `from` is passed to the
    /// call fact `sink`: its position or parameter name, and what an omitted
    /// argument is there (the default's value, or the literal of `from ?? LITERAL`).
    Pass { sink: String, from: String },
    /// The region's parameter that the pass fact `from` feeds is mapped to two
    /// literals by one conditional: `var V = P == true ? "A" : "B"`.
    Map { from: String },
    /// The single `"key": "value"` pair inside the region's string literals
    /// (a JSON template, say).
    Key { key: String },
    /// The value a fact `from` stands for (the object a field fact initializes,
    /// the result of a call fact) reaches the call fact `sink` along one
    /// path of single-use locals, call arguments and member initializers,
    /// passing through the member initializer `into` when given.
    Flow { from: String, sink: String, into: Option<String> },
    /// In a data-table region (an object of arrays), the array under `row` and
    /// whether it holds the string `member`.
    Table { row: String, member: String },
    /// A `return RETURNS` reached only under `if` conditions whose conjuncts
    /// are exactly these reviewed comparisons, each used once
    /// (`if (w === "pragma" && d === "sqlite") { if (s.includes("=")) return false }`).
    Exit { returns: String, conditions: Vec<Comparison> },
    /// The region's body is one a person reviewed: its tokens (comments left
    /// out) hash to one of these `sha256:` digests. Pins a helper the other
    /// facts trust (what a parameter reader returns for an omitted argument).
    Body { digests: Vec<String> },
    /// (Python) Functions installed on the object the call fact `before`
    /// goes through, before it: `X.ATTRIBUTE = LITERAL` naming exactly the
    /// `installs` functions, once, in a block around the sink or as the
    /// whole body of a plain `if` there (its test the fact's `condition`).
    Hook { before: String, attribute: String, installs: BTreeMap<String, String> },
}

/// One reviewed conjunct of an exit condition: `OPERAND === "TEXT"` or
/// `OPERAND.METHOD("TEXT")`, where OPERAND is a parameter of the region or a
/// local bound exactly once (written `any === str:sqlite`, `any.includes(str:=)`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Comparison {
    /// Strict equality with a string literal.
    Equals(String),
    /// A method called on the operand with one string literal.
    Method { method: String, text: String },
}

impl Comparison {
    /// Parses the profile spelling; the error says what is accepted.
    pub fn parse(text: &str) -> Result<Comparison, String> {
        let bad = || format!("`{text}` is not a comparison: expected `any === str:TEXT` or `any.METHOD(str:TEXT)`");
        if let Some(lit) = text.strip_prefix("any === str:") {
            return Ok(Comparison::Equals(lit.to_owned()));
        }
        let rest = text.strip_prefix("any.").ok_or_else(bad)?;
        let (method, arg) = rest.split_once("(str:").ok_or_else(bad)?;
        let lit = arg.strip_suffix(')').ok_or_else(bad)?;
        if method.is_empty() || !method.chars().all(|c| c.is_alphanumeric() || c == '_') {
            return Err(bad());
        }
        Ok(Comparison::Method { method: method.to_owned(), text: lit.to_owned() })
    }
}

impl fmt::Display for Comparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Comparison::Equals(t) => write!(f, "any === str:{t}"),
            Comparison::Method { method, text } => write!(f, "any.{method}(str:{text})"),
        }
    }
}

/// Where a reviewed helper's default comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DefaultRule {
    /// The helper returns this literal (the type's zero value) when the argument is omitted.
    Zero(String),
    /// The helper returns its argument at this index (0-based) when omitted.
    Arg(usize),
}

impl DefaultRule {
    /// Parses `zero:LITERAL` or `arg:INDEX`.
    pub fn parse(text: &str) -> Result<DefaultRule, String> {
        if let Some(lit) = text.strip_prefix("zero:") {
            return Ok(DefaultRule::Zero(lit.to_owned()));
        }
        if let Some(i) = text.strip_prefix("arg:") {
            return i.parse().map(DefaultRule::Arg).map_err(|_| format!("`{text}`: `arg:` takes a 0-based argument index"));
        }
        Err(format!("`{text}` is not a default rule: expected `zero:LITERAL` or `arg:INDEX`"))
    }
}

impl FactKind {
    /// Every kind's name, as profiles spell it, with the keys of `Fact.values`
    /// the frontends emit for it (in any language). A rule's `fact-equals`
    /// may only test these keys; the profile loader checks it.
    pub const EMITS: &'static [(&'static str, &'static [&'static str])] = &[
        ("call", &["callee", "args", "keywords"]),
        ("guard", &["test", "exit", "before", "also_requires", "returns"]),
        ("default", &["argument", "variable", "helper", "default", "source"]),
        ("field", &["field", "source", "variable", "literal"]),
        ("option", &["argument", "parameter", "type", "property", "variable"]),
        ("pass", &["variable", "index", "name", "default"]),
        ("map", &["parameter", "variable", "when_true", "when_false"]),
        ("key", &["key", "value"]),
        ("flow", &["through", "into"]),
        ("table", &["row", "member", "present", "members"]),
        ("exit", &["returns", "conditions"]),
        ("body", &["digest"]),
        ("hook", &["attribute", "installs"]),
    ];

    /// The keys of `Fact.values` a kind (by name) emits; `None` for no kind.
    pub fn emits(kind: &str) -> Option<&'static [&'static str]> {
        FactKind::EMITS.iter().find(|(k, _)| *k == kind).map(|(_, keys)| *keys)
    }

    /// The generic kind's name, as profiles spell it.
    pub fn name(&self) -> &'static str {
        match self {
            FactKind::Call { .. } => "call",
            FactKind::Guard { .. } => "guard",
            FactKind::Default { .. } => "default",
            FactKind::Field { .. } => "field",
            FactKind::Option { .. } => "option",
            FactKind::Pass { .. } => "pass",
            FactKind::Map { .. } => "map",
            FactKind::Key { .. } => "key",
            FactKind::Flow { .. } => "flow",
            FactKind::Table { .. } => "table",
            FactKind::Exit { .. } => "exit",
            FactKind::Body { .. } => "body",
            FactKind::Hook { .. } => "hook",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arg_patterns_round_trip() {
        for text in [
            "param:target",
            "str:-",
            "format:--unified={n}?",
            "str:",
            "var:repo",
            "any?",
            "ref:A.B.Name",
            "*param:files",
            "*arg:files?",
            "str(param:url)",
            "str(arg:url)?",
        ] {
            assert_eq!(ArgPattern::parse(text).unwrap().to_string(), text);
        }
    }

    #[test]
    fn every_kind_declares_what_it_emits() {
        let names: Vec<&str> = FactKind::EMITS.iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["call", "guard", "default", "field", "option", "pass", "map", "key", "flow", "table", "exit", "body", "hook"]);
        assert_eq!(FactKind::emits("table"), Some(&["row", "member", "present", "members"][..]));
        assert_eq!(FactKind::emits("nope"), None);
    }

    #[test]
    fn unknown_arg_pattern_says_what_is_accepted() {
        let err = ArgPattern::parse("literal:x").unwrap_err();
        assert!(err.contains("param:NAME"), "{err}");
        assert!(ArgPattern::parse("param:a b").is_err());
        for bad in ["**param:x", "*param:x?x", "*", "*nope:x"] {
            assert!(ArgPattern::parse(bad).is_err(), "{bad}");
        }
    }
}
