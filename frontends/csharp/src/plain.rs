//! Pinned model types: a type whose value a fact trusts must be plain data.
//!
//! A fact that reads `options.X` or initializes `new T { X = v }` assumes that
//! reading or setting `X` stores a value and runs nothing. When the type is
//! declared in the closure, that is verified here: every member is an
//! auto-property (`{ get; set; }` / `init`) without initializer, attribute or
//! body; no constructor, field, method, operator, indexer, event or nested
//! type; no attribute on the type and no primary constructor (a positional
//! record's, which only stores its parameters, is accepted); base types
//! declared in the closure are checked the same way. A type not declared in
//! the closure comes from a library the envelope assumes.
//!
//! One exception is the reviewer's to make: an attribute on the type itself
//! whose simple name the profile lists as inert (`source.inert-attributes`,
//! say `JsonSourceGenerationOptions`, which only a source generator reads and
//! only on a serializer context). It must name a library attribute: a type of
//! that name (or with the `Attribute` suffix) declared in the closure escalates,
//! and so does any other attribute next to it.

use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::Anchor;

use super::TYPES;

/// Every declaration (partial classes included) of the type `name` in the closure.
pub fn declarations<'a>(trees: &[(&'a str, &'a Syntax)], name: &str) -> Vec<(&'a str, Node<'a>)> {
    let mut out = Vec::new();
    for (path, syntax) in trees {
        for n in syntax.root().descendants().filter(|n| TYPES.contains(&n.kind()) || n.kind() == "enum_declaration") {
            if n.field_child("name").is_some_and(|id| id.text() == name) {
                out.push((*path, n));
            }
        }
    }
    out
}

/// The simple name of a type as written: `Ns.T<int>?` is `T`.
pub fn simple_name(ty: Node<'_>) -> String {
    let text = ty.compact_text();
    let text = text.trim_end_matches('?');
    let text = text.split('<').next().unwrap_or(text);
    text.rsplit('.').next().unwrap_or(text).to_owned()
}

fn fail(path: &str, n: Node<'_>, ty: &str, why: &str, what: &str) -> Escalation {
    Escalation::new(
        EscalationCode::ShapeMismatch,
        format!("`{ty}` ({why}) must be plain data, but {what} at {path}:{}", n.line()),
        Some(Anchor::new(path, n.line(), n.end_line(), n.text())),
    )
}

/// Checks that the type `name`, if the closure declares it, is plain data; `why` says who trusts it.
/// `inert` lists the type-level attributes a reviewer accepted (simple names).
pub fn check(trees: &[(&str, &Syntax)], name: &str, why: &str, inert: &[String]) -> Result<(), Escalation> {
    check_depth(trees, name, why, inert, 0)
}

/// Why a type-level attribute list is not one the reviewer accepted, if it is not.
fn attributes_not_inert(trees: &[(&str, &Syntax)], list: Node<'_>, inert: &[String]) -> Option<String> {
    let attributes: Vec<Node<'_>> = list.named_children().filter(|a| a.kind() == "attribute").collect();
    if attributes.is_empty() {
        return Some("the type has an attribute".into());
    }
    for a in attributes {
        let Some(name) = a.field_child("name") else { return Some("the type has an attribute".into()) };
        let spelled = name.compact_text();
        let simple = spelled.rsplit('.').next().unwrap_or(&spelled).to_owned();
        let simple = simple.strip_suffix("Attribute").map(str::to_owned).unwrap_or(simple);
        if !inert.contains(&simple) {
            return Some(format!("the type has the attribute `{spelled}`, which the profile does not list as inert"));
        }
        let suffixed = format!("{simple}Attribute");
        if let Some((path, decl)) = declarations(trees, &simple).into_iter().chain(declarations(trees, &suffixed)).next() {
            return Some(format!("the type has the attribute `{spelled}`, whose name the closure declares as a type ({path}:{})", decl.line()));
        }
    }
    None
}

fn check_depth(trees: &[(&str, &Syntax)], name: &str, why: &str, inert: &[String], depth: usize) -> Result<(), Escalation> {
    if depth > 16 {
        // A base chain this deep, or a cycle: not a shape this check vouches for.
        let what = format!("`{name}` ({why}) must be plain data, but its base types nest more than 16 deep (or form a cycle)");
        return Err(Escalation::new(EscalationCode::ShapeMismatch, what, None));
    }
    for (path, decl) in declarations(trees, name) {
        if decl.kind() == "interface_declaration" {
            return Err(fail(path, decl, name, why, "it is an interface (its implementation is unknown)"));
        }
        for c in decl.named_children() {
            match c.kind() {
                "attribute_list" => {
                    if let Some(what) = attributes_not_inert(trees, c, inert) {
                        return Err(fail(path, c, name, why, &what));
                    }
                }
                // A positional record's constructor only stores its parameters.
                "parameter_list" if decl.kind() == "record_declaration" && !c.descendants().any(|d| d.kind() == "attribute_list") => {}
                "parameter_list" => return Err(fail(path, c, name, why, "the type has a primary constructor (or an attribute on one)")),
                "base_list" => {
                    for base in c.named_children().filter(|b| b.kind() != "comment") {
                        let base_name = simple_name(base.field_child("type").unwrap_or(base));
                        if base.kind() == "primary_constructor_base_type" || base.named_children().any(|a| a.kind() == "argument_list") {
                            return Err(fail(path, base, name, why, "the base type is called with arguments"));
                        }
                        check_depth(trees, &base_name, why, inert, depth + 1)?;
                    }
                }
                _ => {}
            }
        }
        let Some(body) = decl.field_child("body") else { continue };
        for member in body.named_children().filter(|m| m.kind() != "comment") {
            member_is_plain(member).map_err(|what| fail(path, member, name, why, what))?;
        }
    }
    Ok(())
}

fn member_is_plain(member: Node<'_>) -> Result<(), &'static str> {
    if member.kind() != "property_declaration" {
        return Err("it declares something other than an auto-property (a constructor, field, method, operator, indexer, event or nested type)");
    }
    if member.named_children().any(|c| c.kind() == "attribute_list") {
        return Err("a property has an attribute");
    }
    if member.field_child("value").is_some() {
        return Err("a property has an initializer");
    }
    let Some(accessors) = member.field_child("accessors") else { return Err("a property has an expression body") };
    for a in accessors.named_children().filter(|a| a.kind() == "accessor_declaration") {
        if a.field_child("body").is_some() || a.named_children().any(|c| matches!(c.kind(), "block" | "arrow_expression_clause" | "attribute_list")) {
            return Err("a property accessor has a body or an attribute");
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use fcd_frontends::language::Lang;

    fn tree(text: &str) -> Syntax {
        Syntax::parse(Lang::CSharp, text.into()).unwrap()
    }

    #[test]
    fn only_auto_properties_are_plain() {
        let ok = tree("class B { public int Y { get; init; } } class T : B, IX { public bool? X { get; set; } }");
        assert!(check(&[("a.cs", &ok)], "T", "test", &[]).is_ok());
        assert!(check(&[("a.cs", &ok)], "Absent", "test", &[]).is_ok());
        let cycle = tree("class T : B { } class B : T { }");
        assert!(check(&[("a.cs", &cycle)], "T", "test", &[]).is_err(), "a base cycle is not vouched for");
        let record = tree("record T(bool X);");
        assert!(check(&[("a.cs", &record)], "T", "test", &[]).is_ok());
        for bad in [
            "class T { public bool? X { get => true; set; } }",
            "class T { public bool? X { get; set; } = true; }",
            "class T { static T() { } public bool? X { get; set; } }",
            "class T { [JsonIgnore] public bool? X { get; set; } }",
            "class T : B { } class B { public bool X => true; }",
            "class T { public void OnSerializing() { } }",
            "class T(bool x) { }",
        ] {
            let t = tree(bad);
            assert!(check(&[("a.cs", &t)], "T", "test", &[]).is_err(), "{bad}");
        }
    }

    #[test]
    fn listed_type_attribute_is_plain_only_from_a_library() {
        let inert = ["JsonSourceGenerationOptions".to_owned()];
        let ok = tree("[JsonSourceGenerationOptions(PropertyNamingPolicy = JsonKnownNamingPolicy.CamelCase)] class T { public bool? X { get; set; } }");
        assert!(check(&[("a.cs", &ok)], "T", "test", &inert).is_ok());
        assert!(check(&[("a.cs", &ok)], "T", "test", &[]).is_err(), "an unlisted attribute escalates");
        let suffixed = tree("[System.Text.Json.Serialization.JsonSourceGenerationOptionsAttribute] class T { }");
        assert!(check(&[("a.cs", &suffixed)], "T", "test", &inert).is_ok());
        for bad in [
            "[JsonSourceGenerationOptions, JsonConverter(typeof(C))] class T { }",
            "[JsonSourceGenerationOptions] class T { [JsonSourceGenerationOptions] public bool? X { get; set; } }",
            "[JsonSourceGenerationOptions] class T { } class JsonSourceGenerationOptionsAttribute : System.Attribute { }",
            "[JsonSourceGenerationOptions] class T { } class JsonSourceGenerationOptions : System.Attribute { }",
        ] {
            let t = tree(bad);
            assert!(check(&[("a.cs", &t)], "T", "test", &inert).is_err(), "{bad}");
        }
    }
}
