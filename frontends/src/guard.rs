//! The `guard` fact, written once for every language.
//!
//! A guard is an `if` that runs before a sink on every path to it, whose test
//! holds a reviewed call (negated, or compared with a string, as the profile
//! says), and whose body leaves the function on every path. What differs
//! between languages is syntax only: how a condition is built, what a block,
//! an `if` and a leaving statement are, and when a local is worth the value it
//! was bound to. Each frontend answers that through [`Control`] and
//! [`GuardShape`]; what a guard means, and every reason it is none, is here.
//!
//! The test is read with its polarity: `!(ok(x) || g)` does not exit whenever
//! `ok(x)` is false, so under a negation only the call itself (through
//! parentheses, negations and once-bound locals) counts.

use std::collections::{BTreeMap, BTreeSet};

use crate::facts::{self, CallShape, FactSite};
use crate::frontend::Found;
use crate::ir::{Escalation, Identity};
use crate::spec::{ArgPattern, FactKind};
use crate::ts::Node;
use fcd_model::effect::FactValue;

/// A condition as the language builds it, parentheses removed.
pub enum Cond<'a> {
    /// `!x`, `not x`.
    Not(Node<'a>),
    /// `a && b`, `a and b`.
    And(Node<'a>, Node<'a>),
    /// `a || b`, `a or b`.
    Or(Node<'a>, Node<'a>),
    /// Two sides compared by the language's exact equality (`===` in JavaScript, `==` elsewhere).
    Equals(Node<'a>, Node<'a>),
    /// A call, the node a [`CallShape`] reads.
    Call(Node<'a>),
    /// A plain name.
    Name(Node<'a>),
    /// (Go) A call's error result is not `nil`: the call itself, or a name
    /// bound to its last result (`v, err := f(x)`, then `err != nil`).
    Fails(Node<'a>),
    /// (Go) The same result compared `== nil`: the call succeeded.
    Succeeds(Node<'a>),
    /// Anything else: no part of a guard's test.
    Other,
}

/// An `if` statement: its condition, the statement it runs when the
/// condition holds, and every other branch (`elif`, `else if`, `else`).
pub struct If<'a> {
    pub condition: Node<'a>,
    pub consequence: Node<'a>,
    pub alternatives: Vec<Node<'a>>,
    /// Whether a final `else` catches every remaining case.
    pub otherwise: bool,
}

/// How a language's statements branch and leave a function: syntax only.
pub trait Control {
    /// The condition `n` is, parentheses (and what else the language lets
    /// stand around a value without changing it) removed.
    fn condition<'a>(&self, n: Node<'a>) -> Cond<'a>;

    /// `stmt` read as an `if`, when it is one.
    fn if_statement<'a>(&self, stmt: Node<'a>) -> Option<If<'a>>;

    /// The statements of `n` in order (comments left out), when `n` is a
    /// block of statements that run one after the other.
    fn block<'a>(&self, n: Node<'a>) -> Option<Vec<Node<'a>>>;

    /// How a single statement leaves the function (`return`, `raise`,
    /// `throw`), when it always does.
    fn leaves(&self, stmt: Node<'_>) -> Option<&'static str>;

    /// The text of a plain string literal.
    fn string(&self, n: Node<'_>) -> Option<String>;

    /// Whether `n` starts a function of its own (a body a guard outside cannot stop).
    fn is_function(&self, n: Node<'_>) -> bool;

    /// Whether a `goto` may land at `stmt` (a labeled statement, in a
    /// language with `goto`): one between the guard and the sink lets a
    /// jump from before the guard reach the sink without it.
    fn is_jump_target(&self, _stmt: Node<'_>) -> bool {
        false
    }
}

/// What a guard needs beyond syntax: calls (through [`CallShape`]), and what a name is worth.
pub trait GuardShape<'a>: CallShape<'a> {
    /// The language's statements and conditions.
    fn control(&self) -> &dyn Control;

    /// The value the local `name` stands for at the `if` statement `guard`:
    /// bound exactly once in its function, by a plain declaration or
    /// assignment that runs before `guard` on every path to it (an earlier
    /// statement of the block holding `guard`), and bound nowhere else.
    fn bound_once(&self, name: Node<'a>, guard: Node<'a>) -> Option<Node<'a>>;

    /// The receiver of a method call (`receiver.method(…)`).
    fn receiver(&self, call: Node<'a>) -> Option<Self::Arg>;

    /// (Go) The call whose last result the local `name` is, bound once
    /// before `guard` like [`GuardShape::bound_once`] but with other names
    /// beside it (`v, err := f(x)`).
    fn bound_to_last_result(&self, _name: Node<'a>, _guard: Node<'a>) -> Option<Node<'a>> {
        None
    }

    /// What a value is, spelled as a profile's `conjuncts` list it; `None`
    /// when the language has no such spelling (every conjunct then escalates).
    fn spell(&self, _n: Node<'a>) -> Option<String> {
        None
    }

    /// Whether `call` yields a promise or coroutine the test would read as
    /// a value (always true): a call, not awaited, of a function the release
    /// declares `async`. Such a test never fires, so it is no guard.
    fn unawaited_async(&self, _call: Node<'a>) -> bool {
        false
    }
}

/// The reviewed test a guard looks for.
#[derive(Clone, Copy)]
pub struct GuardTest<'s> {
    pub callee: &'s str,
    pub receiver: Option<&'s ArgPattern>,
    pub args: &'s [ArgPattern],
    pub negated: bool,
    /// The call's result compared by exact equality with this string literal.
    pub equals: Option<&'s str>,
}

impl GuardTest<'_> {
    /// The test as a fact's value spells it: `not f(recv; a, b)`, `f(a) == "deny"`.
    fn spelled(&self) -> String {
        let shown: Vec<String> = self.args.iter().map(ToString::to_string).collect();
        let on = self.receiver.map(|r| format!("{r}; ")).unwrap_or_default();
        let compared = self.equals.map(|e| format!(" == {e:?}")).unwrap_or_default();
        format!("{}{}({on}{}){compared}", if self.negated { "not " } else { "" }, self.callee, shown.join(", "))
    }
}

/// What the profile asks of a guard besides its test.
pub struct GuardAsk<'s> {
    pub test: GuardTest<'s>,
    /// The `call` fact the guard must precede.
    pub before: &'s str,
    /// The string literal the leaving `return` must carry.
    pub returns: Option<&'s str>,
    /// What the other `&&` conjuncts may be.
    pub conjuncts: &'s [String],
}

/// The `guard` fact `site` asks for, once the `call` fact it must precede
/// is found (without it, a guard states nothing).
pub fn extract<'a, L: GuardShape<'a>>(lang: &L, site: &FactSite<'_, 'a>, found: &BTreeMap<String, Found<'a>>) -> Result<Option<Found<'a>>, Escalation> {
    let FactKind::Guard { callee, receiver, args, before, negated, returns, conjuncts, equals } = &site.spec.kind else {
        return Err(site.mismatch(site.region.node, "not a guard fact".into()));
    };
    let Some(sink) = found.get(before) else { return Ok(None) };
    let test = GuardTest { callee, receiver: receiver.as_ref(), args, negated: *negated, equals: equals.as_deref() };
    guard_fact(lang, site, &GuardAsk { test, before, returns: returns.as_deref(), conjuncts }, sink.node)
}

/// Longer chains of locals than this are no guard (and no endless walk:
/// `const ok = ok`); operators nest only as deep as the parser allows.
const MAX_DEPTH: usize = 8;

/// A `guard` fact: the nearest `if` before the sink, in the sink's block or
/// a block around it in the same function, whose test holds the reviewed
/// call and whose body leaves on every path. A matching test whose body
/// falls through escalates; a sink after a statement that always leaves is
/// dead code, guarded by nothing.
pub fn guard_fact<'a, L: GuardShape<'a>>(lang: &L, site: &FactSite<'_, 'a>, ask: &GuardAsk<'_>, sink: Node<'a>) -> Result<Option<Found<'a>>, Escalation> {
    let control = lang.control();
    let mut inner = sink;
    for block in sink.ancestors() {
        if let Some(statements) = control.block(block)
            && let Some(at) = statements.iter().position(|s| s.contains(inner))
        {
            if statements[..at].iter().any(|s| exits(control, *s, None).is_some()) {
                return Ok(None);
            }
            for (index, stmt) in statements[..at].iter().enumerate().rev() {
                let Some(parts) = control.if_statement(*stmt) else { continue };
                if statements[index + 1..=at].iter().any(|s| control.is_jump_target(*s)) {
                    return Ok(None);
                }
                let Some(others) = holds(lang, parts.condition, &ask.test, *stmt, 0) else { continue };
                // The reviewed test is there, so its body must stop the call: one
                // that falls through to the sink is a shape, not a missing guard.
                let Some(exit) = exits(control, parts.consequence, ask.returns) else {
                    let what = ask.returns.map(|r| format!(" returning {r:?}")).unwrap_or_default();
                    return Err(site.mismatch(*stmt, format!("the guard does not leave the function{what} on every path: the call falls through to the sink")));
                };
                reviewed_conjuncts(lang, site, &others, ask.conjuncts)?;
                let mut values = BTreeMap::new();
                values.insert("test".into(), FactValue::Text(ask.test.spelled()));
                values.insert("exit".into(), FactValue::Text(exit.into_iter().collect::<Vec<_>>().join(" or ")));
                values.insert("before".into(), FactValue::Text(ask.before.into()));
                values.insert("also_requires".into(), FactValue::List(others.iter().map(|o| FactValue::Text(o.compact_text())).collect()));
                if let Some(r) = ask.returns {
                    values.insert("returns".into(), FactValue::Text(r.into()));
                }
                return Ok(Some(site.fact(*stmt, values)));
            }
        }
        if control.is_function(block) || block == site.region.node {
            break;
        }
        inner = block;
    }
    Ok(None)
}

/// How a statement leaves its function on every path (`return`, `raise`,
/// `throw`, or several), if it does; with `returns`, only a `return` carrying
/// that string literal counts.
pub fn exits(lang: &dyn Control, stmt: Node<'_>, returns: Option<&str>) -> Option<BTreeSet<&'static str>> {
    if let Some(statements) = lang.block(stmt) {
        // Statements before the first that always leaves run and fall into it;
        // it decides how the block leaves. With `returns`, none of them may
        // leave on some path of its own (with another value, or by throwing).
        let first = statements.iter().position(|s| exits(lang, *s, None).is_some())?;
        if returns.is_some() && statements[..first].iter().any(|s| may_leave(lang, *s)) {
            return None;
        }
        return exits(lang, statements[first], returns);
    }
    if let Some(parts) = lang.if_statement(stmt) {
        if !parts.otherwise {
            return None;
        }
        let mut all = exits(lang, parts.consequence, returns)?;
        for alternative in parts.alternatives {
            all.extend(exits(lang, alternative, returns)?);
        }
        return Some(all);
    }
    let how = lang.leaves(stmt)?;
    match returns {
        Some(r) if how != "return" || !stmt.descendants().any(|d| lang.string(d).as_deref() == Some(r)) => None,
        _ => Some(BTreeSet::from([how])),
    }
}

/// Whether some path through `stmt` leaves the function (a leaving
/// statement anywhere inside it, outside nested functions).
fn may_leave(lang: &dyn Control, stmt: Node<'_>) -> bool {
    stmt.descendants().any(|d| lang.leaves(d).is_some() && !d.ancestors().take_while(|a| *a != stmt).any(|a| lang.is_function(a)))
}

/// Whether the condition `c` holds whenever the reviewed test does (and the
/// returned other `&&` conjuncts hold too): the `if` then exits.
fn holds<'a, L: GuardShape<'a>>(lang: &L, c: Node<'a>, want: &GuardTest<'_>, guard: Node<'a>, depth: usize) -> Option<Vec<Node<'a>>> {
    if depth > MAX_DEPTH {
        return None;
    }
    match lang.control().condition(c) {
        Cond::And(left, right) => {
            if let Some(mut others) = holds(lang, left, want, guard, depth) {
                others.push(right);
                return Some(others);
            }
            let mut others = holds(lang, right, want, guard, depth)?;
            others.insert(0, left);
            Some(others)
        }
        Cond::Or(left, right) => holds(lang, left, want, guard, depth).or_else(|| holds(lang, right, want, guard, depth)),
        Cond::Equals(left, right) => {
            let text = want.equals?;
            if want.negated {
                return None;
            }
            let literal = |e: Node<'a>| lang.control().string(e).as_deref() == Some(text);
            // The compared side is the call itself: `(x || f()) === "deny"` compares x when x is truthy.
            let called = |e: Node<'a>| exactly(lang, e, want, guard, depth) == Some(false);
            ((literal(right) && called(left)) || (literal(left) && called(right))).then(Vec::new)
        }
        Cond::Name(name) => holds(lang, lang.bound_once(name, guard)?, want, guard, depth + 1),
        Cond::Not(_) | Cond::Call(_) | Cond::Fails(_) | Cond::Succeeds(_) => {
            (want.equals.is_none() && exactly(lang, c, want, guard, depth) == Some(want.negated)).then(Vec::new)
        }
        Cond::Other => None,
    }
}

/// Whether `c` is exactly the reviewed call (`Some(false)`) or its negation
/// (`Some(true)`), through negations and once-bound locals.
fn exactly<'a, L: GuardShape<'a>>(lang: &L, c: Node<'a>, want: &GuardTest<'_>, guard: Node<'a>, depth: usize) -> Option<bool> {
    if depth > MAX_DEPTH {
        return None;
    }
    match lang.control().condition(c) {
        Cond::Call(call) => calls_reviewed(lang, call, want).then_some(false),
        Cond::Not(inner) => exactly(lang, inner, want, guard, depth).map(|n| !n),
        Cond::Name(name) => exactly(lang, lang.bound_once(name, guard)?, want, guard, depth + 1),
        Cond::Fails(v) => failing(lang, v, want, guard, depth),
        Cond::Succeeds(v) => failing(lang, v, want, guard, depth).map(|n| !n),
        _ => None,
    }
}

/// Whether the error result `v` compared with `nil` is the reviewed call's
/// (`Some(false)`: not nil is the call failing) or its negation: the call
/// itself, or a name bound once to it or to its last result.
fn failing<'a, L: GuardShape<'a>>(lang: &L, v: Node<'a>, want: &GuardTest<'_>, guard: Node<'a>, depth: usize) -> Option<bool> {
    match lang.control().condition(v) {
        Cond::Name(name) => match lang.bound_once(name, guard) {
            Some(value) => exactly(lang, value, want, guard, depth + 1),
            None => exactly(lang, lang.bound_to_last_result(name, guard)?, want, guard, depth + 1),
        },
        Cond::Call(_) => exactly(lang, v, want, guard, depth),
        _ => None,
    }
}

/// Whether `call` calls the reviewed callee, on the reviewed receiver, with
/// arguments of the reviewed shape.
fn calls_reviewed<'a, L: GuardShape<'a>>(lang: &L, call: Node<'a>, want: &GuardTest<'_>) -> bool {
    if lang.callee(call) != Some(Identity::Path(want.callee.to_owned())) {
        return false;
    }
    if lang.unawaited_async(call) {
        return false;
    }
    let Ok(args) = lang.arguments(call) else { return false };
    lang.receiver_matches(want.receiver, lang.receiver(call)) && facts::align(&args, want.args, &|a, p| lang.arg_matches(a, p)).is_some()
}

/// Every other `&&` conjunct of a guard is a reviewed one: what it is (as
/// the language spells a value) is listed in `conjuncts`. Any other (`&&
/// false`, a constant, a flag bound twice or from elsewhere) could keep the
/// guard from firing.
fn reviewed_conjuncts<'a, L: GuardShape<'a>>(lang: &L, site: &FactSite<'_, 'a>, others: &[Node<'a>], reviewed: &[String]) -> Result<(), Escalation> {
    for o in others {
        let what = lang.spell(*o);
        if what.as_ref().is_some_and(|w| reviewed.iter().any(|r| r == w)) {
            continue;
        }
        return Err(site.mismatch(
            *o,
            format!(
                "the guard also requires `{}` ({}), which is not a reviewed conjunct (`conjuncts`): it may keep the guard from firing",
                o.compact_text(),
                what.as_deref().map_or("whose value has no spelling".to_owned(), |w| format!("`{w}`")),
            ),
        ));
    }
    Ok(())
}

/// The named children of `n`, comments left out.
pub fn named(n: Node<'_>) -> impl Iterator<Item = Node<'_>> {
    n.named_children().filter(|c| c.kind() != "comment")
}

/// The condition inside parentheses: their one named child's.
pub fn parenthesized<'a>(control: &dyn Control, n: Node<'a>) -> Cond<'a> {
    let mut inner = named(n);
    match (inner.next(), inner.next()) {
        (Some(one), None) => control.condition(one),
        _ => Cond::Other,
    }
}

/// A binary condition read through its `left` and `right` fields, with the
/// language's spelling of `and`, `or` and exact equality; any other operator is [`Cond::Other`].
pub fn binary<'a>(n: Node<'a>, [and, or, equals]: [&str; 3]) -> Cond<'a> {
    let (Some(l), Some(r)) = (n.field_child("left"), n.field_child("right")) else { return Cond::Other };
    match operator(n) {
        op if op == and => Cond::And(l, r),
        op if op == or => Cond::Or(l, r),
        op if op == equals => Cond::Equals(l, r),
        _ => Cond::Other,
    }
}

/// An `if_statement` with `condition` and `consequence` fields and at most
/// one other branch, `alternative` (the `else` statement, itself an `if` for `else if`).
pub fn if_else<'a>(stmt: Node<'a>, alternative: Option<Node<'a>>) -> Option<If<'a>> {
    if stmt.kind() != "if_statement" {
        return None;
    }
    let alternatives: Vec<Node<'a>> = alternative.into_iter().collect();
    let otherwise = !alternatives.is_empty();
    Some(If { condition: stmt.field_child("condition")?, consequence: stmt.field_child("consequence")?, alternatives, otherwise })
}

/// The operator of a unary or binary expression: its `operator` field, or
/// else its first anonymous child (grammars differ).
pub fn operator<'a>(n: Node<'a>) -> &'a str {
    n.field_child("operator").or_else(|| n.children().find(|c| !c.is_named())).map(|o| o.text()).unwrap_or_default()
}

/// Whether `stmt` is an earlier statement than `guard` of the block holding
/// `guard` (so it runs before it on every path there).
pub fn earlier_in_block(stmt: Node<'_>, guard: Node<'_>) -> bool {
    stmt.parent().is_some() && stmt.parent() == guard.parent() && stmt.precedes(guard)
}

/// Whether any of `trees` declares a function named `name` (the last
/// segment of a callee's identity) `async`: a definition of one of `kinds`
/// carrying the `async` keyword, named by its own `name` or by the
/// declaration, property or assignment it is the value of. Any such
/// declaration counts, whichever the call means: a test that may read a
/// promise is no guard.
pub fn declared_async(trees: &[(&str, &crate::ts::Syntax)], name: &str, kinds: &[&str]) -> bool {
    let named = |f: Node<'_>| {
        let own = f.field_child("name").map(|n| n.text());
        let parent = f.parent();
        let bound = parent.and_then(|p| match p.kind() {
            "variable_declarator" => p.field_child("name").map(|n| n.text()),
            "pair" => p.field_child("key").map(|k| k.text().trim_matches(['"', '\''])),
            "assignment_expression" => p.field_child("left").map(|l| l.text().rsplit('.').next().unwrap_or_default()),
            _ => None,
        });
        own == Some(name) || bound == Some(name)
    };
    trees.iter().any(|(_, syntax)| {
        syntax.root().descendants().any(|f| kinds.contains(&f.kind()) && f.children().any(|c| !c.is_named() && c.text() == "async") && named(f))
    })
}

/// The last segment of a callee's identity (`check` of `a.b.check`, of `new X().check`).
pub fn last_segment(identity: &Identity) -> Option<&str> {
    match identity {
        Identity::Path(p) => p.rsplit(['.', '#', ':']).next(),
        _ => None,
    }
}
