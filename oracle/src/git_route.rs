//! Where a tool name of the reference Git server reaches its function.
//!
//! The git server has routed its tools two ways: a `match name:` in the
//! function decorated `@….call_tool()`, whose `case` for the tool calls its
//! function with the call's argument (`git_diff(repo, arguments["target"], …)`);
//! and, later, one typed function per tool registered by
//! `@SERVER.tool(name=…)` on a server object built once, run through the
//! release's own wrapper decorators, that hands its own parameter of that
//! name on. The oracle reads either from tokens and refuses anything it
//! cannot follow: a tool name it cannot read, a second registration, a
//! registration by method call, a decorator or middleware that is not a plain
//! pass-through, an argument that is not handed on as it came.

use std::collections::BTreeMap;

use crate::lex::{Kind, Token, split_top, top_level_end};

/// A tool as its routes must reach it.
pub struct Tool {
    /// The tool name, which is also the name of the function serving it.
    pub name: &'static str,
    /// The call argument the function is handed second, unchanged.
    pub argument: &'static str,
    /// How many arguments the function is called with at most.
    pub arity: usize,
}

/// The server module's one file (`mcp_server_git/server.py`), its name, its
/// tokens and where its one `def TOOL(` starts, with the route to it checked.
pub fn server_function(root: &std::path::Path, tool: &Tool) -> Result<(String, Vec<Token>, usize, String), String> {
    let found = crate::files::find(root, &|p| p.ends_with("mcp_server_git/server.py"));
    let [(name, path)] = found.as_slice() else {
        return Err(format!("{} files named mcp_server_git/server.py", found.len()));
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{name}: {e}"))?;
    let tokens = crate::lex::scan(&text, crate::lex::Dialect::Python).map_err(|e| format!("{name}: {e}"))?;
    let defs: Vec<usize> =
        (0..tokens.len().saturating_sub(2)).filter(|&i| tokens[i].is("def") && tokens[i + 1].is(tool.name) && tokens[i + 2].is("(")).collect();
    let [def] = defs.as_slice() else {
        return Err(format!("{name}: {} definitions of {}", defs.len(), tool.name));
    };
    // The tool name must reach this function with the call's own argument.
    let route = check(name, &tokens, tool)?;
    Ok((name.clone(), tokens, *def, route))
}

/// Finds the route; `Ok` says where it is, `Err` why the oracle cannot follow it.
pub fn check(name: &str, tokens: &[Token], tool: &Tool) -> Result<String, String> {
    let file = File::new(name, tokens, tool);
    let dispatched = file.dispatcher()?;
    let registered = file.registration()?;
    match (dispatched, registered) {
        (Some(d), None) => Ok(d),
        (None, Some(r)) => Ok(r),
        (Some(_), Some(_)) => Err(format!("{name}: {} is both dispatched by a `match` and registered by decorator", tool.name)),
        (None, None) => Err(format!("{name}: no route of the tool name {} the oracle can read", tool.name)),
    }
}

type Line<'t> = &'t [Token];

struct File<'t> {
    name: &'t str,
    tool: &'t Tool,
    lines: Vec<Line<'t>>,
    /// `Class.MEMBER` -> its string value, for classes whose members are strings.
    members: BTreeMap<String, String>,
}

impl<'t> File<'t> {
    fn new(name: &'t str, tokens: &'t [Token], tool: &'t Tool) -> Self {
        let lines: Vec<Line<'t>> = tokens.split(|t| t.kind == Kind::Newline).filter(|l| !l.is_empty()).collect();
        let mut members = BTreeMap::new();
        for (i, line) in lines.iter().enumerate() {
            if let [member, eq, value] = line
                && member.kind == Kind::Ident
                && eq.is("=")
                && let Some(value) = value.str_value()
                && let Some(class) = enclosing(&lines, i, "class")
            {
                members.insert(format!("{}.{}", lines[class][1].text, member.text), value.to_owned());
            }
        }
        File { name, tool, lines, members }
    }

    fn at(&self, line: Line<'_>) -> String {
        format!("{}:{}", self.name, line[0].line)
    }

    /// Whether an expression names the tool: `Some(true)` for it, `Some(false)` for
    /// another literal name, `None` when the oracle cannot tell (computed, unknown).
    fn names_tool(&self, expr: &[Token]) -> Option<bool> {
        let tool = self.tool.name;
        match expr {
            [one] => one.str_value().map(|v| v == tool),
            [class, dot, member] if dot.is(".") => self.members.get(&format!("{}.{}", class.text, member.text)).map(|v| v == tool),
            [class, d1, member, d2, value] if d1.is(".") && d2.is(".") && value.is("value") => {
                self.members.get(&format!("{}.{}", class.text, member.text)).map(|v| v == tool)
            }
            _ => None,
        }
    }

    /// The body of the block opened by line `i`: the lines indented deeper that follow it.
    fn block(&self, i: usize) -> &[Line<'t>] {
        let indent = self.lines[i][0].indent;
        let end = (i + 1..self.lines.len()).find(|&j| self.lines[j][0].indent <= indent).unwrap_or(self.lines.len());
        &self.lines[i + 1..end]
    }

    /// The `case` that routes the tool in a `match` over the tool-name
    /// parameter of a `@….call_tool()` function, when there is one.
    fn dispatcher(&self) -> Result<Option<String>, String> {
        let (tool, argument) = (self.tool.name, self.tool.argument);
        let mut found = None;
        for (i, line) in self.lines.iter().enumerate() {
            if !(line[0].is("match") && line.last().is_some_and(|t| t.is(":"))) {
                continue;
            }
            let cases: Vec<usize> = (i + 1..i + 1 + self.block(i).len())
                .filter(|&j| self.lines[j][0].indent == self.lines.get(i + 1).map_or(0, |l| l[0].indent) && self.lines[j][0].is("case"))
                .collect();
            let pattern = |j: usize| {
                let l = self.lines[j];
                &l[1..l.len().saturating_sub(1)]
            };
            let Some(hit) = cases.iter().position(|&j| self.names_tool(pattern(j)) == Some(true)) else { continue };
            if found.is_some() || cases[hit + 1..].iter().any(|&j| self.names_tool(pattern(j)) == Some(true)) {
                return Err(format!("{}: more than one `case` routes {tool}", self.at(line)));
            }
            // Every earlier case must be another literal tool name, so that none catches the call first.
            if let Some(&j) = cases[..hit].iter().find(|&&j| self.names_tool(pattern(j)) != Some(false)) {
                return Err(format!("{}: an earlier case may catch {tool} first", self.at(self.lines[j])));
            }
            let def = enclosing(&self.lines, i, "def").ok_or_else(|| format!("{}: the `match` is in no function", self.at(line)))?;
            let params = params(self.lines[def]);
            let decorated = def > 0 && self.lines[def - 1][0].is("@") && self.lines[def - 1].iter().any(|t| t.is("call_tool"));
            let subject = &line[1..line.len() - 1];
            let (Some(tool_name), Some(arguments)) = (params.first(), params.get(1)) else {
                return Err(format!("{}: the dispatcher does not take (name, arguments)", self.at(self.lines[def])));
            };
            if !decorated || subject.len() != 1 || !subject[0].is(tool_name) {
                return Err(format!("{}: the `match` is not over the tool name of a @….call_tool() function", self.at(line)));
            }
            let dispatchers = self.lines.iter().filter(|l| l[0].is("@") && l.iter().any(|t| t.is("call_tool"))).count();
            if dispatchers != 1 {
                return Err(format!("{}: {dispatchers} functions are registered by @….call_tool()", self.at(line)));
            }
            // The argument map is only read (`arguments["k"]`, `arguments.get(…)`) before and in the case.
            if let Some(l) = self.block(def).iter().find(|l| writes_map(l, arguments)) {
                return Err(format!("{}: the dispatcher may change {arguments} before the route reads it", self.at(l)));
            }
            let case = cases[hit];
            let calls: Vec<(Line<'_>, Vec<&[Token]>)> = self.block(case).iter().filter_map(|l| call_args(l, tool).map(|a| (*l, a))).collect();
            let [(call, args)] = calls.as_slice() else {
                return Err(format!("{}: the case calls {tool} {} times", self.at(self.lines[case]), calls.len()));
            };
            let handed_argument =
                matches!(args.get(1), Some([a, open, key, close]) if a.is(arguments) && open.is("[") && key.str_value() == Some(argument) && close.is("]"));
            if !handed_argument || args.len() > self.tool.arity {
                return Err(format!("{}: {tool} is not handed {arguments}[\"{argument}\"] as its second argument", self.at(call)));
            }
            found = Some(format!("{}: `case` routes {tool} with the call's {argument}", self.at(self.lines[case])));
        }
        Ok(found)
    }

    /// The function registered as the tool by `@SERVER.tool(…)`, when there is one.
    fn registration(&self) -> Result<Option<String>, String> {
        let wanted = self.tool.name;
        if let Some(line) = self.lines.iter().find(|l| l.windows(3).any(|w| w[0].is(".") && w[1].is("add_tool") && w[2].is("("))) {
            return Err(format!("{}: a tool is registered by method call, which the oracle does not follow", self.at(line)));
        }
        let mut found = None;
        for (i, line) in self.lines.iter().enumerate() {
            let [at, server, dot, tool, open, ..] = line else { continue };
            if !(at.is("@") && server.kind == Kind::Ident && dot.is(".") && tool.is("tool") && open.is("(")) {
                continue;
            }
            let Some(def) = (i + 1..self.lines.len()).find(|&j| !self.lines[j][0].is("@")) else { continue };
            let function = def_name(self.lines[def]).ok_or_else(|| format!("{}: the registration decorates no function", self.at(line)))?;
            let named = match keyword(&line[5..], "name") {
                Some(expr) => self.names_tool(expr).ok_or_else(|| format!("{}: a tool is registered under a name the oracle cannot read", self.at(line)))?,
                None => function == wanted,
            };
            if !named {
                continue;
            }
            if found.is_some() {
                return Err(format!("{}: {wanted} is registered twice", self.at(line)));
            }
            self.server_object(&server.text, line)?;
            for decorator in &self.lines[i + 1..def] {
                self.pass_through_decorator(decorator)?;
            }
            self.registered_function(def)?;
            found = Some(format!("{}: `{function}` is registered as {wanted} and hands it its {}", self.at(line), self.tool.argument));
        }
        Ok(found)
    }

    /// The object a tool is registered on is bound once, to an `MCPServer(…)`,
    /// whose middleware only passes the request on.
    fn server_object(&self, server: &str, registration: Line<'_>) -> Result<(), String> {
        let bindings: Vec<Line<'_>> = self.lines.iter().copied().filter(|l| l.len() > 2 && l[0].is(server) && l[1].is("=")).collect();
        let [binding] = bindings.as_slice() else {
            return Err(format!("{}: `{server}` is bound {} times, not once to a server", self.at(registration), bindings.len()));
        };
        let constructs = binding.len() > 3 && binding[2].is("MCPServer") && binding[3].is("(");
        if !constructs {
            return Err(format!("{}: `{server}` is not bound to MCPServer(…)", self.at(binding)));
        }
        let Some(middleware) = keyword(&binding[4..], "middleware") else { return Ok(()) };
        let (Some(first), Some(last)) = (middleware.first(), middleware.last()) else { return Ok(()) };
        if !(first.is("[") && last.is("]")) {
            return Err(format!("{}: the middleware is not a list of functions", self.at(binding)));
        }
        for item in split_top(&middleware[1..middleware.len() - 1]) {
            match item {
                [f] if f.kind == Kind::Ident => self.pass_through_middleware(&f.text, binding)?,
                _ => return Err(format!("{}: a middleware the oracle cannot name", self.at(binding))),
            }
        }
        Ok(())
    }

    /// The only definition of `name` in the file.
    fn definition(&self, name: &str, from: Line<'_>) -> Result<usize, String> {
        let defs: Vec<usize> = (0..self.lines.len()).filter(|&i| def_name(self.lines[i]) == Some(name)).collect();
        match defs.as_slice() {
            [one] => Ok(*one),
            _ => Err(format!("{}: `{name}` is defined {} times in the file", self.at(from), defs.len())),
        }
    }

    /// A middleware `(request, call_next)` that ends by returning
    /// `call_next(request)` and otherwise only reads the request or raises.
    fn pass_through_middleware(&self, name: &str, from: Line<'_>) -> Result<(), String> {
        let def = self.definition(name, from)?;
        let p = params(self.lines[def]);
        let [request, next] = p.as_slice() else { return Err(format!("{}: middleware `{name}` does not take (request, call_next)", self.at(self.lines[def]))) };
        let body = self.block(def);
        let passes = |l: Line<'_>| {
            let rest = if l.get(1).is_some_and(|t| t.is("await")) { &l[2..] } else { &l[1..] };
            l[0].is("return") && matches!(rest, [n, o, r, c] if n.is(next) && o.is("(") && r.is(request) && c.is(")"))
        };
        let Some((last, before)) = body.split_last() else { return Err(format!("{}: middleware `{name}` is empty", self.at(self.lines[def]))) };
        if !passes(last) {
            return Err(format!("{}: middleware `{name}` does not end by passing the request on", self.at(last)));
        }
        for line in before {
            let writes_request = line.iter().enumerate().any(|(i, t)| {
                t.is(request) && {
                    // The request read through members: `r.a.get(…)`, `r.a == …`; anything else may change it.
                    let mut j = i + 1;
                    while line.get(j).is_some_and(|d| d.is(".")) && line.get(j + 1).is_some_and(|m| m.kind == Kind::Ident) {
                        j += 2;
                    }
                    let method = j >= i + 3 && line.get(j).is_some_and(|o| o.is("("));
                    let called = line.get(j - 1).is_some_and(|m| m.is("get"));
                    let argument = i > 0 && (line[i - 1].is("(") || line[i - 1].is(","));
                    argument || line.get(j).is_some_and(|n| n.is("=") || n.is("[") || n.is("+=") || n.is(":=")) || (method && !called)
                }
            });
            let other_next = line.iter().any(|t| t.is(next));
            if writes_request || other_next || line[0].is("return") || line[0].is("del") {
                return Err(format!("{}: middleware `{name}` does more with the request than read it", self.at(line)));
            }
        }
        Ok(())
    }

    /// `@NAME` of a module function `NAME(fn)` that returns an inner
    /// `(*args, **kwargs)` function whose body only enters reviewed-plain
    /// context managers and returns `fn(*args, **kwargs)`.
    fn pass_through_decorator(&self, decorator: Line<'_>) -> Result<(), String> {
        let [at, name] = decorator else { return Err(format!("{}: a decorator the oracle cannot follow", self.at(decorator))) };
        if !at.is("@") {
            return Err(format!("{}: not a decorator", self.at(decorator)));
        }
        let def = self.definition(&name.text, decorator)?;
        let refuse = |l: Line<'_>, why: &str| Err(format!("{}: decorator `{}` {why}", self.at(l), name.text));
        let p = params(self.lines[def]);
        let [wrapped] = p.as_slice() else { return refuse(self.lines[def], "does not take one function") };
        let body = self.block(def);
        let Some(inner) = body.iter().position(|l| def_name(l).is_some()) else { return refuse(self.lines[def], "defines no wrapper") };
        let inner_name = def_name(body[inner]).unwrap_or_default();
        let inner_at = (0..self.lines.len()).find(|&i| std::ptr::eq(self.lines[i], body[inner])).unwrap_or(def);
        let inner_body = self.block(inner_at);
        // Before the wrapper only a docstring and `@wraps(fn)`; after its body only `return wrapper`.
        let decorations = &body[..inner];
        let plain = |l: &Line<'_>| {
            matches!(*l, [doc] if doc.str_value().is_some())
                || matches!(*l, [a, w, o, f, c] if a.is("@") && w.is("wraps") && o.is("(") && f.is(wrapped) && c.is(")"))
        };
        if !decorations.iter().all(plain) {
            return refuse(self.lines[def], "decorates its wrapper with more than @wraps(fn)");
        }
        let after = &body[inner + 1 + inner_body.len()..];
        if !matches!(after, [only] if matches!(*only, [r, w] if r.is("return") && w.is(inner_name))) {
            return refuse(self.lines[def], "does not just return its wrapper");
        }
        let (a, k) = match star_params(body[inner]) {
            Some(ak) => ak,
            None => return refuse(body[inner], "has a wrapper that does not take (*args, **kwargs)"),
        };
        let Some((last, withs)) = inner_body.split_last() else { return refuse(body[inner], "has an empty wrapper") };
        let returns = matches!(*last, [r, f, o, s1, a1, c, s2, k1, e] if r.is("return") && f.is(wrapped) && o.is("(") && s1.is("*") && a1.is(&a) && c.is(",") && s2.is("**") && k1.is(&k) && e.is(")"));
        if !returns {
            return refuse(last, "does not end by calling the function with the arguments it got");
        }
        for line in withs {
            if !line[0].is("with") || line.iter().any(|t| t.is(&a) || t.is(&k) || t.is(wrapped)) {
                return refuse(line, "does more than enter context managers before calling the function");
            }
            for item in split_top(&line[1..line.len() - 1]) {
                self.plain_context(item, line)?;
            }
        }
        Ok(())
    }

    /// A context manager that cannot change the call: a module name bound
    /// once to `threading.Lock()`, or `CM()` of an `@contextmanager` function
    /// of the file that only yields, and turns exceptions into raised ones.
    fn plain_context(&self, item: &[Token], from: Line<'_>) -> Result<(), String> {
        match item {
            [lock] => {
                let bindings: Vec<Line<'_>> = self.lines.iter().copied().filter(|l| l.len() > 1 && l[0].is(&lock.text) && l[1].is("=")).collect();
                match bindings.as_slice() {
                    [[_, _, m, d, l, o, c]] if m.is("threading") && d.is(".") && l.is("Lock") && o.is("(") && c.is(")") => Ok(()),
                    _ => Err(format!("{}: `{}` is not bound once to threading.Lock()", self.at(from), lock.text)),
                }
            }
            [cm, o, c] if o.is("(") && c.is(")") => {
                let def = self.definition(&cm.text, from)?;
                let decorated = def > 0 && matches!(self.lines[def - 1], [a, d] if a.is("@") && d.is("contextmanager"));
                let body = self.block(def);
                let plain = body.iter().all(|l| {
                    matches!(*l, [t, colon] if t.is("try") && colon.is(":"))
                        || matches!(*l, [y] if y.is("yield"))
                        || l[0].is("except")
                        || l[0].is("raise")
                        || matches!(*l, [doc] if doc.str_value().is_some())
                });
                if decorated && plain && body.iter().filter(|l| matches!(*l, [y] if y.is("yield"))).count() == 1 {
                    Ok(())
                } else {
                    Err(format!("{}: context manager `{}` does more than yield once and re-raise", self.at(from), cm.text))
                }
            }
            _ => Err(format!("{}: a context manager the oracle cannot name", self.at(from))),
        }
    }

    /// The registered function takes the tool's argument and hands it,
    /// unchanged, as the second argument of its one call of the tool's function.
    fn registered_function(&self, def: usize) -> Result<(), String> {
        let header = self.lines[def];
        let (tool, argument) = (self.tool.name, self.tool.argument);
        if !params(header).iter().any(|p| p == argument) {
            return Err(format!("{}: the registered function has no `{argument}` parameter", self.at(header)));
        }
        let body = self.block(def);
        if let Some(line) = body.iter().find(|l| rebinds(l, argument)) {
            return Err(format!("{}: {argument} is rebound", self.at(line)));
        }
        let calls: Vec<(Line<'_>, Vec<&[Token]>)> = body.iter().filter_map(|l| call_args(l, tool).map(|a| (*l, a))).collect();
        let [(call, args)] = calls.as_slice() else {
            return Err(format!("{}: the registered function calls {tool} {} times", self.at(header), calls.len()));
        };
        if !matches!(args.get(1), Some([t]) if t.is(argument)) || args.len() > self.tool.arity {
            return Err(format!("{}: {tool} is not handed the {argument} as its second argument", self.at(call)));
        }
        Ok(())
    }
}

/// Whether a line may change the map `name`: a subscript or member written,
/// a method other than `get` called, the map handed to a call or rebound.
fn writes_map(line: Line<'_>, name: &str) -> bool {
    line.iter().enumerate().any(|(i, t)| {
        if !t.is(name) || (i > 0 && line[i - 1].is(".")) {
            return false;
        }
        let next = line.get(i + 1);
        let handed = i > 0 && (line[i - 1].is("(") || line[i - 1].is(",")) && next.is_some_and(|n| n.is(")") || n.is(","));
        let method = next.is_some_and(|n| n.is(".")) && !line.get(i + 2).is_some_and(|m| m.is("get"));
        let subscript_written = next.is_some_and(|n| n.is("[")) && {
            let mut depth = 0;
            let close = (i + 1..line.len()).find(|&j| {
                if line[j].is("[") {
                    depth += 1;
                } else if line[j].is("]") {
                    depth -= 1;
                }
                depth == 0
            });
            close.and_then(|c| line.get(c + 1)).is_some_and(|n| n.is("=") || n.is("+=") || n.is("-=") || n.is(":="))
        };
        handed || method || subscript_written || rebinds(line, name) || line[0].is("del") && line.get(1).is_some_and(|n| n.is(name))
    })
}

/// The nearest line before `i`, indented less, that starts with `keyword` (`async def` included).
fn enclosing(lines: &[Line<'_>], i: usize, keyword: &str) -> Option<usize> {
    let mut indent = lines[i][0].indent;
    for j in (0..i).rev() {
        if lines[j][0].indent < indent {
            let l = lines[j];
            if l[0].is(keyword) || (l[0].is("async") && l.get(1).is_some_and(|t| t.is(keyword))) {
                return Some(j);
            }
            indent = l[0].indent;
        }
    }
    None
}

/// The name a `def` (or `async def`) line defines.
fn def_name<'t>(line: Line<'t>) -> Option<&'t str> {
    let rest = if line[0].is("async") { &line[1..] } else { line };
    match rest {
        [d, name, open, ..] if d.is("def") && open.is("(") => Some(name.text.as_str()),
        _ => None,
    }
}

/// The parameter names of a `def` line, in order (starred ones left out).
fn params(line: Line<'_>) -> Vec<String> {
    let Some(open) = line.iter().position(|t| t.is("(")) else { return Vec::new() };
    let mut out = Vec::new();
    let mut depth = 0;
    let mut expect = true;
    for t in &line[open + 1..] {
        match t.text.as_str() {
            "(" | "[" | "{" if t.kind == Kind::Punct => depth += 1,
            ")" | "]" | "}" if t.kind == Kind::Punct && depth == 0 => break,
            ")" | "]" | "}" if t.kind == Kind::Punct => depth -= 1,
            "," if t.kind == Kind::Punct && depth == 0 => {
                expect = true;
                continue;
            }
            _ => {}
        }
        if expect && depth == 0 {
            if t.kind == Kind::Ident {
                out.push(t.text.clone());
            }
            expect = false;
        }
    }
    out
}

/// `(*A, **K)` of a `def` line, annotations allowed.
fn star_params(line: Line<'_>) -> Option<(String, String)> {
    let open = line.iter().position(|t| t.is("("))?;
    let items = split_top(&line[open + 1..line.iter().rposition(|t| t.is(")"))?]);
    match items.as_slice() {
        [[s, a, ..], [ss, k, ..]] if s.is("*") && ss.is("**") => Some((a.text.clone(), k.text.clone())),
        _ => None,
    }
}

/// Whether a line binds `name` (assignment, loop, `as`, `global`).
fn rebinds(line: Line<'_>, name: &str) -> bool {
    line.iter().enumerate().any(|(i, t)| {
        t.is(name)
            && (line.get(i + 1).is_some_and(|n| ["=", ":=", "+=", "-="].iter().any(|op| n.is(op)))
                || (i > 0 && ["for", "as", "global", "nonlocal", "case"].iter().any(|k| line[i - 1].is(k))))
    })
}

/// The arguments of a call `function(…)` on this line (not a method of that name), split at top-level commas.
fn call_args<'t>(line: Line<'t>, function: &str) -> Option<Vec<&'t [Token]>> {
    let at = (0..line.len().saturating_sub(1)).find(|&i| line[i].is(function) && line[i + 1].is("(") && (i == 0 || !line[i - 1].is(".")))?;
    let rest = &line[at + 2..];
    Some(split_top(&rest[..top_level_end(rest)]))
}

/// The value of keyword argument `name=` among call arguments that start after the `(`.
fn keyword<'t>(args: &'t [Token], name: &str) -> Option<&'t [Token]> {
    let close = top_level_end(args);
    split_top(&args[..close]).into_iter().find_map(|a| match a {
        [k, eq, value @ ..] if k.is(name) && eq.is("=") => Some(value),
        _ => None,
    })
}
