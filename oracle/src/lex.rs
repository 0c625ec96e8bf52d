//! A small lexical scanner with comment and string awareness, for Python and Go.
//!
//! The oracle reads source as tokens, not syntax trees: a different technique
//! from the compiler's, so a bug in one is unlikely to repeat in the other.
//! Comments are dropped; string literals become one token holding their
//! decoded value; every token carries its line and the indentation of that line.

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Ident,
    /// A string literal; `text` holds its decoded value (`None` when it has
    /// escapes or interpolation the scanner does not decode).
    Str(Option<String>),
    Number,
    Punct,
    /// End of a logical line (Python only; Go statements end at newlines too).
    Newline,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token {
    pub kind: Kind,
    pub text: String,
    pub line: usize,
    /// Indentation (columns) of the line the token starts.
    pub indent: usize,
}

impl Token {
    pub fn is(&self, text: &str) -> bool {
        !matches!(self.kind, Kind::Str(_)) && self.text == text
    }

    pub fn str_value(&self) -> Option<&str> {
        match &self.kind {
            Kind::Str(v) => v.as_deref(),
            _ => None,
        }
    }
}

/// The language rules the scanner follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    Python,
    Go,
    CSharp,
    JavaScript,
}

/// Splits `src` into tokens; `Err` names the line of an unterminated string or comment.
pub fn scan(src: &str, dialect: Dialect) -> Result<Vec<Token>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line, mut indent, mut at_line_start, mut depth) = (0usize, 1usize, 0usize, true, 0i32);
    while i < chars.len() {
        let c = chars[i];
        if at_line_start {
            let mut j = i;
            let mut width = 0;
            while j < chars.len() && (chars[j] == ' ' || chars[j] == '\t') {
                width += if chars[j] == '\t' { 8 } else { 1 };
                j += 1;
            }
            indent = width;
            at_line_start = false;
            i = j;
            continue;
        }
        match c {
            '\n' => {
                // Python joins lines inside brackets; Go ends a line at every newline.
                // C# statements end at `;`: its newlines are only white space.
                let ends = dialect != Dialect::Python || depth <= 0;
                if ends && !matches!(dialect, Dialect::CSharp | Dialect::JavaScript) && out.last().is_some_and(|t: &Token| t.kind != Kind::Newline) {
                    out.push(Token { kind: Kind::Newline, text: "\n".into(), line, indent });
                }
                line += 1;
                i += 1;
                at_line_start = ends;
            }
            ' ' | '\t' | '\r' | '\u{feff}' => i += 1,
            '\\' if dialect == Dialect::Python && chars.get(i + 1) == Some(&'\n') => {
                line += 1;
                i += 2;
            }
            '#' if dialect == Dialect::Python => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if dialect != Dialect::Python && chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if dialect != Dialect::Python && chars.get(i + 1) == Some(&'*') => {
                let start = line;
                i += 2;
                loop {
                    if i + 1 >= chars.len() {
                        return Err(format!("line {start}: unterminated comment"));
                    }
                    if chars[i] == '\n' {
                        line += 1;
                    }
                    if chars[i] == '*' && chars[i + 1] == '/' {
                        i += 2;
                        break;
                    }
                    i += 1;
                }
            }
            '@' if dialect == Dialect::CSharp && chars.get(i + 1) == Some(&'"') => {
                let (token, next, lines) = verbatim(&chars, i, line, indent)?;
                out.push(token);
                i = next;
                line += lines;
            }
            '#' if dialect == Dialect::CSharp => {
                // Preprocessor directives are lines of their own.
                while i < chars.len() && chars[i] != '\n' {
                    i += 1;
                }
            }
            // A JavaScript regular expression literal: a `/` where a value may start.
            '/' if dialect == Dialect::JavaScript && chars.get(i + 1) != Some(&'/') && chars.get(i + 1) != Some(&'*') && regex_may_start(&out) => {
                let start = i;
                i += 1;
                let mut in_class = false;
                while let Some(&c) = chars.get(i) {
                    match c {
                        '\\' => i += 1,
                        '[' => in_class = true,
                        ']' => in_class = false,
                        '/' if !in_class => break,
                        '\n' => return Err(format!("line {line}: unterminated regular expression")),
                        _ => {}
                    }
                    i += 1;
                }
                i += 1;
                while chars.get(i).is_some_and(|c| c.is_ascii_alphabetic()) {
                    i += 1;
                }
                out.push(Token { kind: Kind::Str(None), text: chars[start..i.min(chars.len())].iter().collect(), line, indent });
            }
            '"' | '\'' | '`' => {
                let (token, next, lines) = string(&chars, i, i, dialect, line, indent)?;
                out.push(token);
                i = next;
                line += lines;
            }
            c if c.is_alphabetic() || c == '_' => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                // Python string prefixes (r, b, f, u and pairs) glue to the quote.
                if dialect == Dialect::Python
                    && word.len() <= 2
                    && word.chars().all(|c| "rbfuRBFU".contains(c))
                    && matches!(chars.get(i), Some('"') | Some('\''))
                {
                    let (token, next, lines) = string(&chars, start, i, dialect, line, indent)?;
                    out.push(token);
                    i = next;
                    line += lines;
                } else {
                    out.push(Token { kind: Kind::Ident, text: word, line, indent });
                }
            }
            c if c.is_ascii_digit() => {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_' || chars[i] == '.') {
                    i += 1;
                }
                out.push(Token { kind: Kind::Number, text: chars[start..i].iter().collect(), line, indent });
            }
            _ => {
                let two: String = chars[i..(i + 2).min(chars.len())].iter().collect();
                let text =
                    if [":=", "==", "!=", "<=", ">=", "&&", "||", "->", "=>", "**", "//", "+=", "-="].contains(&two.as_str()) { two } else { c.to_string() };
                match text.as_str() {
                    "(" | "[" | "{" => depth += 1,
                    ")" | "]" | "}" => depth -= 1,
                    _ => {}
                }
                i += text.chars().count();
                out.push(Token { kind: Kind::Punct, text, line, indent });
            }
        }
    }
    Ok(out)
}

/// Whether a `/` after these tokens starts a regular expression (not a division).
fn regex_may_start(out: &[Token]) -> bool {
    match out.last() {
        None => true,
        Some(t) if t.kind == Kind::Punct => !matches!(t.text.as_str(), ")" | "]" | "}"),
        Some(t) if t.kind == Kind::Ident => matches!(t.text.as_str(), "return" | "typeof" | "case" | "in" | "of" | "new" | "delete" | "void" | "throw"),
        Some(_) => false,
    }
}

/// Scans a C# verbatim string `@"…"` (a doubled quote stands for one).
fn verbatim(chars: &[char], start: usize, line: usize, indent: usize) -> Result<(Token, usize, usize), String> {
    let mut i = start + 2;
    let mut value = String::new();
    let mut lines = 0;
    loop {
        match chars.get(i) {
            None => return Err(format!("line {line}: unterminated string")),
            Some('"') if chars.get(i + 1) == Some(&'"') => {
                value.push('"');
                i += 2;
            }
            Some('"') => {
                i += 1;
                break;
            }
            Some(c) => {
                if *c == '\n' {
                    lines += 1;
                }
                value.push(*c);
                i += 1;
            }
        }
    }
    let text: String = chars[start..i].iter().collect();
    Ok((Token { kind: Kind::Str(Some(value)), text, line, indent }, i, lines))
}

/// Scans one string literal starting at `start` (its prefix) with the quote at `quote`.
fn string(chars: &[char], start: usize, quote: usize, dialect: Dialect, line: usize, indent: usize) -> Result<(Token, usize, usize), String> {
    let prefix: String = chars[start..quote].iter().collect::<String>().to_ascii_lowercase();
    let q = chars[quote];
    let triple = dialect != Dialect::Go && q == '"' || dialect == Dialect::Python;
    let triple = triple && chars.get(quote + 1) == Some(&q) && chars.get(quote + 2) == Some(&q);
    // C# raw strings (`"""`) take no escapes.
    let raw_csharp = dialect == Dialect::CSharp && triple;
    let open = if triple { 3 } else { 1 };
    let raw = prefix.contains('r') || q == '`' || raw_csharp;
    let mut i = quote + open;
    let mut value = String::new();
    let mut decodable = !prefix.contains('f') && !prefix.contains('b');
    let mut lines = 0;
    loop {
        let Some(&c) = chars.get(i) else {
            return Err(format!("line {line}: unterminated string"));
        };
        if c == '\n' {
            if !triple && q != '`' {
                return Err(format!("line {line}: unterminated string"));
            }
            lines += 1;
        }
        if c == q && (!triple || (chars.get(i + 1) == Some(&q) && chars.get(i + 2) == Some(&q))) {
            i += open;
            break;
        }
        if c == '\\' && !raw {
            match chars.get(i + 1) {
                Some('n') => value.push('\n'),
                Some('t') => value.push('\t'),
                Some('\\') => value.push('\\'),
                Some('\'') => value.push('\''),
                Some('"') => value.push('"'),
                Some('x') => {
                    let hex: String = chars.get(i + 2..i + 4).map(|h| h.iter().collect()).unwrap_or_default();
                    match u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32) {
                        Some(ch) => {
                            value.push(ch);
                            i += 2;
                        }
                        None => decodable = false,
                    }
                }
                Some('\n') => lines += 1,
                _ => decodable = false,
            }
            i += 2;
            continue;
        }
        value.push(c);
        i += 1;
    }
    let text: String = chars[start..i].iter().collect();
    Ok((Token { kind: Kind::Str(decodable.then_some(value)), text, line, indent }, i, lines))
}

/// The arguments of a call whose opening parenthesis is just before
/// `after`, split at top-level commas (brackets and braces nest), up to the
/// closing parenthesis or the end of `after`; empty arguments are left out.
pub fn call_arguments(after: &[Token]) -> Vec<Vec<Token>> {
    split_top(&after[..top_level_end(after)]).into_iter().map(<[Token]>::to_vec).collect()
}

/// Where the tokens after an opening bracket close it: the index of the
/// first closing bracket at depth zero (or the length when none does).
pub fn top_level_end(after: &[Token]) -> usize {
    let mut depth = 0;
    after
        .iter()
        .position(|t| {
            match t.text.as_str() {
                "(" | "[" | "{" if t.kind == Kind::Punct => depth += 1,
                ")" | "]" | "}" if t.kind == Kind::Punct && depth == 0 => return true,
                ")" | "]" | "}" if t.kind == Kind::Punct => depth -= 1,
                _ => {}
            }
            false
        })
        .unwrap_or(after.len())
}

/// Tokens split at top-level commas (brackets and braces nest); empty parts left out.
pub fn split_top(tokens: &[Token]) -> Vec<&[Token]> {
    let mut out = Vec::new();
    let (mut depth, mut start) = (0, 0);
    for (i, t) in tokens.iter().enumerate() {
        match t.text.as_str() {
            "(" | "[" | "{" if t.kind == Kind::Punct => depth += 1,
            ")" | "]" | "}" if t.kind == Kind::Punct => depth -= 1,
            "," if t.kind == Kind::Punct && depth == 0 => {
                out.push(&tokens[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&tokens[start..]);
    out.retain(|p| !p.is_empty());
    out
}

/// The tokens between the braces of the function whose `func NAME (` starts
/// at `start` (Go): the parameter list is skipped, then the first `{` and
/// its matching `}` are taken.
pub fn go_function_body(tokens: &[Token], start: usize) -> Option<&[Token]> {
    let mut i = start + 2;
    let mut depth = 0;
    loop {
        let t = tokens.get(i)?;
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            depth -= 1;
            if depth == 0 {
                break;
            }
        }
        i += 1;
    }
    let open = (i..tokens.len()).find(|&j| tokens[j].is("{"))?;
    tokens.get(open + 1..braces_end(tokens, open)?)
}

/// The index of the `}` that closes the `{` at `open`.
pub fn braces_end(tokens: &[Token], open: usize) -> Option<usize> {
    matching(tokens, open, "{", "}")
}

/// The index of the `closer` that closes the `opener` at `open`.
pub fn matching(tokens: &[Token], open: usize, opener: &str, closer: &str) -> Option<usize> {
    let mut depth = 0;
    for (j, t) in tokens.iter().enumerate().skip(open) {
        if t.is(opener) {
            depth += 1;
        } else if t.is(closer) {
            depth -= 1;
            if depth == 0 {
                return Some(j);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_vanish_and_strings_are_single_tokens() {
        let t = scan("x = 'a#b'  # c('d')\ny(\"\\x2d\")\n", Dialect::Python).unwrap();
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["x", "=", "'a#b'", "\n", "y", "(", "\"\\x2d\"", ")", "\n"]);
        assert_eq!(t[6].str_value(), Some("-"));
    }

    #[test]
    fn go_comments_and_raw_strings() {
        let t = scan("a := `x\ny` /* b() */ // c()\nd()", Dialect::Go).unwrap();
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(texts, ["a", ":=", "`x\ny`", "\n", "d", "(", ")"]);
    }

    #[test]
    fn csharp_raw_and_verbatim_strings() {
        let t = scan("var t = \"\"\"\n { \"k\": \"v\" }\n \"\"\"; var p = @\"a\"\"b\"; // c()\n#if X\nd();", Dialect::CSharp).unwrap();
        let strs: Vec<&str> = t.iter().filter_map(|t| t.str_value()).collect();
        assert_eq!(strs, ["\n { \"k\": \"v\" }\n ", "a\"b"]);
        assert!(t.iter().any(|t| t.is("d")));
    }

    #[test]
    fn javascript_regex_literals_are_single_tokens() {
        let t = scan("const w = s.match(/[\"']\\S+/g)?.[0]; x = a / b / c;", Dialect::JavaScript).unwrap();
        assert!(t.iter().any(|t| t.text == "/[\"']\\S+/g"), "{t:?}");
        assert_eq!(t.iter().filter(|t| t.is("/")).count(), 2);
    }

    #[test]
    fn unterminated_string_names_its_line() {
        assert!(scan("a\nb = 'x\n", Dialect::Python).unwrap_err().contains("line 2"));
    }
}
