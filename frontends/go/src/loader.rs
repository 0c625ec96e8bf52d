//! What decides which Go code is compiled and run, in two steps.
//!
//! Before any file is parsed, [`load`] completes the closure to what `go
//! build` compiles ([`package`]): every non-test `.go` file of each package
//! and its go.mod. Once they are parsed, before any region, [`check`] refuses
//! what fcd does not interpret rather than guess: build constraints
//! (`//go:build`, `// +build`, `_GOOS`/`_GOARCH` file names) decide whether a
//! file is compiled at all; go.mod `replace` and `godebug` directives change
//! which library code runs or how; `//go:linkname` rebinds a symbol; cgo and
//! `init` functions run code no region shows, before any handler. Each
//! escalates `shape_mismatch` with the file and line.

mod package;

pub use package::{load, release_dir};

use fcd_frontends::ir::Escalation;
use fcd_frontends::ir::SourceFile;
use fcd_frontends::loader::escalate;
use fcd_frontends::ts::{Node, Syntax};

const GOOS: &[&str] = &[
    "aix",
    "android",
    "darwin",
    "dragonfly",
    "freebsd",
    "hurd",
    "illumos",
    "ios",
    "js",
    "linux",
    "nacl",
    "netbsd",
    "openbsd",
    "plan9",
    "solaris",
    "wasip1",
    "windows",
    "zos",
];
const GOARCH: &[&str] = &[
    "386",
    "amd64",
    "amd64p32",
    "arm",
    "armbe",
    "arm64",
    "arm64be",
    "loong64",
    "mips",
    "mipsle",
    "mips64",
    "mips64le",
    "mips64p32",
    "mips64p32le",
    "ppc",
    "ppc64",
    "ppc64le",
    "riscv",
    "riscv64",
    "s390",
    "s390x",
    "sparc",
    "sparc64",
    "wasm",
];

/// Checks every file of the closure: go.mod files as text, Go files as text and trees.
pub(crate) fn check<'f>(files: impl Iterator<Item = &'f SourceFile>, trees: &[(&str, &Syntax)]) -> Result<(), Escalation> {
    for f in files {
        let text = String::from_utf8_lossy(&f.bytes);
        let name = f.path.rsplit('/').next().unwrap_or(&f.path);
        if name == "go.mod" {
            go_mod(&f.path, &text)?;
        } else if name.ends_with(".go") {
            file_name(&f.path, name)?;
            directives(&f.path, &text)?;
        }
    }
    for (path, syntax) in trees {
        let dir = super::scope::dir(path);
        let types: Vec<String> = trees
            .iter()
            .filter(|(p, _)| super::scope::dir(p) == dir)
            .flat_map(|(_, s)| s.root().named_children().flat_map(super::scope::top_level_names))
            .filter(|(k, _)| *k == super::scope::DeclKind::Type)
            .map(|(_, n)| n.text().to_owned())
            .collect();
        package_code(path, syntax.root(), &types)?;
    }
    Ok(())
}

/// Whether a Go file is compiled as read whatever the target: no GOOS or
/// GOARCH suffix, no build constraint, linkname or cgo (as [`check`] reads
/// them). The closed call path asks it of each file whose code a pinned
/// closure binds (`super::pinned`).
pub(crate) fn compiled_as_read(path: &str, text: &str) -> Result<(), Escalation> {
    file_name(path, path.rsplit('/').next().unwrap_or(path))?;
    directives(path, text)
}

/// `replace` and `godebug` directives, alone or in a block.
fn go_mod(path: &str, text: &str) -> Result<(), Escalation> {
    for (i, line) in text.lines().enumerate() {
        let line = line.split("//").next().unwrap_or("").trim();
        let word = line.split_whitespace().next().unwrap_or("");
        if matches!(word, "replace" | "godebug") {
            return Err(escalate(
                path,
                i as u32 + 1,
                format!("go.mod `{word}` directive (`{line}`): it can swap or change the code the reviewed calls reach; fcd does not interpret it"),
            ));
        }
    }
    Ok(())
}

/// `name_GOOS.go`, `name_GOARCH.go`, `name_GOOS_GOARCH.go` are compiled only on those targets.
fn file_name(path: &str, name: &str) -> Result<(), Escalation> {
    let stem = name.trim_end_matches(".go");
    let parts: Vec<&str> = stem.split('_').collect();
    let tail = |k: usize| {
        parts.len() > k
            && parts[parts.len() - k..].iter().enumerate().all(
                |(j, p)| {
                    if k == 2 && j == 0 { GOOS.contains(p) } else { GOOS.contains(p) || GOARCH.contains(p) }
                },
            )
    };
    if tail(1) || tail(2) {
        return Err(escalate(path, 1, format!("`{name}` carries a GOOS/GOARCH suffix: whether it is compiled depends on the build target")));
    }
    Ok(())
}

/// Build constraints, linkname and cgo, by line.
fn directives(path: &str, text: &str) -> Result<(), Escalation> {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim_start();
        let what = if t.starts_with("//go:build") || t.starts_with("// +build") {
            "a build constraint decides whether the file is compiled"
        } else if t.starts_with("//go:linkname") {
            "`//go:linkname` binds a symbol to code elsewhere"
        } else if t.starts_with("import \"C\"") || t.trim_end() == "\"C\"" {
            "cgo runs C code no region shows"
        } else {
            continue;
        };
        return Err(escalate(path, i as u32 + 1, format!("{what} (`{}`); fcd does not interpret it", t.trim_end())));
    }
    Ok(())
}

/// Code of the package that runs before any handler: `init` functions, and
/// package-level initializers that call a function literal or a function of
/// the package (which could rebind what a handler relies on).
fn package_code(path: &str, root: Node<'_>, types: &[String]) -> Result<(), Escalation> {
    for top in root.named_children() {
        match top.kind() {
            "function_declaration" if top.field_child("name").is_some_and(|n| n.text() == "init") => {
                return Err(escalate(
                    path,
                    top.line(),
                    "`func init` runs before any handler and can change what it relies on; the profile reviews no init".into(),
                ));
            }
            "var_declaration" | "const_declaration" => {
                if let Some(call) = top.descendants().find(|n| n.kind() == "call_expression" && runs_package_code(*n, types)) {
                    return Err(escalate(
                        path,
                        call.line(),
                        format!("the package-level initializer `{}` runs package code before any handler", call.compact_text()),
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

/// A call of a function literal or of a bare (package-level) name that is
/// neither a builtin nor a type of the package (a conversion runs no code).
fn runs_package_code(call: Node<'_>, types: &[String]) -> bool {
    let names_type = |n: Node<'_>| types.iter().any(|t| t == n.text()) || super::scope::is_predeclared(n.text());
    match call.field_child("function") {
        Some(f) if f.kind() == "func_literal" => true,
        Some(f) if f.kind() == "parenthesized_expression" => {
            // `(*T)(x)` converts to a pointer type; anything else in parentheses may be a function value.
            let inner = f.named_children().next();
            let pointer = inner.filter(|u| u.kind() == "unary_expression" || u.kind() == "pointer_type");
            let operand = pointer.and_then(|u| u.field_child("operand").or_else(|| u.named_children().next()));
            !operand.is_some_and(|o| o.kind().ends_with("identifier") && names_type(o))
        }
        Some(f) if f.kind() == "identifier" => !names_type(f),
        Some(f) if f.kind() == "index_expression" => true,
        _ => false,
    }
}
