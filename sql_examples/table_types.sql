-- Table types beyond data tables: views, format tables, object tables, materialized tables.
-- Runs end to end with: paimon-sql --warehouse /tmp/wh -f sql_examples/table_types.sql

-- == Views ==

-- == Format tables ==

-- == Object tables ==

-- == Materialized tables ==
