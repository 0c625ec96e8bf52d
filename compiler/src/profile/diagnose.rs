//! How a profile error is shown: at the key itself, with the source line and
//! a caret under it, and a "did you mean" when a name is close to a known one.
//!
//! toml reports the position of a value; an author reads the key. [`key_at`]
//! walks back from a value to the key written before its `=`, so an error
//! about `matches = '…'` points at `matches`.

/// The byte offset of the key whose value starts at `value` (`key = value`),
/// or `value` itself when no `=` precedes it (a table header, an array item).
pub(super) fn key_at(text: &str, value: usize) -> usize {
    let bytes = text.as_bytes();
    let mut i = value.min(bytes.len());
    let skip_blank = |mut i: usize| {
        while i > 0 && matches!(bytes[i - 1], b' ' | b'\t') {
            i -= 1;
        }
        i
    };
    i = skip_blank(i);
    if i == 0 || bytes[i - 1] != b'=' {
        return value;
    }
    i = skip_blank(i - 1);
    let end = i;
    match bytes.get(i.wrapping_sub(1)) {
        Some(q @ (b'"' | b'\'')) => {
            let q = *q;
            i -= 1;
            while i > 0 && bytes[i - 1] != q {
                i -= 1;
            }
            i = i.saturating_sub(1);
        }
        _ => {
            while i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || matches!(bytes[i - 1], b'-' | b'_')) {
                i -= 1;
            }
        }
    }
    if i == end { value } else { i }
}

/// The line holding `offset`, numbered, with a caret under its column:
///
/// ```text
///    |
/// 12 | region = "handlr"
///    | ^
/// ```
pub(super) fn snippet(text: &str, offset: usize) -> String {
    let offset = offset.min(text.len());
    let start = text[..offset].rfind('\n').map_or(0, |i| i + 1);
    let end = text[offset..].find('\n').map_or(text.len(), |i| offset + i);
    let line = text[..offset].matches('\n').count() + 1;
    let number = line.to_string();
    let pad = " ".repeat(number.len());
    let source = text[start..end].trim_end_matches('\r');
    let column: String = text[start..offset].chars().map(|c| if c == '\t' { '\t' } else { ' ' }).collect();
    format!("{pad} |\n{number} | {source}\n{pad} | {column}^")
}

/// The known name closest to `name` when it is close enough to be a typo:
/// at most a third of its length in edits (at least one), and nearer than
/// any other.
pub(crate) fn closest<'k>(name: &str, known: impl IntoIterator<Item = &'k str>) -> Option<&'k str> {
    let limit = (name.chars().count() / 3).max(1);
    let mut best: Option<(usize, &str)> = None;
    for k in known {
        let d = distance(name, k);
        if d <= limit && best.is_none_or(|(b, _)| d < b) {
            best = Some((d, k));
        }
    }
    best.map(|(_, k)| k)
}

/// `"; did you mean `NAME`?"` when a known name is close to `name`.
pub fn did_you_mean<'k>(name: &str, known: impl IntoIterator<Item = &'k str>) -> String {
    closest(name, known).map_or_else(String::new, |k| format!("; did you mean `{k}`?"))
}

/// toml's "unknown field `x`, expected one of `a`, `b`" (or "unknown
/// variant"), with a suggestion when `x` is close to one of them.
pub(super) fn with_suggestion(message: &str) -> String {
    let Some(rest) = message.strip_prefix("unknown field `").or_else(|| message.strip_prefix("unknown variant `")) else {
        return message.to_owned();
    };
    let Some((name, expected)) = rest.split_once('`') else { return message.to_owned() };
    let known: Vec<&str> = expected.split('`').skip(1).step_by(2).collect();
    format!("{message}{}", did_you_mean(name, known))
}

/// Levenshtein distance over characters.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let next = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(row[j + 1] + 1);
            prev = row[j + 1];
            row[j + 1] = next;
        }
    }
    row[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_points_back_at_its_key() {
        let text = "when = { arg = \"target\", matches = '^x' }";
        assert_eq!(&text[key_at(text, text.find("'^x'").unwrap())..][..7], "matches");
        assert_eq!(key_at(text, text.find('{').unwrap()), 0);
        let quoted = "\"a.b\" = 1";
        assert_eq!(key_at(quoted, quoted.find('1').unwrap()), 0);
        let item = "x = [\"a\", \"b\"]";
        assert_eq!(key_at(item, item.find("\"b\"").unwrap()), item.find("\"b\"").unwrap());
    }

    #[test]
    fn a_snippet_puts_the_caret_under_the_column() {
        assert_eq!(snippet("a = 1\n  bad = 2\n", 8), "  |\n2 |   bad = 2\n  |   ^");
    }

    #[test]
    fn close_names_are_suggested_and_far_ones_not() {
        assert_eq!(closest("handlr", ["handler", "route"]), Some("handler"));
        assert_eq!(closest("xyz", ["handler", "route"]), None);
        assert_eq!(
            with_suggestion("unknown field `calee`, expected one of `callee`, `args`"),
            "unknown field `calee`, expected one of `callee`, `args`; did you mean `callee`?"
        );
    }
}
