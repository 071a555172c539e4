"""The SQL front layer: parse → classify → rewrite → execute (sqlglot, Spark dialect)."""
