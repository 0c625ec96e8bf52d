//! Go's candidate operations on process-wide state ([`fcd_frontends::ambient`]):
//! every `pkg.Name` whose `pkg` is an import of the file, spelled by the
//! import path (`o.Setenv` with `import o "os"` is `os.Setenv`), called or
//! taken as a value.

use fcd_frontends::ambient::{CWD, ENV, LOGGING, Op, SIGNALS, Table, UMASK, Use, call};
use fcd_frontends::ts::{Node, Syntax};

pub fn ops(syntax: &Syntax) -> Vec<Op<'_>> {
    let root = syntax.root();
    let imports = super::scope::imports(root);
    let mut out = Vec::new();
    for node in root.descendants().filter(|n| n.kind() == "selector_expression") {
        let (Some(operand), Some(field)) = (node.field_child("operand"), node.field_child("field")) else { continue };
        let Some((path, _)) = imports.get(operand.text()).filter(|_| operand.kind() == "identifier") else { continue };
        let name = format!("{path}.{}", field.text());
        let call = node.parent().filter(|p| p.kind() == "call_expression" && p.field_child("function") == Some(node));
        let what = match call {
            Some(call) => {
                let args: Vec<Node<'_>> = call.items("arguments");
                Use::Called { callee: name, args: args.len(), first: None, keywords: Vec::new() }
            }
            None => Use::Reference(name),
        };
        out.push(Op::new(node, what));
    }
    out
}

/// Go paths are `IMPORT_PATH.Name`.
pub(super) const TABLE: Table = Table {
    entries: &[
        call("os.Setenv", ENV),
        call("os.Unsetenv", ENV),
        call("os.Clearenv", ENV),
        call("syscall.Setenv", ENV),
        call("syscall.Unsetenv", ENV),
        call("syscall.Clearenv", ENV),
        call("golang.org/x/sys/unix.Setenv", ENV),
        call("golang.org/x/sys/unix.Unsetenv", ENV),
        call("golang.org/x/sys/unix.Clearenv", ENV),
        call("os.Chdir", CWD),
        call("syscall.Chdir", CWD),
        call("syscall.Fchdir", CWD),
        call("golang.org/x/sys/unix.Chdir", CWD),
        call("golang.org/x/sys/unix.Fchdir", CWD),
        call("syscall.Umask", UMASK),
        call("golang.org/x/sys/unix.Umask", UMASK),
        call("os/signal.Notify", SIGNALS),
        call("os/signal.NotifyContext", SIGNALS),
        call("os/signal.Ignore", SIGNALS),
        call("os/signal.Reset", SIGNALS),
        call("log.SetOutput", LOGGING),
        call("log.SetFlags", LOGGING),
        call("log.SetPrefix", LOGGING),
        call("log/slog.SetDefault", LOGGING),
        call("log/slog.SetLogLoggerLevel", LOGGING),
    ],
    mutators: &[],
    writes_first_argument: &[],
};
