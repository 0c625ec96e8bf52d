//! SQL as the database engine reads it.
//!
//! A rule that decides on SQL text by a pattern reads less than the engine
//! does: a statement that begins with `SELECT` can still write (SQLite's
//! table-valued pragma functions run their pragma, `pragma_optimize` runs
//! ANALYZE), and a pattern cannot tell a string literal from a keyword. So
//! the one SQL test a rule has, [`SqlGrammar::reads`], parses the text with
//! the driver's grammar (SQLite's, through sqlparser) and holds only for one
//! statement made entirely of constructs a reviewer listed as reading: a
//! query (`SELECT`, `VALUES`, `WITH … SELECT`, set operations, subqueries)
//! whose every function, and every table-valued function it selects from,
//! is on the profile's allowlists, or a `PRAGMA name` without a value on the
//! pragma allowlist. Everything else, a text the grammar does not parse
//! included, is not a read, and the rule's catch-all decides it (UNKNOWN).
//! The summary records the grammar and the allowlists each rule used.

use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use sqlparser::ast::{Expr, ObjectName, ObjectNamePart, Query, Select, SetExpr, Statement, TableFactor, Visit, Visitor};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

/// The grammar a SQL argument is read with, and what counts as a read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SqlGrammar {
    /// The driver's dialect: `sqlite`.
    pub dialect: String,
    /// Scalar, aggregate and window functions that only compute (lower case).
    pub functions: Vec<String>,
    /// Table-valued functions (and eponymous virtual tables such as
    /// `pragma_table_info`) a query may select from (lower case).
    pub table_functions: Vec<String>,
    /// Pragmas that only read when given no value (lower case).
    pub pragmas: Vec<String>,
}

/// The dialects a grammar may name.
pub const DIALECTS: &[&str] = &["sqlite"];

impl SqlGrammar {
    /// Whether `text` is one statement that only reads, by this grammar;
    /// `Err` names the construct that is not a reviewed read.
    pub fn reads(&self, text: &str) -> Result<(), String> {
        if self.dialect != "sqlite" {
            return Err(format!("no grammar for the dialect `{}`", self.dialect));
        }
        // SQLite stops reading at a NUL byte; the grammar would read on.
        if text.contains('\0') {
            return Err("a NUL byte".into());
        }
        let statements = Parser::parse_sql(&SQLiteDialect {}, text).map_err(|e| format!("SQLite's grammar does not parse it: {e}"))?;
        let [statement] = statements.as_slice() else {
            return Err(format!("{} statements", statements.len()));
        };
        match statement {
            Statement::Query(_) => {}
            Statement::Pragma { name, value: None, .. } => {
                let name = last(name).ok_or("a pragma without a plain name")?;
                return if self.pragmas.contains(&name) { Ok(()) } else { Err(format!("the pragma `{name}` is not a reviewed read")) };
            }
            Statement::Pragma { .. } => return Err("a pragma given a value".into()),
            other => return Err(format!("`{}` is not a query", keyword(other))),
        }
        match statement.visit(&mut Reads { grammar: self }) {
            ControlFlow::Continue(()) => Ok(()),
            ControlFlow::Break(why) => Err(why),
        }
    }
}

/// The last part of a name, lower case, when every part is a plain identifier.
fn last(name: &ObjectName) -> Option<String> {
    let mut out = None;
    for part in &name.0 {
        match part {
            ObjectNamePart::Identifier(ident) => out = Some(ident.value.to_lowercase()),
            ObjectNamePart::Function(_) => return None,
        }
    }
    out
}

/// The statement's first word, for a message.
fn keyword(statement: &Statement) -> String {
    statement.to_string().split_whitespace().next().unwrap_or_default().to_uppercase()
}

/// Walks a query, breaking at the first construct that is not a reviewed read.
struct Reads<'g> {
    grammar: &'g SqlGrammar,
}

impl Visitor for Reads<'_> {
    type Break = String;

    fn pre_visit_query(&mut self, query: &Query) -> ControlFlow<String> {
        let extras = !query.locks.is_empty()
            || query.for_clause.is_some()
            || query.settings.is_some()
            || query.format_clause.is_some()
            || !query.pipe_operators.is_empty()
            || query.fetch.is_some();
        if extras {
            return ControlFlow::Break("a query clause SQLite does not have".into());
        }
        body(&query.body)
    }

    fn pre_visit_select(&mut self, select: &Select) -> ControlFlow<String> {
        if select.into.is_some() {
            return ControlFlow::Break("SELECT … INTO".into());
        }
        let foreign = select.top.is_some()
            || !select.optimizer_hints.is_empty()
            || select.select_modifiers.is_some()
            || select.exclude.is_some()
            || !select.lateral_views.is_empty()
            || select.prewhere.is_some()
            || !select.connect_by.is_empty()
            || !select.cluster_by.is_empty()
            || !select.distribute_by.is_empty()
            || !select.sort_by.is_empty()
            || select.qualify.is_some()
            || select.value_table_mode.is_some();
        if foreign {
            return ControlFlow::Break("a SELECT clause SQLite does not have".into());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, factor: &TableFactor) -> ControlFlow<String> {
        match factor {
            TableFactor::Table { name, args, .. } => {
                let Some(n) = last(name) else { return ControlFlow::Break(format!("the table `{name}`")) };
                // `FROM pragma_optimize` runs the pragma even without arguments.
                if (args.is_some() || n.starts_with("pragma_")) && !self.grammar.table_functions.contains(&n) {
                    return ControlFlow::Break(format!("the table-valued function `{n}` is not a reviewed read"));
                }
                ControlFlow::Continue(())
            }
            TableFactor::Derived { .. } | TableFactor::NestedJoin { .. } => ControlFlow::Continue(()),
            other => ControlFlow::Break(format!("the table expression `{other}`")),
        }
    }

    fn pre_visit_expr(&mut self, expr: &Expr) -> ControlFlow<String> {
        if let Expr::Function(f) = expr {
            let Some(n) = last(&f.name) else { return ControlFlow::Break(format!("the function `{}`", f.name)) };
            if !self.grammar.functions.contains(&n) {
                return ControlFlow::Break(format!("the function `{n}` is not a reviewed read"));
            }
        }
        ControlFlow::Continue(())
    }
}

/// A query body may only select, combine selections or list values.
fn body(set: &SetExpr) -> ControlFlow<String> {
    match set {
        SetExpr::Select(_) | SetExpr::Query(_) | SetExpr::Values(_) => ControlFlow::Continue(()),
        SetExpr::SetOperation { left, right, .. } => {
            body(left)?;
            body(right)
        }
        other => ControlFlow::Break(format!("`{other}` inside a query")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn grammar() -> SqlGrammar {
        let list = |xs: &[&str]| xs.iter().map(|s| (*s).to_owned()).collect();
        SqlGrammar {
            dialect: "sqlite".into(),
            functions: list(&["count", "lower", "abs"]),
            table_functions: list(&["pragma_table_info", "json_each"]),
            pragmas: list(&["user_version", "table_info"]),
        }
    }

    #[test]
    fn a_plain_query_reads() {
        let g = grammar();
        for sql in [
            "SELECT 1",
            "select 1;",
            "SELECT count(*) FROM t WHERE lower(name) = 'x' -- note\n",
            "WITH a AS (SELECT 1 AS x) SELECT x FROM a UNION SELECT 2",
            "SELECT * FROM (SELECT abs(-1)) JOIN t ON 1",
            "VALUES (1), (2)",
            "SELECT name FROM pragma_table_info('t')",
            "SELECT value FROM json_each('[1]')",
            "SELECT (SELECT count(*) FROM u) FROM t",
            "PRAGMA user_version",
            "PRAGMA main.user_version;",
            "SELECT 'DELETE FROM t; PRAGMA x = 1'",
        ] {
            assert_eq!(g.reads(sql), Ok(()), "{sql}");
        }
    }

    #[test]
    fn anything_else_is_not_a_read() {
        let g = grammar();
        for (sql, why) in [
            ("SELECT * FROM pragma_optimize", "pragma_optimize"),
            ("SELECT * FROM main.PRAGMA_OPTIMIZE(0x10002)", "pragma_optimize"),
            ("SELECT * FROM \"pragma_wal_checkpoint\"", "pragma_wal_checkpoint"),
            ("SELECT load_extension('x')", "load_extension"),
            ("SELECT upper(x) FROM t", "upper"),
            ("SELECT count(*) FROM t WHERE x IN (SELECT fts3_tokenizer('a'))", "fts3_tokenizer"),
            ("SELECT * FROM generate_series(1, 3)", "generate_series"),
            ("SELECT 1; DELETE FROM t", "2 statements"),
            ("", "0 statements"),
            ("PRAGMA user_version = 1", "a value"),
            ("PRAGMA user_version(1)", "a value"),
            ("PRAGMA optimize", "optimize"),
            ("DELETE FROM t", "DELETE"),
            ("ATTACH 'x.db' AS x", "ATTACH"),
            ("VACUUM INTO 'x.db'", "parse"),
            ("SELECT 1 INTO t", "INTO"),
            ("SELECT 1\0; DELETE FROM t", "NUL"),
            ("EXPLAIN SELECT 1", "EXPLAIN"),
        ] {
            let e = g.reads(sql).expect_err(sql);
            assert!(e.contains(why), "{sql}: {e}");
        }
    }
}
