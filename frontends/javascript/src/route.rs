//! How a tool's name reaches a JavaScript region: a callback a registration
//! API runs for the tool (`server.registerTool("write_file", {…}, async
//! (args) => {…})`), or the `case "write_file":` clause of a request handler
//! that switches on the tool's name.
//!
//! What makes such a region the code that runs for the tool is the call that
//! registers it, so that call is one of the region's call sites (its callee
//! must be reviewed), and nothing else in the analysed code may name the tool:
//! a second registration under the same name, in any form (a named handler,
//! a computed table, a later override), could replace the reviewed one, so
//! the tool's name must be a plain string literal exactly once.

use fcd_frontends::frontend::Region;
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::FUNCTIONS;
use super::bindings::Bindings;
use super::syntax::{arguments, bare, string_content};

/// The function literal `call` registers for `tool`: `call`'s first argument
/// is the string literal `tool` and its last a function literal.
pub(super) fn registered_callback<'a>(call: Node<'a>, tool: &str) -> Option<Node<'a>> {
    if call.kind() != "call_expression" {
        return None;
    }
    let args = arguments(call);
    let (first, last) = (args.first()?, args.last()?);
    if args.len() < 2 || string_content(*first).as_deref() != Some(tool) {
        return None;
    }
    let callback = bare(*last);
    matches!(callback.kind(), "arrow_function" | "function_expression" | "function").then_some(callback)
}

/// The call that registers `region` when it is a registered callback.
pub(super) fn registration_of(region: Node<'_>) -> Option<Node<'_>> {
    let call = region.ancestors().find(|a| a.kind() == "call_expression")?;
    let args = arguments(call);
    let first = args.first()?;
    let tool = string_content(*first)?;
    (registered_callback(call, &tool) == Some(region)).then_some(call)
}

/// Every registered-callback region's tool is registered once, as written:
/// its name is a plain string literal exactly once in the analysed files
/// (comments are not strings and never count), and every call of the
/// registering method (by its final name, whatever the receiver) names its
/// tool by a plain string literal, so no computed name can be the same tool.
pub(super) fn check_unique(trees: &[(&str, &Syntax)], regions: &[Region<'_>]) -> Result<(), Escalation> {
    for region in regions {
        if region.node.kind() == "switch_case" {
            check_case(trees, region)?;
            continue;
        }
        let Some(call) = registration_of(region.node) else { continue };
        let Some(tool) = arguments(call).first().and_then(|a| string_content(*a)) else { continue };
        let method = method_name(call).unwrap_or_default();
        // Another registration under a computed name could be this tool's.
        let computed = |n: Node<'_>| {
            let literal = arguments(n).first().is_some_and(|a| string_content(*a).is_some());
            (!literal).then(|| format!("`{method}` registers a tool whose name is not a plain string literal; it could be `{tool}`"))
        };
        // What wraps or copies the registering method first: it explains a computed registration inside a wrapper.
        let wrapper = method_only_called(trees, region, call)?;
        // The reviewed wrapper registers every callback it is handed, under the name it is handed, through the bound copy.
        let rival = |n: Node<'_>| computed(n).filter(|_| !wrapper.is_some_and(|w| w.contains(n)));
        registered_once(trees, region, call, &tool, &rival, &|_| false)?;
    }
    Ok(())
}

/// The registering method runs as the SDK wrote it, around the reviewed
/// callback: anywhere in the analysed files its name (`registerTool`) is
/// only ever the callee of a direct call `X.registerTool(…)`, and the
/// receiver's own name (`server`) is only ever used through a named member.
/// A wrapper (`server.registerTool = (n, c, h) => keep(n, c, wrap(h))`), a
/// bound or aliased copy (which could register the tool under a computed
/// name), a member of that name defined on an object or class, the name as
/// a string (a computed member), or the receiver handed on, exported,
/// aliased or indexed (another name for it could do any of these) would
/// put code no region reads around every callback: `shape_mismatch`.
///
/// One wrapper is read instead when a reviewer listed its digest in
/// `source.registration-wrappers` ([`Wrapper`]); then the bound copy it
/// calls and the receiver handed to `bind` are part of it. A factory that
/// declares the receiver may also hand it back as its last statement
/// (`return server;`): every registration in it has run by then, and what
/// the caller does with the method is checked by the spellings above,
/// wherever it is. Returns the accepted wrapper's function.
fn method_only_called<'a>(trees: &[(&str, &'a Syntax)], region: &Region<'_>, registration: Node<'a>) -> Result<Option<Node<'a>>, Escalation> {
    let Some(method) = method_name(registration) else { return Ok(None) };
    let callee = registration.field_child("function").map(bare);
    let fail = |file: &str, at: Node<'_>, why: String| {
        Err(Escalation::new(
            EscalationCode::ShapeMismatch,
            format!("region `{}` is registered by `{method}`, but line {} of {file} {why}", region.name, at.line()),
            Some(Anchor::new(file, at.line(), at.end_line(), at.text())),
        ))
    };
    // The receiver, by its own name where it is declared.
    let mut receiver = callee.filter(|c| c.kind() == "member_expression").and_then(|c| c.field_child("object")).map(bare);
    while let Some(r) = receiver.filter(|r| r.kind() == "member_expression") {
        receiver = r.field_child("object").map(bare);
    }
    let receiver = receiver.filter(|r| r.kind() == "identifier");
    let declared_in = |scope: Node<'a>, name: &str| -> Option<Node<'a>> {
        scope.descendants().find(|d| {
            d.kind() == "variable_declarator"
                && d.field_child("name").is_some_and(|i| i.kind() == "identifier" && i.text() == name)
                && d.ancestors().find(|a| FUNCTIONS.contains(&a.kind()) || a.kind() == "program") == Some(scope)
        })
    };
    let declared = receiver.and_then(|r| {
        registration.ancestors().filter(|a| FUNCTIONS.contains(&a.kind()) || a.kind() == "program").find_map(|a| declared_in(a, r.text()).map(|d| (a, d)))
    });
    // A wrapper a reviewer read: only one replacement in the analysed files, in the receiver's own scope.
    let replaced = |n: Node<'_>| {
        n.kind() == "property_identifier"
            && n.text() == method
            && n.parent().is_some_and(|m| {
                m.kind() == "member_expression"
                    && m.parent()
                        .is_some_and(|a| matches!(a.kind(), "assignment_expression" | "augmented_assignment_expression") && a.field_child("left") == Some(m))
            })
    };
    let replacements: Vec<(&str, Node<'_>)> =
        trees.iter().flat_map(|(file, syntax)| syntax.root().descendants().filter(|n| replaced(*n)).map(move |n| (*file, n))).collect();
    let mut accepted: Option<Wrapper<'_>> = None;
    if let (Some(receiver), Some((scope, _)), [(file, at)]) = (receiver, declared, replacements.as_slice()) {
        match Wrapper::of(*at, scope, receiver.text(), method, registration) {
            Ok(w) => {
                let listed = &super::settings::Settings::of(region.env).registration_wrappers;
                if !listed.contains(&w.digest) {
                    return fail(
                        file,
                        *at,
                        format!(
                            "replaces `{}` with a wrapper no reviewer read (digest {}): a reviewer who read it, the copy it calls and every declaration of or write to a name it reads from around it, in its file, may list the digest in `source.registration-wrappers`",
                            at.parent().map(|m| m.compact_text()).unwrap_or_default(),
                            w.digest
                        ),
                    );
                }
                accepted = Some(w);
            }
            Err(why) => return fail(file, *at, why),
        }
    }
    let ours = |n: Node<'_>| accepted.as_ref().is_some_and(|w| w.owns(n));
    // A replacement is named before a copy: the copy is usually the wrapper's first line.
    let first_replacement = replacements.first().copied().filter(|(_, n)| !ours(*n));
    let everywhere = trees.iter().map(|(file, syntax)| (*file, syntax.root().descendants().collect::<Vec<_>>()));
    for (file, nodes) in first_replacement.map(|(file, n)| (file, vec![n])).into_iter().chain(everywhere) {
        for n in nodes {
            match n.kind() {
                "property_identifier" if n.text() == method && !ours(n) => {
                    let member = n.parent().filter(|m| m.kind() == "member_expression" && m.field_child("property") == Some(n));
                    let Some(member) = member else {
                        return fail(file, n, format!("defines a member named `{method}`, which could take the registering method's place"));
                    };
                    let called = member.parent().is_some_and(|c| c.kind() == "call_expression" && c.field_child("function") == Some(member));
                    if called {
                        continue;
                    }
                    let written = member.ancestors().take_while(|a| matches!(a.kind(), "parenthesized_expression")).chain(member.parent()).any(|a| {
                        matches!(a.kind(), "assignment_expression" | "augmented_assignment_expression") && a.field_child("left").map(bare) == Some(member)
                    });
                    let why = if written {
                        format!(
                            "replaces `{}`: a wrapper of the registering method runs around every callback it registers, and no region reads it",
                            member.compact_text()
                        )
                    } else {
                        format!(
                            "takes `{}` as a value (bound or aliased): a copy of the registering method could register the tool under a computed name",
                            member.compact_text()
                        )
                    };
                    return fail(file, n, why);
                }
                "shorthand_property_identifier" | "shorthand_property_identifier_pattern" if n.text() == method => {
                    return fail(file, n, format!("names a member `{method}` in an object or a pattern, which could replace or copy the registering method"));
                }
                "string" | "template_string" if string_content(n).as_deref() == Some(method) => {
                    return fail(file, n, format!("names `{method}` in a string, which a computed member could use to replace or copy the registering method"));
                }
                _ => {}
            }
        }
    }
    let (Some(receiver), Some((scope, declarator))) = (receiver, declared) else { return Ok(accepted.map(|w| w.function)) };
    let name = receiver.text();
    // Exported where it is declared (not merely inside an exported factory).
    if declarator.ancestors().take_while(|a| *a != scope).any(|a| a.kind() == "export_statement") {
        return fail(region.file, declarator, format!("exports `{name}`, whose registering method another module could then replace"));
    }
    // The factory's last statement may hand the server back, every registration in it done.
    let handed_back = |n: Node<'_>| {
        let statement = n.parent().filter(|r| r.kind() == "return_statement" && r.named_children().next() == Some(n));
        let last = scope.field_child("body").and_then(|b| b.named_children().rfind(|c| c.kind() != "comment"));
        scope.kind() != "program" && statement.is_some() && statement == last
    };
    for n in scope.descendants().filter(|n| n.kind() == "identifier" && n.text() == name) {
        let own = declarator.field_child("name") == Some(n);
        let through_member = n.parent().is_some_and(|m| {
            m.kind() == "member_expression"
                && m.field_child("object") == Some(n)
                && m.field_child("property").is_some_and(|p| p.kind() == "property_identifier")
        });
        if !own && !through_member && !ours(n) && !handed_back(n) {
            return fail(
                region.file,
                n,
                format!("uses `{name}` other than through a named member (handed on, aliased or indexed): another name for it could replace `{method}`"),
            );
        }
    }
    Ok(accepted.map(|w| w.function))
}

/// A replacement of the registering method that a reviewer may read whole:
/// `const COPY = R.M.bind(R);` then `R.M = FUNCTION;`, both statements of
/// the body of the function (or module) that declares the receiver `R`, in
/// that order, before the registration, so the wrapper is in place,
/// unconditionally, when the tool is registered; COPY declared once there
/// and named only inside FUNCTION. Its digest hashes, comments left out, the
/// copy's declaration, the replacing statement and, for each name FUNCTION
/// reads that it does not bind itself, every declaration of and write to
/// that name elsewhere in the file (`let barrier = …`, `barrier = …` in a
/// nested function, a nested function declaration whole): what the wrapper
/// reads is then bound as it is written, one level deep (what a written
/// expression is made of is the reviewer's to read). A name FUNCTION reads
/// that is imported from a file of the release escalates: no digest here
/// binds that code.
struct Wrapper<'a> {
    function: Node<'a>,
    /// The replacing statement and the copy's declarator.
    statements: [Node<'a>; 2],
    digest: String,
}

impl<'a> Wrapper<'a> {
    fn of(at: Node<'a>, scope: Node<'a>, receiver: &str, method: &str, registration: Node<'a>) -> Result<Wrapper<'a>, String> {
        let member = at.parent().filter(|m| m.kind() == "member_expression").ok_or("replaces the method oddly")?;
        let assignment = member.parent().filter(|a| a.kind() == "assignment_expression").ok_or_else(|| {
            format!(
                "replaces `{}` other than by a plain `=`: a wrapper of the registering method runs around every callback it registers",
                member.compact_text()
            )
        })?;
        let body = if scope.kind() == "program" { Some(scope) } else { scope.field_child("body") };
        let statement = assignment.parent().filter(|st| st.kind() == "expression_statement" && st.parent() == body && body.is_some());
        let on_receiver = member.field_child("object").map(bare).is_some_and(|o| o.kind() == "identifier" && o.text() == receiver);
        let Some(statement) = statement.filter(|_| on_receiver) else {
            return Err(format!(
                "replaces `{}` other than as a statement of the body that declares `{receiver}`: a wrapper that may or may not be in place runs around every callback",
                member.compact_text()
            ));
        };
        if statement.byte_range().start > registration.byte_range().start {
            return Err(format!("replaces `{}` after the tool is registered", member.compact_text()));
        }
        let function = assignment.field_child("right").map(bare).filter(|f| matches!(f.kind(), "arrow_function" | "function_expression"));
        let Some(function) = function else {
            return Err(format!("replaces `{}` with something other than a function written in place", member.compact_text()));
        };
        // The bound copy: `const COPY = R.M.bind(R);`, a statement of the same body before the replacement.
        let copies: Vec<Node<'a>> = scope
            .descendants()
            .filter(|d| d.kind() == "variable_declarator")
            .filter(|d| {
                d.field_child("value")
                    .map(bare)
                    .is_some_and(|v| v.kind() == "call_expression" && v.descendants().any(|p| p.kind() == "property_identifier" && p.text() == method))
            })
            .collect();
        let [copy] = copies.as_slice() else {
            return Err(format!(
                "replaces `{}`, but the original is not kept once as `const COPY = {receiver}.{method}.bind({receiver})`",
                member.compact_text()
            ));
        };
        let value = copy.field_child("value").map(bare);
        let bind = value.and_then(|v| v.field_child("function")).map(bare).filter(|f| f.kind() == "member_expression");
        let bound = bind.is_some_and(|b| {
            b.field_child("property").is_some_and(|p| p.text() == "bind")
                && b.field_child("object").map(bare).is_some_and(|o| o.compact_text() == format!("{receiver}.{method}"))
        }) && value.is_some_and(|v| {
            let args = arguments(v);
            args.len() == 1 && bare(args[0]).kind() == "identifier" && bare(args[0]).text() == receiver
        });
        let declaration = copy.parent().filter(|d| d.kind() == "lexical_declaration" && d.children().next().is_some_and(|k| k.text() == "const"));
        let in_body = declaration.is_some_and(|d| d.parent() == body && d.named_children().count() == 1);
        let copy_name = copy.field_child("name").filter(|n| n.kind() == "identifier").map(|n| n.text().to_owned()).unwrap_or_default();
        if !bound || !in_body || copy.byte_range().start > statement.byte_range().start || copy_name.is_empty() {
            return Err(format!(
                "replaces `{}`, but the original is not kept as `const COPY = {receiver}.{method}.bind({receiver})`, a statement before it",
                member.compact_text()
            ));
        }
        let root = scope.ancestors().last().unwrap_or(scope);
        for n in root.descendants().filter(|n| n.kind() == "identifier" && n.text() == copy_name) {
            if copy.field_child("name") != Some(n) && !function.contains(n) {
                return Err(format!("keeps the original `{receiver}.{method}` as `{copy_name}`, which is used outside the wrapper (line {})", n.line()));
            }
        }
        // What the wrapper reads from around it, one level deep.
        let mut bound_text: Vec<Node<'a>> = vec![*copy, statement];
        let free: std::collections::BTreeSet<&str> = function
            .descendants()
            .filter(|n| matches!(n.kind(), "identifier" | "shorthand_property_identifier"))
            .map(|n| n.text())
            .filter(|name| *name != copy_name && *name != receiver && super::bindings::origins(function, name).is_empty())
            .collect();
        for name in &free {
            if let super::bindings::Head::Import(spec, _) = super::bindings::module_head(root, name)
                && !super::loader::is_package(&spec)
            {
                return Err(format!(
                    "replaces `{}` with a wrapper that reads `{name}`, imported from `{spec}`, a file of the release its digest does not bind",
                    member.compact_text()
                ));
            }
            for n in root.descendants().filter(|n| !function.contains(*n) && writes_name(*n, name)) {
                if !bound_text.iter().any(|b| b.contains(n)) {
                    bound_text.retain(|b| !n.contains(*b));
                    bound_text.push(n);
                }
            }
        }
        bound_text.sort_by_key(|n| n.byte_range().start);
        let text: Vec<String> = bound_text.iter().map(|n| n.token_text()).collect();
        let digest = fcd_model::canon::sha256(text.join("\n").as_bytes());
        Ok(Wrapper { function, statements: [statement, *copy], digest })
    }

    /// Whether `n` is part of the wrapper: its statements (the replaced
    /// member, the copy of the method, the receiver handed to `bind`).
    fn owns(&self, n: Node<'_>) -> bool {
        self.statements.iter().any(|s| s.contains(n))
    }
}

/// Whether `n` declares or writes `name`: a declarator binding it, an
/// assignment, update or `delete` whose target is it or a member of it, a
/// call of a method that changes it in place (`name.push(…)`, `name.x.set(…)`:
/// [`super::methods::MUTATING_METHODS`]), a function or class
/// declaration of that name.
fn writes_name(n: Node<'_>, name: &str) -> bool {
    let root_is = |t: Node<'_>| {
        let mut t = bare(t);
        while matches!(t.kind(), "member_expression" | "subscript_expression") {
            let Some(o) = t.field_child("object") else { return false };
            t = bare(o);
        }
        if t.kind() == "identifier" {
            return t.text() == name;
        }
        let mut names = Vec::new();
        super::bindings::pattern_names(t, &mut names);
        names.iter().any(|i| i.text() == name)
    };
    match n.kind() {
        "variable_declarator" => n.field_child("name").is_some_and(root_is),
        "assignment_expression" | "augmented_assignment_expression" => n.field_child("left").is_some_and(root_is),
        "update_expression" => n.field_child("argument").is_some_and(root_is),
        "unary_expression" => n.field_child("operator").is_some_and(|o| o.text() == "delete") && n.field_child("argument").is_some_and(root_is),
        "call_expression" => n.field_child("function").map(bare).is_some_and(|f| {
            f.kind() == "member_expression"
                && f.field_child("property").is_some_and(|p| super::methods::MUTATING_METHODS.contains(&p.text()))
                && f.field_child("object").is_some_and(root_is)
        }),
        "function_declaration" | "generator_function_declaration" | "class_declaration" => n.field_child("name").is_some_and(|i| i.text() == name),
        _ => false,
    }
}

/// The final property name of a call's callee (`registerTool` of `server.registerTool(…)`).
fn method_name(call: Node<'_>) -> Option<&str> {
    let f = bare(call.field_child("function")?);
    match f.kind() {
        "member_expression" => f.field_child("property").map(|p| p.text()),
        "identifier" => Some(f.text()),
        _ => None,
    }
}

/// `n` when it is the clause `case "TOOL":` of a `switch`.
pub(super) fn tool_case<'a>(n: Node<'a>, tool: &str) -> Option<Node<'a>> {
    let labelled = n.field_child("value").and_then(string_content).as_deref() == Some(tool);
    (n.kind() == "switch_case" && labelled).then_some(n)
}

/// The node whose names a region's code uses: for a dispatcher case, the
/// handler function around it (its parameters and locals are the case's);
/// for any other region, the region itself.
pub(super) fn owner(region: Node<'_>) -> Node<'_> {
    if region.kind() != "switch_case" {
        return region;
    }
    region.ancestors().find(|a| FUNCTIONS.contains(&a.kind())).unwrap_or(region)
}

/// A dispatcher case's `switch` statement, handler function and the call
/// the handler is registered by (the handler its last argument).
struct Dispatcher<'a> {
    switch: Node<'a>,
    handler: Node<'a>,
    registration: Node<'a>,
}

fn dispatcher(case: Node<'_>) -> Option<Dispatcher<'_>> {
    let switch = case.parent().filter(|b| b.kind() == "switch_body")?.parent()?;
    let handler = owner(case);
    let registration = handler.parent().filter(|a| a.kind() == "arguments")?.parent().filter(|c| c.kind() == "call_expression")?;
    (handler != case && arguments(registration).last().map(|a| bare(*a)) == Some(handler)).then_some(Dispatcher { switch, handler, registration })
}

/// The call a case region's handler is registered by.
pub(super) fn case_registration(region: Node<'_>) -> Option<Node<'_>> {
    dispatcher(region).map(|d| d.registration)
}

/// Whether `n`, inside a case region's handler, runs for that case's tool:
/// everything but the other clauses of its `switch`.
pub(super) fn runs_for_case(region: Node<'_>, n: Node<'_>) -> bool {
    let Some(d) = dispatcher(region) else { return region.contains(n) };
    !d.switch.field_child("body").is_some_and(|body| {
        body.named_children().any(|clause| clause != region && matches!(clause.kind(), "switch_case" | "switch_default") && clause.contains(n))
    })
}

/// `P.params` where P is the handler's first parameter, a plain identifier
/// nothing in the handler binds again: the request the dispatcher was handed.
fn request_params(e: Node<'_>, names: &Bindings) -> bool {
    let e = bare(e);
    e.kind() == "member_expression"
        && e.field_child("property").is_some_and(|p| p.text() == "params")
        && e.field_child("object").map(bare).is_some_and(|o| o.kind() == "identifier" && names.param_at(0) == Some(o.text()) && names.count(o.text()) == 0)
}

/// Whether `e` is the request's field `field` (`name`, `arguments`) in the
/// handler: `P.params.FIELD`, or a local bound once by destructuring it from
/// `P.params` (`const { name, arguments: args } = request.params`).
pub(super) fn request_field(e: Node<'_>, field: &str, handler: Node<'_>, names: &Bindings) -> bool {
    let e = bare(e);
    match e.kind() {
        "member_expression" => {
            e.field_child("property").is_some_and(|p| p.text() == field) && e.field_child("object").is_some_and(|o| request_params(o, names))
        }
        "identifier" => {
            let Some(at) = names.only_site(e.text()) else { return false };
            let Some(site) = handler.descendants().find(|n| n.byte_range().start == at && n.text() == e.text()) else { return false };
            let Some(pattern) = site.parent() else { return false };
            let field_ok = match (site.kind(), pattern.kind()) {
                ("shorthand_property_identifier_pattern", "object_pattern") => site.text() == field,
                ("identifier", "pair_pattern") => pattern.field_child("value") == Some(site) && pattern.field_child("key").is_some_and(|k| k.text() == field),
                _ => false,
            };
            let object = if pattern.kind() == "pair_pattern" { pattern.parent() } else { Some(pattern) };
            let declarator = object.filter(|o| o.kind() == "object_pattern").and_then(|o| o.parent()).filter(|d| d.kind() == "variable_declarator");
            field_ok && declarator.and_then(|d| d.field_child("value")).is_some_and(|v| request_params(v, names))
        }
        _ => false,
    }
}

/// What makes a case region the code that runs for its tool: the `switch`
/// tests the request's tool name, every label is a plain string literal (an
/// earlier computed label could catch the tool first), the clause leaves the
/// handler on every path (never falls through into another tool's clause),
/// the tool's name is written nowhere else, and the handler is the only one
/// registered for its request schema by that method.
pub(super) fn check_case(trees: &[(&str, &Syntax)], region: &Region<'_>) -> Result<(), Escalation> {
    let mismatch =
        |at: Node<'_>, why: String| Err(Escalation::new(EscalationCode::ShapeMismatch, format!("region `{}`: {why}", region.name), Some(region.anchor(at))));
    let Some(d) = dispatcher(region.node) else {
        return mismatch(region.node, "the case is not in a handler function passed as the last argument of a call (a request handler)".into());
    };
    let names = Bindings::of(d.handler);
    let Some(discriminant) = d.switch.field_child("value") else { return mismatch(d.switch, "the switch tests nothing".into()) };
    if !request_field(discriminant, "name", d.handler, &names) {
        return mismatch(
            discriminant,
            format!("the switch tests `{}`, not the request's tool name (`P.params.name` of the handler's first parameter)", discriminant.compact_text()),
        );
    }
    for clause in d.switch.field_child("body").into_iter().flat_map(|b| b.named_children()) {
        if clause.kind() == "switch_case" && clause.field_child("value").and_then(string_content).is_none() {
            return mismatch(clause, "a case label that is not a plain string literal could be this tool's name".into());
        }
    }
    let body: Vec<Node<'_>> = region.node.field_children("body").collect();
    if !body.iter().any(|s| super::control::exits(*s, None).is_some()) {
        return mismatch(region.node, "the case does not return or throw on every path, so it falls through into the next clause".into());
    }
    let tool = region.node.field_child("value").and_then(string_content).unwrap_or_default();
    let schema = arguments(d.registration).first().map(|a| bare(*a).compact_text()).unwrap_or_default();
    // A second handler for the same request schema replaces the reviewed one.
    // A schema spelled otherwise than by its own imported name could be the same object.
    let same_schema = |n: Node<'_>| {
        let first = arguments(n).first().map(|a| bare(*a));
        let text = first.map(|a| a.compact_text()).unwrap_or_default();
        if text == schema {
            return Some(format!("a second handler is registered for `{schema}`; it could replace the reviewed one"));
        }
        let root = n.ancestors().last().unwrap_or(n);
        let imported = first.filter(|a| a.kind() == "identifier").is_some_and(|a| {
            matches!(super::bindings::module_head(root, a.text()), super::bindings::Head::Import(spec, orig) if orig == a.text() && super::loader::is_package(&spec))
        });
        (!imported)
            .then(|| format!("a handler is registered for `{text}`, which is not a schema imported from a package by its own name: it could be `{schema}`"))
    };
    // A tool list served by a handler of the same method for another request
    // schema names the tool as data: that handler never answers a call.
    let method = method_name(d.registration);
    let listed = |n: Node<'_>| listed_by_other_handler(n, method, &schema);
    registered_once(trees, region, d.registration, &tool, &same_schema, &listed)
}

/// Whether the string `n` is the value of a `name:` property of an object
/// literal inside a handler function passed, as the last argument, to a
/// call of the registering `method` whose first argument is not `schema`
/// (`server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools:
/// [{ name: "write_file", … }] }))`): a descriptor of the tool, which a handler
/// for another request never routes a call by.
fn listed_by_other_handler(n: Node<'_>, method: Option<&str>, schema: &str) -> bool {
    let Some(pair) = n.parent().filter(|p| p.kind() == "pair" && p.field_child("value") == Some(n)) else { return false };
    let keyed = pair.field_child("key").is_some_and(|k| k.kind() == "property_identifier" && k.text() == "name");
    if !keyed || pair.parent().is_none_or(|o| o.kind() != "object") {
        return false;
    }
    pair.ancestors().filter(|a| FUNCTIONS.contains(&a.kind())).any(|handler| {
        let call = handler.parent().filter(|a| a.kind() == "arguments").and_then(|a| a.parent()).filter(|c| c.kind() == "call_expression");
        call.is_some_and(|call| {
            let args = arguments(call);
            let last = args.last().map(|a| bare(*a)) == Some(handler);
            let other = args.first().map(|a| bare(*a).compact_text()).is_some_and(|first| first != schema);
            last && other && args.len() > 1 && method.is_some() && method_name(call) == method
        })
    })
}

/// The tool is registered once, as written: its name is a plain string
/// literal exactly once in the analysed files (inside `registration`;
/// comments are not strings and never count), and no other call of the
/// registering method (by its final name, whatever the receiver) is a
/// `rival` that could register the same tool. Else `region_ambiguous`.
fn registered_once(
    trees: &[(&str, &Syntax)],
    region: &Region<'_>,
    registration: Node<'_>,
    tool: &str,
    rival: &dyn Fn(Node<'_>) -> Option<String>,
    excused: &dyn Fn(Node<'_>) -> bool,
) -> Result<(), Escalation> {
    let ambiguous = |file: &str, at: Node<'_>, why: String| {
        Err(Escalation::new(
            EscalationCode::RegionAmbiguous,
            format!("region `{}`: {why}", region.name),
            Some(Anchor::new(file, at.line(), at.end_line(), at.text())),
        ))
    };
    let method = method_name(registration);
    let mut named = 0;
    for (file, syntax) in trees {
        for n in syntax.root().descendants() {
            if matches!(n.kind(), "string" | "template_string") && string_content(n).as_deref() == Some(tool) && !excused(n) {
                named += 1;
                if !registration.contains(n) {
                    return ambiguous(
                        file,
                        n,
                        format!("the tool name `{tool}` is written again here; a region is reviewed only when nothing else can name its tool"),
                    );
                }
            }
            let same_method = n.kind() == "call_expression" && n != registration && method.is_some() && method_name(n) == method;
            if let Some(why) = rival(n).filter(|_| same_method) {
                return ambiguous(file, n, why);
            }
        }
    }
    if named != 1 {
        return ambiguous(region.file, registration, format!("the tool name `{tool}` is written {named} times"));
    }
    Ok(())
}
