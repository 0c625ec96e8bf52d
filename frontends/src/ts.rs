//! The only module that calls the tree-sitter API.
//!
//! A parsed file is copied once into [`Syntax`], a small arena of nodes with
//! `'static` kind and field names, so the language modules walk plain data: no
//! cursors, no lifetimes tied to a tree-sitter `Tree`, and the next tree-sitter
//! upgrade touches this file alone. The copy also enforces the limits every
//! hostile input needs before any analysis recurses over it: a maximum file size
//! and a maximum nesting depth.

use std::sync::LazyLock;

use tree_sitter::{Language, Parser};

use crate::language::Lang;

/// Files larger than this are refused before parsing.
pub const MAX_FILE_BYTES: usize = 8 * 1024 * 1024;
/// Deeper syntax trees are refused, so that recursive analyses cannot overflow the stack.
pub const MAX_DEPTH: usize = 400;

/// Kind and field names of one grammar, with `'static` lifetime.
struct Names {
    kinds: Vec<&'static str>,
    fields: Vec<&'static str>,
}

impl Names {
    fn of(language: &Language) -> Names {
        // Leaked once per grammar (a few hundred short strings): node kinds are
        // compared on every step of every analysis, and `'static` keeps them free.
        let leak = |s: &str| -> &'static str { Box::leak(s.to_owned().into_boxed_str()) };
        let kinds = (0..language.node_kind_count()).map(|id| leak(language.node_kind_for_id(id as u16).unwrap_or(""))).collect();
        let fields = (0..=language.field_count()).map(|id| leak(language.field_name_for_id(id as u16).unwrap_or(""))).collect();
        Names { kinds, fields }
    }
}

/// The tree-sitter grammar of a language. Grammars are registered here and nowhere else.
pub fn grammar(lang: Lang) -> Language {
    match lang {
        Lang::Python => tree_sitter_python::LANGUAGE.into(),
        Lang::Go => tree_sitter_go::LANGUAGE.into(),
        Lang::CSharp => tree_sitter_c_sharp::LANGUAGE.into(),
        Lang::JavaScript => tree_sitter_javascript::LANGUAGE.into(),
        Lang::TypeScript => tree_sitter_typescript::LANGUAGE_TYPESCRIPT.into(),
    }
}

fn names(lang: Lang) -> &'static Names {
    static PYTHON: LazyLock<Names> = LazyLock::new(|| Names::of(&grammar(Lang::Python)));
    static GO: LazyLock<Names> = LazyLock::new(|| Names::of(&grammar(Lang::Go)));
    static CSHARP: LazyLock<Names> = LazyLock::new(|| Names::of(&grammar(Lang::CSharp)));
    static JAVASCRIPT: LazyLock<Names> = LazyLock::new(|| Names::of(&grammar(Lang::JavaScript)));
    static TYPESCRIPT: LazyLock<Names> = LazyLock::new(|| Names::of(&grammar(Lang::TypeScript)));
    match lang {
        Lang::Python => &PYTHON,
        Lang::Go => &GO,
        Lang::CSharp => &CSHARP,
        Lang::JavaScript => &JAVASCRIPT,
        Lang::TypeScript => &TYPESCRIPT,
    }
}

/// Whether `kind` is a node kind of the grammar (catches misspelled kinds in code and tests).
pub fn is_node_kind(lang: Lang, kind: &str) -> bool {
    grammar(lang).id_for_node_kind(kind, true) != 0
}

/// Why a file could not be turned into a [`Syntax`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseFailure {
    /// 1-based line of the problem.
    pub line: u32,
    pub reason: String,
}

/// One node of the arena.
#[derive(Debug, Clone)]
struct NodeData {
    kind: &'static str,
    field: &'static str,
    named: bool,
    start: usize,
    end: usize,
    start_line: u32,
    start_col: u32,
    end_line: u32,
    parent: u32,
    children: std::ops::Range<u32>,
}

/// A parsed source file: its text and an arena copy of its syntax tree.
#[derive(Debug)]
pub struct Syntax {
    text: String,
    nodes: Vec<NodeData>,
    /// Child ids of every node, each node's children stored contiguously.
    child_ids: Vec<u32>,
}

/// A node of a [`Syntax`]; cheap to copy.
#[derive(Clone, Copy)]
pub struct Node<'a> {
    syntax: &'a Syntax,
    id: u32,
}

impl std::fmt::Debug for Node<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}:{}", self.kind(), self.line(), self.data().start_col + 1)
    }
}

impl PartialEq for Node<'_> {
    fn eq(&self, other: &Self) -> bool {
        std::ptr::eq(self.syntax, other.syntax) && self.id == other.id
    }
}
impl Eq for Node<'_> {}

impl Syntax {
    /// Parses `text` as `lang`. A tree with a syntax error, a file that is too
    /// large or too deeply nested is refused with the line of the problem.
    pub fn parse(lang: Lang, text: String) -> Result<Syntax, ParseFailure> {
        if lang != Lang::TypeScript {
            return Syntax::parse_with(lang, text, false);
        }
        // TypeScript keeps the text for a second reading with its unreadable annotations erased.
        match Syntax::parse_with(lang, text.clone(), false) {
            Err(failure) => Syntax::parse_with(lang, erase_unparsed_types(&text).ok_or(failure.clone())?, false).map_err(|_| failure),
            parsed => parsed,
        }
    }

    /// Parses `text` as `lang` keeping what the parser recovered: a syntax
    /// error is a node of kind `ERROR`, a token the parser supplied one of
    /// kind `MISSING`. Only for reading around what does not parse, never
    /// for a region: what such a tree says holds only away from its errors.
    pub fn parse_recovering(lang: Lang, text: String) -> Result<Syntax, ParseFailure> {
        Syntax::parse_with(lang, text, true)
    }

    fn parse_with(lang: Lang, text: String, recover: bool) -> Result<Syntax, ParseFailure> {
        if text.len() > MAX_FILE_BYTES {
            return Err(ParseFailure { line: 1, reason: format!("file is {} bytes, more than the {MAX_FILE_BYTES} accepted", text.len()) });
        }
        let mut parser = Parser::new();
        parser.set_language(&grammar(lang)).map_err(|e| ParseFailure { line: 1, reason: format!("grammar does not load: {e}") })?;
        let tree = parser.parse(text.as_bytes(), None).ok_or_else(|| ParseFailure { line: 1, reason: "the parser gave up".into() })?;
        let names = names(lang);
        let mut syntax = Syntax { text, nodes: Vec::new(), child_ids: Vec::new() };

        // Iterative pre-order copy: a recursive one would overflow on hostile nesting.
        let mut cursor = tree.walk();
        let mut open: Vec<(u32, Vec<u32>)> = Vec::new();
        loop {
            let node = cursor.node();
            if (node.is_error() || node.is_missing()) && !recover {
                let line = node.start_position().row as u32 + 1;
                let what = if node.is_missing() { format!("missing `{}`", node.kind()) } else { "syntax error".to_owned() };
                return Err(ParseFailure { line, reason: what });
            }
            if open.len() >= MAX_DEPTH {
                return Err(ParseFailure { line: node.start_position().row as u32 + 1, reason: format!("nesting deeper than {MAX_DEPTH} levels") });
            }
            let id = syntax.nodes.len() as u32;
            let parent = open.last().map_or(u32::MAX, |(p, _)| *p);
            if let Some((_, siblings)) = open.last_mut() {
                siblings.push(id);
            }
            let kind = if node.is_error() {
                "ERROR"
            } else if node.is_missing() {
                "MISSING"
            } else {
                names.kinds.get(node.kind_id() as usize).copied().unwrap_or("")
            };
            syntax.nodes.push(NodeData {
                kind,
                field: cursor.field_id().and_then(|f| names.fields.get(f.get() as usize).copied()).unwrap_or(""),
                named: node.is_named(),
                start: node.start_byte(),
                end: node.end_byte(),
                start_line: node.start_position().row as u32 + 1,
                start_col: node.start_position().column as u32,
                end_line: node.end_position().row as u32 + 1,
                parent,
                children: 0..0,
            });
            if cursor.goto_first_child() {
                open.push((id, Vec::new()));
                continue;
            }
            loop {
                if cursor.goto_next_sibling() {
                    break;
                }
                if !cursor.goto_parent() {
                    return Ok(syntax);
                }
                let (done, kids) = open.pop().expect("every goto_parent matches a goto_first_child");
                let from = syntax.child_ids.len() as u32;
                syntax.child_ids.extend_from_slice(&kids);
                syntax.nodes[done as usize].children = from..syntax.child_ids.len() as u32;
            }
        }
    }

    /// The whole source text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The root node (the module, program or compilation unit).
    pub fn root(&self) -> Node<'_> {
        Node { syntax: self, id: 0 }
    }
}

/// Where a TypeScript annotation may stand whose type the grammar cannot
/// read: a declaration's, a parameter's, a property's or a function's
/// return type, never an arrow function's (`c ? (a) : b` reads like one).
const ERASABLE_ANNOTATION_OF: &[&str] = &[
    "property_signature",
    "public_field_definition",
    "required_parameter",
    "optional_parameter",
    "variable_declarator",
    "function_declaration",
    "function_signature",
    "method_definition",
    "method_signature",
];

/// `text` with every type annotation the TypeScript grammar could not read
/// replaced by `: any` (the rest of its bytes spaces, its newlines kept, so
/// every line and column stays), or `None` when an error lies anywhere else.
/// The TypeScript compiler erases every type, so such an annotation never
/// runs: tree-sitter-typescript 0.23 does not read a type query of an
/// import (`tools?: import("./config.js").Tool[]`), which a release may
/// hold. Only an annotation of a declaration ([`ERASABLE_ANNOTATION_OF`])
/// outside any arrow function or conditional is erased.
fn erase_unparsed_types(text: &str) -> Option<String> {
    let recovered = Syntax::parse_with(Lang::TypeScript, text.to_owned(), true).ok()?;
    let mut erase: Vec<std::ops::Range<usize>> = Vec::new();
    for broken in recovered.root().descendants().filter(|n| matches!(n.kind(), "ERROR" | "MISSING")) {
        let annotation = broken.ancestors().find(|a| a.kind() == "type_annotation")?;
        let owner = annotation.parent()?;
        let nested = annotation.ancestors().any(|a| matches!(a.kind(), "arrow_function" | "ternary_expression" | "ERROR"));
        if !ERASABLE_ANNOTATION_OF.contains(&owner.kind()) || nested || !annotation.text().starts_with(':') {
            return None;
        }
        erase.push(annotation.byte_range());
    }
    // Nothing to erase (the file failed for its size or depth), or an annotation
    // shorter than the five bytes of `: any` on one line: left to fail.
    if erase.is_empty() || erase.iter().any(|r| r.len() < 5 || text.as_bytes()[r.start..r.start + 5].contains(&b'\n')) {
        return None;
    }
    let mut bytes = text.as_bytes().to_vec();
    for range in &erase {
        for (k, b) in bytes[range.clone()].iter_mut().enumerate() {
            *b = match (k, *b) {
                (_, b'\n') => b'\n',
                (0, _) => b':',
                (2, _) => b'a',
                (3, _) => b'n',
                (4, _) => b'y',
                _ => b' ',
            };
        }
    }
    String::from_utf8(bytes).ok()
}

impl<'a> Node<'a> {
    fn data(&self) -> &'a NodeData {
        &self.syntax.nodes[self.id as usize]
    }

    /// The grammar's node kind, e.g. `function_definition`.
    pub fn kind(&self) -> &'static str {
        self.data().kind
    }

    /// The field name under which this node hangs from its parent, or "".
    pub fn field(&self) -> &'static str {
        self.data().field
    }

    pub fn is_named(&self) -> bool {
        self.data().named
    }

    /// The node's source text.
    pub fn text(&self) -> &'a str {
        let d = self.data();
        &self.syntax.text[d.start..d.end]
    }

    /// 1-based first line.
    pub fn line(&self) -> u32 {
        self.data().start_line
    }

    /// 1-based last line.
    pub fn end_line(&self) -> u32 {
        self.data().end_line
    }

    /// 1-based column of the first character.
    pub fn column(&self) -> u32 {
        self.data().start_col + 1
    }

    /// Byte offsets of the node in the source.
    pub fn byte_range(&self) -> std::ops::Range<usize> {
        let d = self.data();
        d.start..d.end
    }

    pub fn parent(&self) -> Option<Node<'a>> {
        let p = self.data().parent;
        (p != u32::MAX).then_some(Node { syntax: self.syntax, id: p })
    }

    /// All children, named and anonymous, in source order.
    pub fn children(&self) -> impl DoubleEndedIterator<Item = Node<'a>> + use<'a> {
        let syntax = self.syntax;
        let range = self.data().children.clone();
        syntax.child_ids[range.start as usize..range.end as usize].iter().map(move |&id| Node { syntax, id })
    }

    /// Named children in source order.
    pub fn named_children(&self) -> impl DoubleEndedIterator<Item = Node<'a>> + use<'a> {
        self.children().filter(|c| c.is_named())
    }

    /// The first child hanging under `field`.
    pub fn field_child(&self, field: &str) -> Option<Node<'a>> {
        self.children().find(|c| c.field() == field)
    }

    /// Every child hanging under `field`.
    pub fn field_children(&self, field: &'a str) -> impl Iterator<Item = Node<'a>> + use<'a> {
        self.children().filter(move |c| c.field() == field)
    }

    /// The node's text without white space (for identities and messages).
    /// The leaf tokens of this subtree, comments left out, joined by one
    /// space: the text of a definition independent of layout and comments.
    pub fn token_text(&self) -> String {
        let leaves: Vec<&str> =
            self.descendants().filter(|n| n.children().next().is_none() && n.kind() != "comment" && !n.text().is_empty()).map(|n| n.text()).collect();
        leaves.join(" ")
    }

    pub fn compact_text(&self) -> String {
        self.text().split_whitespace().collect()
    }

    /// The named children of the child under `field`, comments left out
    /// (a call's arguments, a block's statements).
    pub fn items(&self, field: &str) -> Vec<Node<'a>> {
        self.field_child(field).map(|l| l.named_children().filter(|a| a.kind() != "comment").collect()).unwrap_or_default()
    }

    /// This node and every node below it, in pre-order.
    pub fn descendants(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
        let syntax = self.syntax;
        let mut stack = vec![self.id];
        std::iter::from_fn(move || {
            let id = stack.pop()?;
            let r = syntax.nodes[id as usize].children.clone();
            stack.extend(syntax.child_ids[r.start as usize..r.end as usize].iter().rev());
            Some(Node { syntax, id })
        })
    }

    /// Ancestors from the parent up to the root.
    pub fn ancestors(&self) -> impl Iterator<Item = Node<'a>> + use<'a> {
        std::iter::successors(self.parent(), |n| n.parent())
    }

    /// Whether `other` is this node or lies below it.
    pub fn contains(&self, other: Node<'_>) -> bool {
        let (a, b) = (self.data(), other.data());
        std::ptr::eq(self.syntax, other.syntax) && a.start <= b.start && b.end <= a.end
    }

    /// Whether this node ends before `other` starts.
    pub fn precedes(&self, other: Node<'_>) -> bool {
        self.data().end <= other.data().start
    }

    /// An S-expression view for `fcd debug tree`: named nodes with field names.
    pub fn to_sexp(&self) -> String {
        let mut out = String::new();
        self.write_sexp(&mut out, 0);
        out
    }

    fn write_sexp(&self, out: &mut String, depth: usize) {
        use std::fmt::Write;
        let indent = "  ".repeat(depth);
        let field = if self.field().is_empty() { String::new() } else { format!("{}: ", self.field()) };
        let _ = write!(out, "{indent}{field}({} [{}:{}]", self.kind(), self.line(), self.column());
        let kids: Vec<_> = self.named_children().collect();
        if kids.is_empty() {
            let _ = write!(out, " {:?})", self.text());
        } else {
            for k in kids {
                out.push('\n');
                k.write_sexp(out, depth + 1);
            }
            out.push(')');
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_grammar_loads() {
        for lang in Lang::ALL {
            let mut p = Parser::new();
            p.set_language(&grammar(lang)).expect("grammar ABI is supported");
        }
    }

    #[test]
    fn a_typescript_annotation_the_grammar_cannot_read_is_erased_where_types_only_annotate() {
        // tree-sitter-typescript 0.23 does not read a type query of an import (dbhub's src/config/env.ts).
        let src = "export async function load(): Promise<{ tools?: import(\"./config.js\").Tool[]; name: string } | null> {\n  return null;\n}\nexport const after = 1;\n";
        let parsed = Syntax::parse(Lang::TypeScript, src.into()).expect("the annotation is erased");
        assert_eq!(parsed.text().len(), src.len(), "every byte keeps its place");
        assert!(parsed.text().contains("tools?: any") && !parsed.text().contains("import("), "{}", parsed.text());
        let after = parsed.root().descendants().find(|n| n.kind() == "lexical_declaration").expect("the rest is read");
        assert_eq!(after.line(), 4);
        // An error in code, or in an arrow function's annotation (which a conditional can look like), still fails.
        for broken in ["export function f(): void {\n  return 1 +;\n}\n", "const g = (a): import(\"./x\").T[] => a;\n"] {
            assert!(Syntax::parse(Lang::TypeScript, broken.into()).is_err(), "{broken}");
        }
        // An annotation whose fifth byte falls inside a character of several bytes: read by bytes, never split.
        let wide = "export function h(): { t?: \u{e9}\u{e9} import(\"./c.js\").T[] } {\n  return {};\n}\n";
        let _ = Syntax::parse(Lang::TypeScript, wide.into());
        // JavaScript is never rewritten.
        assert!(Syntax::parse(Lang::JavaScript, "function f( {\n".into()).is_err());
    }

    #[test]
    fn syntax_error_names_its_line() {
        let err = Syntax::parse(Lang::Python, "x = 1\ndef f(:\n".into()).unwrap_err();
        assert_eq!(err.line, 2);
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let src = format!("x = {}1{}\n", "(".repeat(5000), ")".repeat(5000));
        let err = Syntax::parse(Lang::Python, src).unwrap_err();
        assert!(err.reason.contains("nesting"), "{err:?}");
    }

    #[test]
    fn arena_keeps_fields_and_text() {
        let s = Syntax::parse(Lang::Python, "def f(a):\n    return a\n".into()).unwrap();
        let def = s.root().named_children().next().unwrap();
        assert_eq!(def.kind(), "function_definition");
        assert_eq!(def.field_child("name").unwrap().text(), "f");
        assert_eq!(def.end_line(), 2);
        assert!(is_node_kind(Lang::Python, "function_definition"));
        assert!(!is_node_kind(Lang::Python, "function_definitio"));
    }
}
