"""paimon-sql: Apache Paimon's table format in Python, with a SQL front layer over Apache Spark.

The core (every package below ``paimon_sql.spark``: catalog, table, commit, write, read, ... down to
io and data; docs/architecture.md) works on Arrow and needs no Spark.
"""

__version__ = "0.1.0"


def connect(warehouse=None, spark=None, conf=None, catalog_options=None):
    """A SQL session over Spark (see :func:`paimon_sql.session.connect`); imports Spark only here."""
    from paimon_sql.session import connect as _connect
    return _connect(warehouse=warehouse, spark=spark, conf=conf, catalog_options=catalog_options)
