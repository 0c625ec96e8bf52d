//! The tool's input schema as the release declares it, read for the
//! `[arguments]` table that `fcd profile init` proposes.
//!
//! An author's first table is the tool's arguments, and copying them by hand
//! from a zod object, a pydantic model or a Go option list is where a
//! starting profile first goes wrong (a default missed is a `required` that
//! refuses every call). This reads the tool's one declaration by syntax,
//! never by running it: the registration's or listing's `inputSchema` (zod,
//! JSON Schema, a pydantic model), the model the handler builds from the
//! call's arguments, a decorated handler's parameters, or a Go tool's
//! `mcp.With…` options and `InputSchema` literal. A declaration that is not
//! found, or found twice, is not guessed: the author is told why and writes
//! the table. A property whose type is not one of the plain spellings is
//! proposed without one, as a comment to fill in. Nothing here decides a
//! call: `certify` checks calls against the table the reviewer signs.

use fcd_frontends::Lang;
use fcd_frontends::ts::{Node, Syntax};

/// One proposed argument: its JSON type when the declaration spells one
/// plainly, and whether a call must give it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Argument {
    pub name: String,
    pub ty: Option<&'static str>,
    pub required: bool,
}

/// The arguments of the tool's declaration, and where it is (`file:line`).
#[derive(Debug)]
pub struct Declared {
    pub arguments: Vec<Argument>,
    pub at: String,
}

/// The parsed files of the release, by path.
type Trees<'s, 'a> = &'s [(&'a str, &'a Syntax)];

/// Reads the input schema of `tool`; `handler` is the located handler
/// region (a Python handler may build the model itself, or be the decorated
/// function whose parameters are the schema). `Err` says why nothing is
/// proposed.
pub fn read(lang: Lang, trees: Trees<'_, '_>, tool: &str, handler: Option<(&str, Node<'_>)>) -> Result<Declared, String> {
    match lang {
        Lang::Go => go::read(trees, tool),
        Lang::JavaScript | Lang::TypeScript => javascript::read(trees, tool),
        Lang::Python => python::read(trees, tool, handler),
        Lang::CSharp => Err("a C# tool's options are declared by its command classes, which init does not read".to_owned()),
    }
}

/// The one node `found` yields, or why there is not exactly one.
fn one<'a>(found: Vec<(&str, Node<'a>)>, what: &str) -> Result<(String, Node<'a>), String> {
    match found.as_slice() {
        [] => Err(format!("no {what} in the release")),
        [(file, node)] => Ok((file.to_string(), *node)),
        [(a, n), (b, m), ..] => Err(format!("{} {what}s ({a}:{}, {b}:{}): which one is the tool's is not read", found.len(), n.line(), m.line())),
    }
}

/// The value of a plain string literal: quoted once, with no escape,
/// interpolation or prefix.
fn literal(node: Node<'_>) -> Option<String> {
    if !matches!(node.kind(), "string" | "interpreted_string_literal" | "raw_string_literal") {
        return None;
    }
    let text = node.text();
    let quote = text.chars().next().filter(|c| matches!(c, '"' | '\'' | '`'))?;
    let inner = text.strip_prefix(quote)?.strip_suffix(quote)?;
    (!inner.contains(['\\', quote, '{', '$', '\n'])).then(|| inner.to_owned())
}

/// Every node of every tree, with its file.
fn all<'s, 'a>(trees: Trees<'s, 'a>) -> impl Iterator<Item = (&'a str, Node<'a>)> + use<'s, 'a> {
    trees.iter().flat_map(|(file, syntax)| syntax.root().descendants().map(move |n| (*file, n)))
}

mod go {
    //! `mcp.NewTool("name", mcp.WithString("x", mcp.Required()), …)`
    //! (mark3labs/mcp-go) and `mcp.Tool{Name: "name", InputSchema:
    //! &jsonschema.Schema{Properties: …, Required: …}}` (the Go SDK).
    use super::{Argument, Declared, Node, Trees, all, literal, one};

    pub(super) fn read(trees: Trees<'_, '_>, tool: &str) -> Result<Declared, String> {
        let calls: Vec<_> = all(trees)
            .filter(|(_, n)| {
                n.kind() == "call_expression" && last_name(n.field_child("function")) == "NewTool" && first_arg(*n).and_then(literal).as_deref() == Some(tool)
            })
            .collect();
        let literals: Vec<_> =
            all(trees).filter(|(_, n)| n.kind() == "composite_literal" && keyed(*n, "Name").and_then(literal).as_deref() == Some(tool)).collect();
        match (calls.is_empty(), literals.is_empty()) {
            (false, true) => {
                let (file, call) = one(calls, &format!("mcp.NewTool(\"{tool}\", …)"))?;
                Ok(Declared { arguments: options(call)?, at: format!("{file}:{}", call.line()) })
            }
            (true, false) => {
                let (file, tool_literal) = one(literals, &format!("tool literal with Name \"{tool}\""))?;
                let schema = keyed(tool_literal, "InputSchema").ok_or("the tool literal declares no InputSchema")?;
                Ok(Declared { arguments: json_schema(schema)?, at: format!("{file}:{}", tool_literal.line()) })
            }
            (true, true) => Err(format!("no mcp.NewTool(\"{tool}\", …) and no tool literal with Name \"{tool}\" in the release")),
            (false, false) => Err(format!("the tool \"{tool}\" is declared both by mcp.NewTool and by a tool literal")),
        }
    }

    /// The last name of a callee: `NewTool` of `mcp.NewTool`.
    fn last_name(function: Option<Node<'_>>) -> &str {
        function.map_or("", |f| f.text().rsplit('.').next().unwrap_or_default())
    }

    fn first_arg(call: Node<'_>) -> Option<Node<'_>> {
        call.field_child("arguments")?.named_children().next()
    }

    /// The properties among a `NewTool` call's options: `WithString`,
    /// `WithNumber`, `WithBoolean`, `WithArray` or `WithObject("name", …)`, required
    /// when one of its own options is `Required()`.
    fn options(call: Node<'_>) -> Result<Vec<Argument>, String> {
        let mut arguments = Vec::new();
        for option in call.field_child("arguments").into_iter().flat_map(|a| a.named_children().collect::<Vec<_>>()).skip(1) {
            if option.kind() != "call_expression" {
                continue;
            }
            let ty = match last_name(option.field_child("function")) {
                "WithString" => Some("string"),
                "WithNumber" => Some("number"),
                "WithBoolean" => Some("boolean"),
                "WithArray" => Some("array"),
                "WithObject" => Some("object"),
                // Any other option (a description, a title, an annotation) is not a property.
                _ => continue,
            };
            let Some(name) = first_arg(option).and_then(literal) else {
                return Err(format!("an option at line {} is not named by a plain string", option.line()));
            };
            let required = option
                .field_child("arguments")
                .into_iter()
                .flat_map(|a| a.named_children().collect::<Vec<_>>())
                .any(|o| o.kind() == "call_expression" && last_name(o.field_child("function")) == "Required");
            arguments.push(Argument { name, ty, required });
        }
        Ok(arguments)
    }

    /// The value of `Key: value` in a composite literal's body.
    fn keyed<'a>(composite: Node<'a>, key: &str) -> Option<Node<'a>> {
        let body = match composite.kind() {
            "composite_literal" => composite.field_child("body")?,
            "literal_value" => composite,
            _ => return None,
        };
        body.named_children().filter(|e| e.kind() == "keyed_element").find_map(|e| {
            let (k, v) = key_value(e)?;
            (k.text() == key || literal(k).as_deref() == Some(key)).then_some(v)
        })
    }

    /// A keyed element's key and value, each unwrapped from `literal_element`.
    fn key_value(element: Node<'_>) -> Option<(Node<'_>, Node<'_>)> {
        let parts: Vec<Node<'_>> = element.named_children().filter(|n| n.kind() != "comment").collect();
        fn unwrap(n: Node<'_>) -> Node<'_> {
            if n.kind() == "literal_element" { n.named_children().next().unwrap_or(n) } else { n }
        }
        match parts.as_slice() {
            [k, v] => Some((unwrap(*k), unwrap(*v))),
            _ => None,
        }
    }

    /// `&jsonschema.Schema{Type: "object", Properties: map[…]{"x": {Type: "string"}}, Required: []string{"x"}}`.
    fn json_schema(schema: Node<'_>) -> Result<Vec<Argument>, String> {
        let schema = if schema.kind() == "unary_expression" { schema.field_child("operand").unwrap_or(schema) } else { schema };
        let properties = keyed(schema, "Properties").ok_or_else(|| format!("the InputSchema at line {} lists no Properties", schema.line()))?;
        let required: Vec<String> = keyed(schema, "Required")
            .and_then(|r| r.field_child("body"))
            .map(|b| b.named_children().filter_map(|e| literal(e.named_children().next().unwrap_or(e)).or_else(|| literal(e))).collect())
            .unwrap_or_default();
        let body = properties.field_child("body").ok_or("the Properties are not a map literal")?;
        let mut arguments = Vec::new();
        for element in body.named_children().filter(|e| e.kind() == "keyed_element") {
            let Some((key, value)) = key_value(element) else { continue };
            let Some(name) = literal(key) else {
                return Err(format!("a property at line {} is not named by a plain string", element.line()));
            };
            let value = if value.kind() == "unary_expression" { value.field_child("operand").unwrap_or(value) } else { value };
            let ty = keyed(value, "Type").and_then(literal).and_then(|t| super::json_type(&t));
            arguments.push(Argument { required: required.contains(&name), name, ty });
        }
        Ok(arguments)
    }
}

mod javascript {
    //! `server.registerTool("name", {inputSchema: S}, cb)`, `server.tool("name",
    //! [description,] S, cb)` and a listing's `{name: "name", inputSchema: S}`,
    //! where S is a zod shape, `z.object(shape)`, `X.shape`,
    //! `zodToJsonSchema(X)`, a JSON Schema object or a top-level constant
    //! bound to one of these.
    use super::{Argument, Declared, Node, Trees, all, literal, one};

    pub(super) fn read(trees: Trees<'_, '_>, tool: &str) -> Result<Declared, String> {
        let mut found: Vec<(&str, Node<'_>)> = Vec::new();
        for (file, node) in all(trees) {
            match node.kind() {
                "call_expression" => {
                    let method = node.field_child("function").filter(|f| f.kind() == "member_expression").and_then(|f| f.field_child("property"));
                    let args: Vec<Node<'_>> =
                        node.field_child("arguments").map(|a| a.named_children().filter(|n| n.kind() != "comment").collect()).unwrap_or_default();
                    if args.first().and_then(|a| literal(*a)).as_deref() != Some(tool) {
                        continue;
                    }
                    match method.map(|m| m.text()) {
                        Some("registerTool") => {
                            if let Some(schema) = args.get(1).and_then(|config| pair(*config, "inputSchema")) {
                                found.push((file, schema));
                            }
                        }
                        // tool(name, [description,] schema, callback): the schema is the
                        // last argument but the callback that is not a string.
                        Some("tool") if args.len() >= 3 => {
                            if let Some(schema) = args[1..args.len() - 1].iter().rev().find(|a| literal(**a).is_none()) {
                                found.push((file, *schema));
                            }
                        }
                        _ => {}
                    }
                }
                "object" if pair(node, "name").and_then(literal).as_deref() == Some(tool) => {
                    if let Some(schema) = pair(node, "inputSchema") {
                        found.push((file, schema));
                    }
                }
                _ => {}
            }
        }
        let (file, schema) = one(found, &format!("input schema of the tool \"{tool}\""))?;
        let arguments = shape(trees, schema, 0)?;
        Ok(Declared { arguments, at: format!("{file}:{}", schema.line()) })
    }

    /// The value of `key: value` in an object literal.
    fn pair<'a>(object: Node<'a>, key: &str) -> Option<Node<'a>> {
        if object.kind() != "object" {
            return None;
        }
        object.named_children().filter(|p| p.kind() == "pair").find_map(|p| {
            let k = p.field_child("key")?;
            (k.text() == key || literal(k).as_deref() == Some(key)).then(|| p.field_child("value")).flatten()
        })
    }

    /// The arguments of a schema expression.
    fn shape(trees: Trees<'_, '_>, schema: Node<'_>, depth: usize) -> Result<Vec<Argument>, String> {
        if depth > 8 {
            return Err(format!("the schema at line {} is bound through too many names", schema.line()));
        }
        let at = schema.line();
        match schema.kind() {
            "parenthesized_expression" | "as_expression" | "satisfies_expression" | "non_null_expression" => {
                let inner = schema.named_children().next().ok_or("an empty expression")?;
                shape(trees, inner, depth + 1)
            }
            "object" if pair(schema, "properties").is_some() => json_schema(schema),
            "object" => zod_shape(schema),
            "identifier" => {
                let name = schema.text();
                let bound: Vec<_> = all(trees)
                    .filter(|(_, n)| {
                        n.kind() == "variable_declarator"
                            && n.field_child("name").is_some_and(|x| x.text() == name)
                            && n.parent().and_then(|d| d.parent()).is_some_and(|p| matches!(p.kind(), "program" | "export_statement"))
                    })
                    .filter_map(|(f, n)| n.field_child("value").map(|v| (f, v)))
                    .collect();
                let (_, value) = one(bound, &format!("top-level binding of `{name}`"))?;
                shape(trees, value, depth + 1)
            }
            "member_expression" if schema.field_child("property").is_some_and(|p| p.text() == "shape") => {
                shape(trees, schema.field_child("object").ok_or("a member without its object")?, depth + 1)
            }
            "call_expression" => {
                let function = schema.field_child("function").map(|f| f.text()).unwrap_or_default();
                let first = schema.field_child("arguments").and_then(|a| a.named_children().next());
                let last = function.rsplit('.').next().unwrap_or_default();
                match first {
                    Some(first) if function == "z.object" || function == "z.strictObject" || last.to_ascii_lowercase().contains("jsonschema") => {
                        shape(trees, first, depth + 1)
                    }
                    _ => Err(format!("the schema at line {at} is `{function}(…)`, which init does not read")),
                }
            }
            other => Err(format!("the schema at line {at} is a {other}, which init does not read")),
        }
    }

    /// `{ x: z.string(), y: z.number().optional() }`.
    fn zod_shape(object: Node<'_>) -> Result<Vec<Argument>, String> {
        let mut arguments = Vec::new();
        for member in object.named_children().filter(|n| n.kind() != "comment") {
            let (Some(key), Some(value)) = (member.field_child("key"), member.field_child("value")) else {
                return Err(format!("a member of the schema at line {} is not `name: type`", member.line()));
            };
            let name = literal(key).unwrap_or_else(|| key.text().to_owned());
            let (ty, required) = zod_type(value);
            arguments.push(Argument { name, ty, required });
        }
        Ok(arguments)
    }

    /// A zod chain's JSON type and whether it is required: `z.string()`,
    /// `.describe(…)`, `.optional()`, `.default(…)`, `.int()` …
    fn zod_type(value: Node<'_>) -> (Option<&'static str>, bool) {
        let mut methods = Vec::new();
        let mut node = value;
        let base = loop {
            if node.kind() != "call_expression" {
                break None;
            }
            let Some(function) = node.field_child("function").filter(|f| f.kind() == "member_expression") else { break None };
            let method = function.field_child("property").map(|p| p.text()).unwrap_or_default();
            match function.field_child("object") {
                Some(object) if object.kind() == "identifier" && object.text() == "z" => break Some(method),
                Some(object) => {
                    methods.push(method);
                    node = object;
                }
                None => break None,
            }
        };
        let optional = methods.iter().any(|m| matches!(*m, "optional" | "default" | "nullish" | "catch")) || base == Some("optional");
        let ty = match base {
            Some("string" | "enum" | "url" | "email") => Some("string"),
            Some("number") if methods.contains(&"int") => Some("integer"),
            Some("number") => Some("number"),
            Some("boolean") => Some("boolean"),
            Some("array") => Some("array"),
            Some("object" | "record") => Some("object"),
            _ => None,
        };
        (ty, !optional)
    }

    /// `{ type: "object", properties: { x: { type: "string" } }, required: ["x"] }`.
    fn json_schema(schema: Node<'_>) -> Result<Vec<Argument>, String> {
        let properties = pair(schema, "properties").filter(|p| p.kind() == "object").ok_or("the properties are not an object literal")?;
        let required: Vec<String> = pair(schema, "required").map(|r| r.named_children().filter_map(literal).collect()).unwrap_or_default();
        let mut arguments = Vec::new();
        for member in properties.named_children().filter(|n| n.kind() == "pair") {
            let Some(key) = member.field_child("key") else { continue };
            let name = literal(key).unwrap_or_else(|| key.text().to_owned());
            let ty = member.field_child("value").and_then(|v| pair(v, "type")).and_then(literal).and_then(|t| super::json_type(&t));
            arguments.push(Argument { required: required.contains(&name), name, ty });
        }
        Ok(arguments)
    }
}

mod python {
    //! `Tool(name="name", inputSchema=M.model_json_schema())`, a model the
    //! handler builds with `M(**arguments)`, or the parameters of a handler
    //! registered by a decorator. A pydantic field is required unless it has
    //! a default (`= value`, `Field(default=…)`, `Field(value)`).
    use super::{Argument, Declared, Node, Trees, all, literal, one};

    pub(super) fn read(trees: Trees<'_, '_>, tool: &str, handler: Option<(&str, Node<'_>)>) -> Result<Declared, String> {
        // The listing's model.
        let listed: Vec<_> = all(trees)
            .filter(|(_, n)| n.kind() == "call" && n.field_child("function").is_some_and(|f| f.text().rsplit('.').next() == Some("Tool")))
            .filter(|(_, n)| keyword(*n, "name").is_some_and(|v| names_tool(trees, v, tool)))
            .collect();
        if !listed.is_empty() {
            let (file, call) = one(listed, &format!("Tool(name=\"{tool}\", …)"))?;
            let schema = keyword(call, "inputSchema").ok_or_else(|| format!("Tool(name=\"{tool}\") at {file}:{} has no inputSchema", call.line()))?;
            let model = schema_model(schema).ok_or_else(|| format!("the inputSchema at {file}:{} is not `Model.model_json_schema()`", schema.line()))?;
            return model_fields(trees, model);
        }
        let Some((file, handler)) = handler else {
            return Err(format!("no Tool(name=\"{tool}\", …) in the release"));
        };
        // The model the handler builds from the call's arguments.
        let built: Vec<&str> = handler
            .descendants()
            .filter(|n| n.kind() == "call")
            .filter(|n| n.field_child("arguments").is_some_and(|a| a.named_children().any(|x| x.kind() == "dictionary_splat")))
            .filter_map(|n| n.field_child("function").filter(|f| f.kind() == "identifier").map(|f| f.text()))
            .filter(|name| class(trees, name).is_ok())
            .collect();
        if let [model] = built.as_slice() {
            return model_fields(trees, model);
        }
        // A decorated handler's parameters.
        let function = match handler.kind() {
            "decorated_definition" => handler.field_child("definition"),
            "function_definition" => Some(handler),
            _ => None,
        };
        // Registered as a tool (`@mcp.tool()`, `@server.tool(…)`): a dispatcher every
        // tool reaches (`@server.call_tool()`) takes the name and the arguments instead.
        let decorated = function.and_then(|f| f.parent()).filter(|p| p.kind() == "decorated_definition").is_some_and(|p| {
            p.named_children().filter(|d| d.kind() == "decorator").any(|d| {
                let callee = d.named_children().next().map(|e| if e.kind() == "call" { e.field_child("function").unwrap_or(e) } else { e });
                callee.is_some_and(|c| c.text().rsplit('.').next() == Some("tool"))
            })
        });
        match function {
            Some(function) if decorated => Ok(Declared { arguments: parameters(function), at: format!("{file}:{}", function.line()) }),
            _ => Err(format!(
                "no Tool(name=\"{tool}\", …) listing, no model the handler builds from the arguments, and the handler is not a function registered by a `tool` decorator"
            )),
        }
    }

    /// The value of the keyword argument `name` of a call.
    fn keyword<'a>(call: Node<'a>, name: &str) -> Option<Node<'a>> {
        call.field_child("arguments")?
            .named_children()
            .filter(|a| a.kind() == "keyword_argument")
            .find(|a| a.field_child("name").is_some_and(|n| n.text() == name))
            .and_then(|a| a.field_child("value"))
    }

    /// Whether `value` is the tool's name: the string, or a member of a
    /// class (an enum) assigned that string.
    fn names_tool(trees: Trees<'_, '_>, value: Node<'_>, tool: &str) -> bool {
        if let Some(text) = literal(value) {
            return text == tool;
        }
        let Some((owner, member)) = value.text().rsplit_once('.') else { return false };
        class(trees, owner).is_ok_and(|(_, c)| {
            c.field_child("body").is_some_and(|b| {
                b.named_children()
                    .filter_map(|s| s.named_children().next())
                    .filter(|a| a.kind() == "assignment")
                    .any(|a| a.field_child("left").is_some_and(|l| l.text() == member) && a.field_child("right").and_then(literal).as_deref() == Some(tool))
            })
        })
    }

    /// `M` of `M.model_json_schema()` or `M.schema()`.
    fn schema_model(schema: Node<'_>) -> Option<&str> {
        let function = schema.field_child("function").filter(|_| schema.kind() == "call")?;
        let (model, method) = function.text().rsplit_once('.')?;
        (matches!(method, "model_json_schema" | "schema") && !model.contains(['.', '('])).then_some(model)
    }

    /// The one top-level class of that name.
    fn class<'a>(trees: Trees<'_, 'a>, name: &str) -> Result<(String, Node<'a>), String> {
        let found: Vec<_> = all(trees)
            .filter(|(_, n)| n.kind() == "class_definition" && n.field_child("name").is_some_and(|x| x.text() == name))
            .filter(|(_, n)| n.parent().is_some_and(|p| p.kind() == "module" || p.kind() == "decorated_definition"))
            .collect();
        one(found, &format!("class `{name}`"))
    }

    /// The annotated fields of a model class.
    fn model_fields(trees: Trees<'_, '_>, model: &str) -> Result<Declared, String> {
        let (file, class) = class(trees, model)?;
        let body = class.field_child("body").ok_or("a class without a body")?;
        let mut arguments = Vec::new();
        for statement in body.named_children().filter(|s| s.kind() == "expression_statement") {
            let Some(assignment) = statement.named_children().next().filter(|a| a.kind() == "assignment") else { continue };
            let (Some(left), Some(annotation)) = (assignment.field_child("left"), assignment.field_child("type")) else { continue };
            if left.kind() != "identifier" || left.text().starts_with('_') || annotation.text().starts_with("ClassVar") {
                continue;
            }
            let (ty, annotated_default) = annotation_type(annotation);
            let required = !annotated_default && assignment.field_child("right").is_none_or(|r| is_required_field(r));
            arguments.push(Argument { name: left.text().to_owned(), ty, required });
        }
        Ok(Declared { arguments, at: format!("{file}:{}", class.line()) })
    }

    /// `Field(…)` without a default: required. Any other value is a default.
    fn is_required_field(value: Node<'_>) -> bool {
        let field = value.kind() == "call" && value.field_child("function").is_some_and(|f| f.text().rsplit('.').next() == Some("Field"));
        field && field_has_no_default(value)
    }

    fn field_has_no_default(field: Node<'_>) -> bool {
        let Some(arguments) = field.field_child("arguments") else { return true };
        let mut args = arguments.named_children().filter(|a| a.kind() != "comment");
        let positional_default =
            arguments.named_children().find(|a| a.kind() != "keyword_argument" && a.kind() != "comment").is_some_and(|a| a.text() != "...");
        !positional_default
            && !args.any(|a| a.kind() == "keyword_argument" && a.field_child("name").is_some_and(|n| matches!(n.text(), "default" | "default_factory")))
    }

    /// An annotation's JSON type, and whether an `Annotated[…, Field(default=…)]` gives a default.
    fn annotation_type(annotation: Node<'_>) -> (Option<&'static str>, bool) {
        let node = if annotation.kind() == "type" { annotation.named_children().next().unwrap_or(annotation) } else { annotation };
        let text = node.text();
        if let Some(inner) = text.strip_prefix("Annotated[") {
            // The first item is the type; a Field among the rest may hold the default.
            let default = node
                .descendants()
                .filter(|n| n.kind() == "call")
                .any(|c| c.field_child("function").is_some_and(|f| f.text().ends_with("Field")) && !field_has_no_default(c));
            let first = inner.split([',', ']']).next().unwrap_or_default().trim();
            return (py_type(first), default);
        }
        (py_type(text), false)
    }

    fn py_type(text: &str) -> Option<&'static str> {
        let text = text.trim();
        let text = text.strip_suffix("| None").or_else(|| text.strip_prefix("Optional[").and_then(|t| t.strip_suffix(']'))).unwrap_or(text).trim();
        let base = text.split('[').next().unwrap_or_default().rsplit('.').next().unwrap_or_default();
        Some(match base {
            "str" | "AnyUrl" | "HttpUrl" | "AnyHttpUrl" | "Path" => "string",
            "int" | "PositiveInt" | "NonNegativeInt" => "integer",
            "float" => "number",
            "bool" => "boolean",
            "list" | "List" | "tuple" | "Tuple" | "Sequence" | "set" => "array",
            "dict" | "Dict" | "Mapping" => "object",
            _ => return None,
        })
    }

    /// A decorated handler's parameters, the request context left out.
    fn parameters(function: Node<'_>) -> Vec<Argument> {
        let mut arguments = Vec::new();
        for parameter in function.field_child("parameters").into_iter().flat_map(|p| p.named_children().collect::<Vec<_>>()) {
            let (name, annotation, required) = match parameter.kind() {
                "typed_parameter" => (parameter.named_children().next(), parameter.field_child("type"), true),
                "typed_default_parameter" => (parameter.field_child("name"), parameter.field_child("type"), false),
                "default_parameter" => (parameter.field_child("name"), None, false),
                "identifier" => (Some(parameter), None, true),
                _ => continue,
            };
            let Some(name) = name.filter(|n| n.kind() == "identifier") else { continue };
            let context = annotation.is_some_and(|a| a.text().contains("Context"));
            if matches!(name.text(), "self" | "cls" | "ctx" | "context") || context {
                continue;
            }
            let (ty, annotated_default) = annotation.map_or((None, false), annotation_type);
            arguments.push(Argument { name: name.text().to_owned(), ty, required: required && !annotated_default });
        }
        arguments
    }
}

/// A JSON Schema type name, as `[arguments]` spells it.
fn json_type(name: &str) -> Option<&'static str> {
    ["string", "integer", "number", "boolean", "object", "array"].into_iter().find(|t| *t == name)
}
