//! Python's facts: `call` through the shared skeleton ([`fcd_frontends::facts`]),
//! with Python's argument forms and parameter flow (the `guard` kind is
//! [`fcd_frontends::guard`], over [`super::control`]). Kept apart from the
//! callee identities in the frontend's root module, which know nothing of facts.

use fcd_frontends::facts::{CallShape, FactSite};
use fcd_frontends::ir::{Escalation, Identity};
use fcd_frontends::spec::{ArgPattern, ArgShape};
use fcd_frontends::ts::Node;

use super::scope::Scope;
use super::syntax::{format_template, plain_string};
use super::{identity, route, surroundings};

/// A call's arguments are the nodes of its argument list: a generator,
/// keyword or `**` argument is outside every shape, a `*` argument matches
/// only a splat pattern (`*param:files`), and a parameter the profile
/// follows must not be rebound. A `matching` fact leaves such
/// calls out rather than escalating on them.
impl<'a> CallShape<'a> for Cx<'_, 'a> {
    type Arg = Node<'a>;

    fn callee(&self, node: Node<'a>) -> Option<Identity> {
        (node.kind() == "call").then(|| identity(self.names, node))
    }

    fn arguments(&self, call: Node<'a>) -> Result<Vec<Node<'a>>, Escalation> {
        let Some(list) = call.field_child("arguments") else {
            return Err(self.site.mismatch(call, "the call has no argument list".into()));
        };
        if list.kind() != "argument_list" {
            return Err(self.site.mismatch(list, "a generator argument is outside the profile's shape".into()));
        }
        let args: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
        for a in &args {
            let what = match a.kind() {
                "keyword_argument" => "a keyword argument",
                "dictionary_splat" => "a `**` argument",
                _ => continue,
            };
            return Err(self.site.mismatch(*a, format!("{what} (`{}`) is outside the profile's shape", a.text())));
        }
        Ok(args)
    }

    /// `name=value` arguments by name (a fact that lists `keywords`); a `**`
    /// argument stays outside every shape.
    fn arguments_and_keywords(&self, call: Node<'a>) -> Result<fcd_frontends::facts::SplitArguments<Node<'a>>, Escalation> {
        let Some(list) = call.field_child("arguments").filter(|l| l.kind() == "argument_list") else {
            return self.arguments(call).map(|a| (a, Vec::new()));
        };
        let (mut positional, mut keywords) = (Vec::new(), Vec::new());
        for a in list.named_children().filter(|a| a.kind() != "comment") {
            match (a.kind(), a.field_child("name"), a.field_child("value")) {
                ("keyword_argument", Some(name), Some(value)) => keywords.push((name.text().to_owned(), value)),
                ("dictionary_splat", _, _) => return Err(self.site.mismatch(a, format!("a `**` argument (`{}`) is outside the profile's shape", a.text()))),
                _ => positional.push(a),
            }
        }
        Ok((positional, keywords))
    }

    fn check_arguments(&self, _call: Node<'a>, args: &[Node<'a>], patterns: &[ArgPattern]) -> Result<(), Escalation> {
        for a in args {
            self.check_param_flow(*a, patterns)?;
        }
        Ok(())
    }

    fn arg_matches(&self, arg: &Node<'a>, pattern: &ArgPattern) -> bool {
        self.shape_matches(*arg, &pattern.shape)
    }

    fn arg_text(&self, arg: &Node<'a>) -> String {
        arg.text().to_owned()
    }

    fn strict_matching(&self) -> bool {
        true
    }
}

impl<'a> Cx<'_, 'a> {
    /// Whether one argument node has the shape: a `*` argument only a splat's,
    /// whose inner shape its expression must have.
    fn shape_matches(&self, arg: Node<'a>, shape: &ArgShape) -> bool {
        if arg.kind() == "list_splat" {
            let ArgShape::Splat(inner) = shape else { return false };
            let mut exprs = arg.named_children().filter(|c| c.kind() != "comment");
            return match (exprs.next(), exprs.next()) {
                (Some(e), None) => self.shape_matches(e, inner),
                _ => false,
            };
        }
        match shape {
            ArgShape::Splat(_) => false,
            ArgShape::Param(name) => arg.kind() == "identifier" && arg.text() == name && self.names.is_param(name) && self.names.rebinding(name).is_none(),
            ArgShape::Var(name) => arg.kind() == "identifier" && arg.text() == name && !self.names.is_param(name) && self.names.bindings(name).len() == 1,
            ArgShape::Arg(name) => self.tool_argument(arg, name),
            ArgShape::Any => true,
            ArgShape::State(_) => false,
            // `ref:True` names Python's constant as it names any other name.
            ArgShape::Ref(path) => {
                matches!(arg.kind(), "identifier" | "attribute" | "true" | "false" | "none") && arg.text().split_whitespace().collect::<String>() == *path
            }
            ArgShape::Str(text) => plain_string(arg).as_deref() == Some(text.as_str()),
            ArgShape::Format(template) => format_template(arg).as_deref() == Some(template.as_str()),
            // `str(X)`, `str` the builtin, with one positional argument of the inner shape.
            ArgShape::Text(inner) => {
                let (Some(f), Some(list)) = (arg.field_child("function"), arg.field_child("arguments")) else { return false };
                let args: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
                arg.kind() == "call"
                    && f.kind() == "identifier"
                    && self.names.resolve(f).as_deref() == Some("str")
                    && matches!(args.as_slice(), [one] if !matches!(one.kind(), "keyword_argument" | "list_splat" | "dictionary_splat") && self.shape_matches(*one, inner))
            }
            // A call's result is followed by the JavaScript frontend only so far.
            ArgShape::Result(_) => false,
        }
    }

    /// A parameter the profile expects to arrive unchanged must not be rebound
    /// anywhere in the region.
    pub(super) fn check_param_flow(&self, arg: Node<'a>, patterns: &[ArgPattern]) -> Result<(), Escalation> {
        // A splatted parameter is followed like the parameter itself.
        let (arg, splat) = match arg.kind() {
            "list_splat" => match arg.named_children().find(|c| c.kind() != "comment") {
                Some(inner) => (inner, true),
                None => return Ok(()),
            },
            _ => (arg, false),
        };
        if arg.kind() != "identifier" {
            return Ok(());
        }
        let expected = patterns.iter().any(|p| match (&p.shape, splat) {
            (ArgShape::Param(n), false) => n == arg.text(),
            (ArgShape::Splat(inner), true) => matches!(inner.as_ref(), ArgShape::Param(n) if n == arg.text()),
            _ => false,
        });
        if !expected {
            return Ok(());
        }
        match self.names.rebinding(arg.text()) {
            Some(at) => Err(self
                .site
                .mismatch(at, format!("parameter `{}` is rebound at line {}, so the value reaching the sink is not the caller's", arg.text(), at.line()))),
            None => Ok(()),
        }
    }

    /// The tool's argument `name`: `P["name"]` for a parameter `P` of the
    /// region's function that nothing rebinds or writes into, the region
    /// function's own unchanged parameter `name`, a validated model's field
    /// (`V.name`, `V` bound once to `M(**P)`, see [`Cx::model_field`]) or
    /// `str()` of one, or a local bound once to any of these.
    pub(super) fn tool_argument(&self, arg: Node<'a>, name: &str) -> bool {
        self.tool_argument_within(arg, name, 0)
    }

    fn tool_argument_within(&self, arg: Node<'a>, name: &str, depth: usize) -> bool {
        if depth > 4 {
            return false;
        }
        match arg.kind() {
            "identifier" if self.names.is_param(arg.text()) => arg.text() == name && self.names.rebinding(name).is_none(),
            // A local bound once, by `local = VALUE`, stands for its value.
            "identifier" => match self.names.bindings(arg.text()) {
                [super::bindings::Binding { kind: super::bindings::BindingKind::Value(v), .. }] => self.tool_argument_within(*v, name, depth + 1),
                _ => false,
            },
            "parenthesized_expression" => arg.named_children().find(|c| c.kind() != "comment").is_some_and(|e| self.tool_argument_within(e, name, depth + 1)),
            "attribute" => self.model_field(arg, name),
            // `str(V.name)` or `str(name)`: the validated value as text (pydantic's `AnyUrl`
            // gives its normalized URL, which the profile's rules must read
            // with the grammar of the same parser).
            "call" => {
                let (Some(f), Some(list)) = (arg.field_child("function"), arg.field_child("arguments")) else { return false };
                let args: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
                // `str(P)` of the tool's own parameter (validated by the
                // framework from its annotation), or of a model's field.
                let converted = |one: Node<'a>| match one.kind() {
                    "attribute" => self.model_field(one, name),
                    "identifier" => self.names.is_param(one.text()) && self.tool_argument_within(one, name, depth + 1),
                    _ => false,
                };
                f.kind() == "identifier" && self.names.resolve(f).as_deref() == Some("str") && matches!(args.as_slice(), [one] if converted(*one))
            }
            "subscript" => {
                let (Some(map), Some(key)) = (arg.field_child("value"), arg.field_child("subscript")) else { return false };
                let func = route::function_of(self.site.region.node);
                map.kind() == "identifier"
                    && self.names.is_param(map.text())
                    && self.names.rebinding(map.text()).is_none()
                    && plain_string(key).as_deref() == Some(name)
                    && !surroundings::writes_into(func, map.text())
            }
            _ => false,
        }
    }

    /// `V.name` where `V` is a local bound once to `M(**P)`: `P` a parameter
    /// of the region's function used nowhere else and never rebound (the
    /// call's arguments, unchanged), `M` a module-level class of the region's
    /// file, undecorated, whose one base resolves to `pydantic.BaseModel` and
    /// whose body declares the field `name` by annotation. What the model
    /// makes of the value (its validators, its types' conversions) is its
    /// body's: the profile pins that class as a region with a `body` fact.
    fn model_field(&self, attr: Node<'a>, name: &str) -> bool {
        let (Some(object), Some(field)) = (attr.field_child("object"), attr.field_child("attribute")) else { return false };
        if object.kind() != "identifier" || field.text() != name || self.names.is_param(object.text()) {
            return false;
        }
        let [super::bindings::Binding { kind: super::bindings::BindingKind::Value(call), .. }] = self.names.bindings(object.text()) else { return false };
        let (Some(class), Some(list)) = (call.field_child("function"), call.field_child("arguments")) else { return false };
        let args: Vec<Node<'a>> = list.named_children().filter(|a| a.kind() != "comment").collect();
        let [splat] = args.as_slice() else { return false };
        let Some(params) = (splat.kind() == "dictionary_splat").then(|| splat.named_children().find(|c| c.kind() != "comment")).flatten() else { return false };
        let func = route::function_of(self.site.region.node);
        let uses = func.descendants().filter(|n| n.kind() == "identifier" && n.text() == params.text()).count();
        // The parameter itself, and its one use in `**P`.
        if params.kind() != "identifier" || !self.names.is_param(params.text()) || self.names.rebinding(params.text()).is_some() || uses != 2 {
            return false;
        }
        class.kind() == "identifier" && self.names.is_module_definition(class.text()) && super::model_declares(attr, class.text(), name)
    }
}

/// A Python fact extraction: names are the region's scope.
pub(super) struct Cx<'r, 'a> {
    pub site: FactSite<'r, 'a>,
    pub names: &'r Scope<'a>,
}
