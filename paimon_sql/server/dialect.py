"""SQLAlchemy dialect ``paimon://`` for paimon-sql-server, so Superset and other SQLAlchemy tools
list and describe its tables correctly.

It is pyhive's ``hive://`` dialect (same driver, URL and connect arguments, e.g. ``auth=NOSASL``)
with only what is wrong against a Spark-SQL server corrected: pyhive takes table names from the
first column of ``SHOW TABLES``, which Spark fills with the namespace (PyHive#150, as with
Spark's own Thrift Server), lists views as tables, reports every column nullable, has no
primary keys or table comments, and does not recognise Spark's "table not found" error.
Primary keys, nullability and the comment of a Paimon table come from its latest schema
(``t$schemas``: schema files only, no data read).

    create_engine("paimon://user@127.0.0.1:10000/default?auth=NOSASL")
"""

import contextlib
import json

from pyhive import hive
from pyhive.sqlalchemy_hive import HiveDialect
from sqlalchemy import exc
from sqlalchemy.engine import reflection
from sqlalchemy.sql import text


class PaimonDialect(HiveDialect):
    name = "paimon"
    supports_statement_cache = False  # as HiveDialect; set here, as SQLAlchemy wants it per class

    @classmethod
    def import_dbapi(cls):
        """pyhive's DB-API module, as hive://; defined here, as SQLAlchemy looks for it on this class."""
        return hive

    def _qualified(self, schema, name: str) -> str:
        quote = self.identifier_preparer.quote_identifier
        return f"{quote(schema)}.{quote(name)}" if schema else quote(name)

    def _listing(self, connection, what: str, column: str, schema):
        """Names in ``SHOW TABLES|VIEWS [IN schema]`` by their column's name. Spark lists the session's
        temporary views (empty namespace) in every database: they are left out."""
        query = f"SHOW {what}" + (f" IN {self.identifier_preparer.quote_identifier(schema)}" if schema else "")
        rows = connection.execute(text(query)).mappings()
        return [row[column] for row in rows if row["namespace"]]

    @reflection.cache
    def get_view_names(self, connection, schema=None, **kw):
        return self._listing(connection, "VIEWS", "viewName", schema)

    @reflection.cache
    def get_table_names(self, connection, schema=None, **kw):
        """Spark's ``SHOW TABLES`` lists views too: SQLAlchemy's table names exclude them."""
        views = set(self.get_view_names(connection, schema, **kw))
        return [name for name in self._listing(connection, "TABLES", "tableName", schema) if name not in views]

    def _get_table_columns(self, connection, table_name, schema):
        """pyhive's ``DESCRIBE``, with Spark's "not found" read as no such table (so ``has_table``
        answers False instead of raising)."""
        with _no_such_table(table_name, schema):
            return super()._get_table_columns(connection, table_name, schema)

    @reflection.cache
    def _paimon_schema(self, connection, table_name, schema=None, **kw):
        """The latest ``t$schemas`` row (fields, primary_keys, comment) of a Paimon table; None for
        Spark's own tables and views, which have no system tables."""
        try:
            row = connection.execute(text(f"SELECT fields, primary_keys, comment FROM "
                                          f"{self._qualified(schema, table_name + '$schemas')} "
                                          "ORDER BY schema_id DESC LIMIT 1")).mappings().first()
        except exc.OperationalError as e:
            if "does not exist" in str(e):
                return None
            raise
        return {"fields": json.loads(row["fields"]), "primary_keys": json.loads(row["primary_keys"]),
                "comment": row["comment"]}

    def get_columns(self, connection, table_name, schema=None, **kw):
        """pyhive's columns (types from ``DESCRIBE``); for a Paimon table, nullability (``NOT NULL``
        in the Paimon type) and column comments from its schema."""
        columns = super().get_columns(connection, table_name, schema, **kw)
        paimon = self._paimon_schema(connection, table_name, schema, **kw)
        if paimon:
            fields = {f["name"]: f for f in paimon["fields"]}
            for column in columns:
                field = fields.get(column["name"])  # None: a column added since the DESCRIBE
                if field:
                    column["nullable"] = not _outer_type(field["type"]).endswith("NOT NULL")
                    column["comment"] = field.get("description")
        return columns

    def get_pk_constraint(self, connection, table_name, schema=None, **kw):
        paimon = self._paimon_schema(connection, table_name, schema, **kw)
        return {"constrained_columns": paimon["primary_keys"] if paimon else [], "name": None}

    def get_table_comment(self, connection, table_name, schema=None, **kw):
        """A Paimon table's schema comment; for Spark's tables and views, ``Comment`` of
        ``DESCRIBE TABLE EXTENDED``."""
        paimon = self._paimon_schema(connection, table_name, schema, **kw)
        if paimon:
            return {"text": paimon["comment"]}
        with _no_such_table(table_name, schema):
            rows = connection.execute(text(f"DESCRIBE TABLE EXTENDED {self._qualified(schema, table_name)}"))
        return {"text": next((r[1] for r in rows if r[0] == "Comment"), None)}


@contextlib.contextmanager
def _no_such_table(table_name, schema):
    """Spark's TABLE_OR_VIEW_NOT_FOUND error as SQLAlchemy's NoSuchTableError, which pyhive expects
    in Hive's words."""
    try:
        yield
    except exc.OperationalError as e:
        if "TABLE_OR_VIEW_NOT_FOUND" in str(e):
            raise exc.NoSuchTableError(f"{schema}.{table_name}" if schema else table_name) from None
        raise


def _outer_type(paimon_type) -> str:
    """A field's type in Paimon's schema JSON: a string (``INT NOT NULL``), or for ARRAY, MAP,
    MULTISET and ROW an object whose ``type`` carries the nullability (``ARRAY NOT NULL``)."""
    return paimon_type["type"] if isinstance(paimon_type, dict) else paimon_type
