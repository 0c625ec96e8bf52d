//! C#'s `option` fact: an option a framework binds from an attribute on a
//! property of the options type a region receives, not from code the
//! release writes (no registration call, no binding helper).
//!
//! The fact stands for "omitted, the option leaves the property as the
//! object was created", so everything that could make it otherwise is
//! checked: the options type is declared once in the closure, is made only
//! of auto-properties (no constructor, field, method, initializer or base
//! type of the closure that could set the property), the property is a plain
//! `public` auto-property of the reviewed type carrying the reviewed
//! attribute whose named arguments are all inert (a `Name`, alias or default
//! of its own is not inert), no other attribute in the type could claim the
//! argument's name, and the type is named nowhere else in the closure (an
//! override receiving it, a creation, a cast could change the object before
//! the region runs). What the framework does with the attribute is an
//! assumption the envelope states.

use std::collections::BTreeMap;

use fcd_frontends::frontend::Found;
use fcd_frontends::ir::{Escalation, EscalationCode};
use fcd_frontends::ts::{Node, Syntax};
use fcd_model::effect::{Anchor, Fact, FactValue};

use super::facts::Cx;
use super::syntax::string_content;
use super::{TYPES, plain};

fn fail(path: &str, n: Node<'_>, detail: String) -> Escalation {
    Escalation::new(EscalationCode::ShapeMismatch, detail, Some(Anchor::new(path, n.line(), n.end_line(), n.text())))
}

/// The simple name of an attribute as written: `Ns.OptionAttribute` is `Option`.
fn attribute_name(a: Node<'_>) -> String {
    let spelled = a.field_child("name").map(|n| n.compact_text()).unwrap_or_default();
    let simple = spelled.rsplit('.').next().unwrap_or(&spelled).to_owned();
    simple.strip_suffix("Attribute").map(str::to_owned).unwrap_or(simple)
}

fn attributes(n: Node<'_>) -> Vec<Node<'_>> {
    n.named_children()
        .filter(|c| c.kind() == "attribute_list")
        .flat_map(|l| l.named_children().filter(|a| a.kind() == "attribute").collect::<Vec<_>>())
        .collect()
}

fn attribute_arguments(a: Node<'_>) -> Vec<Node<'_>> {
    a.named_children()
        .filter(|c| c.kind() == "attribute_argument_list")
        .flat_map(|l| l.named_children().filter(|x| x.kind() == "attribute_argument").collect::<Vec<_>>())
        .collect()
}

impl<'a> Cx<'_, 'a> {
    /// The option `argument` bound to `property` of the options type the region receives.
    pub(super) fn option_fact(&self, property: &str, attribute: &str, ty: &str, argument: &str, inert: &[String]) -> Result<Option<Found<'a>>, Escalation> {
        let trees = self.site.region.trees;
        let region = self.site.region.node;
        let params: Vec<Node<'a>> =
            region.field_child("parameters").map(|l| l.named_children().filter(|p| p.kind() == "parameter").collect()).unwrap_or_default();
        let declares = |p: &Node<'a>| {
            p.field_child("type").is_some_and(|t| {
                plain::declarations(trees, &plain::simple_name(t))
                    .iter()
                    .any(|(_, d)| properties(*d).iter().any(|m| m.field_child("name").is_some_and(|n| n.text() == property)))
            })
        };
        let holders: Vec<Node<'a>> = params.into_iter().filter(declares).collect();
        let param = match holders.as_slice() {
            [] => return Ok(None),
            [one] => *one,
            [_, second, ..] => return Err(self.site.mismatch(*second, format!("two parameters of the region have a type declaring `{property}`"))),
        };
        let (Some(param_type), Some(param_name)) = (param.field_child("type"), param.field_child("name")) else { return Ok(None) };
        let options = plain::simple_name(param_type);
        let decls = plain::declarations(trees, &options);
        let [(path, decl)] = decls.as_slice() else {
            return Err(self.site.mismatch(param, format!("the options type `{options}` is declared {} times in the closure (a partial type)", decls.len())));
        };
        let (path, decl) = (*path, *decl);
        options_type_plain(trees, path, decl, &options)?;
        let target = properties(decl).into_iter().find(|m| m.field_child("name").is_some_and(|n| n.text() == property));
        let Some(target) = target else { return Ok(None) };
        property_shape(path, target, property, attribute, ty, inert)?;
        names_free(path, decl, target, property, argument, inert)?;
        for name in [attribute.to_owned(), format!("{attribute}Attribute")] {
            if let Some((p, d)) = plain::declarations(trees, &name).into_iter().next() {
                return Err(fail(p, d, format!("the closure declares a type `{name}`, so `[{attribute}]` may not be the framework's attribute")));
            }
        }
        let enclosing = region.ancestors().find(|a| TYPES.contains(&a.kind()));
        mentioned_only_here(trees, &options, decl, param_type, enclosing)?;

        let parameter = param_name.text().to_owned();
        let mut values = BTreeMap::new();
        values.insert("argument".into(), FactValue::Text(argument.to_owned()));
        values.insert("parameter".into(), FactValue::Text(parameter.clone()));
        values.insert("type".into(), FactValue::Text(options));
        values.insert("property".into(), FactValue::Text(property.to_owned()));
        values.insert("variable".into(), FactValue::Text(format!("{parameter}.{property}")));
        let fact = Fact {
            name: self.site.spec.name.clone(),
            kind: self.site.spec.kind.name().to_owned(),
            region: self.site.region.name.to_owned(),
            anchor: Anchor::new(path, target.line(), target.end_line(), target.text()),
            values,
        };
        Ok(Some(Found { fact, node: target }))
    }
}

fn properties(decl: Node<'_>) -> Vec<Node<'_>> {
    decl.field_child("body").map(|b| b.named_children().filter(|m| m.kind() == "property_declaration").collect()).unwrap_or_default()
}

/// The options type holds nothing that could set a property when the
/// framework creates it: a class of auto-properties without initializers, no
/// primary constructor, no type-level attribute, no base type of the closure.
fn options_type_plain(trees: &[(&str, &Syntax)], path: &str, decl: Node<'_>, name: &str) -> Result<(), Escalation> {
    if decl.kind() != "class_declaration" {
        return Err(fail(path, decl, format!("the options type `{name}` is a {}, not a class", decl.kind())));
    }
    for c in decl.named_children() {
        match c.kind() {
            "attribute_list" => return Err(fail(path, c, format!("the options type `{name}` has a type-level attribute"))),
            "parameter_list" => return Err(fail(path, c, format!("the options type `{name}` has a primary constructor"))),
            "base_list" => {
                for base in c.named_children().filter(|b| b.kind() != "comment") {
                    let base_name = plain::simple_name(base.field_child("type").unwrap_or(base));
                    if let Some((p, d)) = plain::declarations(trees, &base_name).into_iter().next() {
                        return Err(fail(p, d, format!("the options type `{name}` derives from `{base_name}`, declared in the closure")));
                    }
                }
            }
            _ => {}
        }
    }
    let Some(body) = decl.field_child("body") else { return Ok(()) };
    for member in body.named_children().filter(|m| m.kind() != "comment") {
        let why = if member.kind() != "property_declaration" {
            Some("declares something other than a property (a constructor, field, method or nested type could set an option)")
        } else if member.field_child("value").is_some() {
            Some("has a property with an initializer or an expression body")
        } else if !member
            .field_child("accessors")
            .is_some_and(|a| a.named_children().filter(|x| x.kind() == "accessor_declaration").all(|x| x.field_child("body").is_none()))
        {
            Some("has a property whose accessors have a body")
        } else {
            None
        };
        if let Some(why) = why {
            return Err(fail(path, member, format!("the options type `{name}` {why} at line {}", member.line())));
        }
    }
    Ok(())
}

/// The property is `public TYPE NAME { get; set; }` (or `init`) with the one
/// reviewed attribute, whose named arguments are all inert.
fn property_shape(path: &str, target: Node<'_>, property: &str, attribute: &str, ty: &str, inert: &[String]) -> Result<(), Escalation> {
    let written = target.field_child("type").map(|t| t.compact_text()).unwrap_or_default();
    if written != ty {
        return Err(fail(path, target, format!("`{property}` is a `{written}`, not the reviewed `{ty}`")));
    }
    let modifiers: Vec<&str> = target.named_children().filter(|c| c.kind() == "modifier").map(|m| m.text()).collect();
    if modifiers != ["public"] {
        return Err(fail(path, target, format!("`{property}` has the modifiers `{}`; the reviewed option is only `public`", modifiers.join(" "))));
    }
    let accessors: Vec<Node<'_>> =
        target.field_child("accessors").map(|a| a.named_children().filter(|x| x.kind() == "accessor_declaration").collect()).unwrap_or_default();
    let names: Vec<&str> = accessors.iter().filter_map(|a| a.field_child("name")).map(|n| n.text()).collect();
    if !(names == ["get", "set"] || names == ["get", "init"])
        || accessors.iter().any(|a| a.named_children().any(|c| matches!(c.kind(), "modifier" | "attribute_list")))
    {
        return Err(fail(path, target, format!("`{property}` is not a plain `{{ get; set; }}` auto-property")));
    }
    let found = attributes(target);
    let [only] = found.as_slice() else {
        return Err(fail(path, target, format!("`{property}` carries {} attributes; the reviewed option carries `[{attribute}]` alone", found.len())));
    };
    if attribute_name(*only) != attribute {
        return Err(fail(path, *only, format!("`{property}` carries `[{}]`, not `[{attribute}]`", only.compact_text())));
    }
    for arg in attribute_arguments(*only) {
        let name = arg.field_child("name").map(|n| n.text()).unwrap_or("");
        if !inert.iter().any(|i| i == name) {
            let shown = if name.is_empty() { "a positional argument".to_owned() } else { format!("`{name}`") };
            return Err(fail(
                path,
                arg,
                format!("`[{attribute}]` on `{property}` sets {shown}, which the profile does not list as inert (a name, alias or default of its own)"),
            ));
        }
    }
    Ok(())
}

/// No other property of the type could take the argument's name: its name
/// differs from `property` by more than case, and every argument of its
/// attributes that is not inert-by-name is a string literal that neither is
/// the argument nor begins it as a `-` prefix.
fn names_free(path: &str, decl: Node<'_>, target: Node<'_>, property: &str, argument: &str, inert: &[String]) -> Result<(), Escalation> {
    for other in properties(decl).into_iter().filter(|m| *m != target) {
        let name = other.field_child("name").map(|n| n.text()).unwrap_or("");
        if name.eq_ignore_ascii_case(property) {
            return Err(fail(path, other, format!("the property `{name}` differs from `{property}` only in case (the same option name)")));
        }
        for a in attributes(other) {
            for arg in attribute_arguments(a) {
                let label = arg.field_child("name").map(|n| n.text()).unwrap_or("");
                if inert.iter().any(|i| i == label) {
                    // What the reviewer read as inert (help text) names nothing.
                    continue;
                }
                let Some(value) = arg.named_children().rfind(|c| Some(*c) != arg.field_child("name")) else { continue };
                let texts: Vec<Node<'_>> = if string_content(value).is_some() {
                    vec![value]
                } else {
                    value.descendants().filter(|d| matches!(d.kind(), "string_literal" | "verbatim_string_literal" | "raw_string_literal")).collect()
                };
                let literal_only = value.descendants().all(|d| !matches!(d.kind(), "identifier" | "member_access_expression" | "invocation_expression"))
                    || string_content(value).is_some();
                if !literal_only {
                    return Err(fail(path, arg, format!("`{}` on `{name}` is not a literal: it could name the option `{argument}`", arg.compact_text())));
                }
                for t in texts {
                    let text = string_content(t).unwrap_or_default();
                    if text == argument || argument.starts_with(&format!("{text}-")) {
                        return Err(fail(path, arg, format!("`{}` on `{name}` could claim the option `{argument}`", arg.compact_text())));
                    }
                }
            }
        }
    }
    Ok(())
}

/// The options type is named only by its declaration, the region's
/// parameter and the base list of the region's class (the command's generic
/// argument): anything else (an override receiving it, a creation, a cast)
/// could reach the object between the framework's binding and the region.
fn mentioned_only_here(trees: &[(&str, &Syntax)], name: &str, decl: Node<'_>, param_type: Node<'_>, enclosing: Option<Node<'_>>) -> Result<(), Escalation> {
    let base_list = enclosing.and_then(|e| e.named_children().find(|c| c.kind() == "base_list"));
    for (path, syntax) in trees {
        for n in syntax.root().descendants().filter(|n| n.kind() == "identifier" && n.text() == name) {
            let allowed = decl.field_child("name") == Some(n) || param_type.contains(n) || base_list.is_some_and(|b| b.contains(n));
            if !allowed {
                return Err(fail(path, n, format!("the options type `{name}` is named at {path}:{}: code there could create or change the options", n.line())));
            }
        }
    }
    Ok(())
}
