"""Paimon options set in Spark's session, as paimon-spark reads them (Paimon's docs, "Set / Reset").

``SET spark.paimon.<key> = v`` applies option ``<key>`` to every table; ``SET
spark.paimon.<catalog>.<db>.<table>.<key> = v`` to one table, each of catalog, database and table
possibly ``*``. The catalog is Spark's session catalog, ``spark_catalog``, which holds the
warehouse's databases (paimon-spark's is the name its SparkCatalog is configured under). The
per-table form wins over the first; a statement's or a read's own options win over both (the
callers apply them after). A table read or written by its location has no catalog name: only the
first form reaches it, as in paimon-spark (``OptionUtils.copyWithSQLConf`` without an identifier).
``write.merge-schema[.explicit-cast]`` is read from the first form only, as paimon-spark reads it.
"""

from __future__ import annotations

from typing import Optional

from paimon_sql.options.core_options import registry
from paimon_sql.spark import jvm

PREFIX = "spark.paimon."
CATALOG = "spark_catalog"
# paimon-spark reads these Spark connector switches from the first form only
# (OptionUtils.writeMergeSchemaEnabled...): a per-table key does not turn them on
WRITE_SWITCHES = ("write.merge-schema",)


def session_options(spark, table_name: Optional[str], current_database: str) -> dict:
    """The options the session sets for table ``table_name`` (``db.t``; None: a table named by its
    location). Between two per-table keys of one option, the one naming more parts wins (Paimon
    leaves that to a hash map's order). Keys that are no Paimon option are Spark's business."""
    settings = {k[len(PREFIX):]: v for k, v in _conf(spark).items() if k.startswith(PREFIX)}
    if not settings:
        return {}
    known, everywhere, scoped = registry(), {}, []
    db, name = (table_name.split(".", 1) if "." in table_name else (current_database, table_name)) \
        if table_name else (None, None)
    for key, value in settings.items():
        parts = key.split(".", 3)
        if len(parts) == 4 and all(p in (own, "*") for p, own in zip(parts, (CATALOG, db, name))) \
                and not parts[3].startswith(WRITE_SWITCHES):
            scoped.append((parts[:3].count("*"), parts[3], value))
        elif key in known:
            everywhere[key] = value
    if table_name is None:
        scoped = []
    return {**everywhere, **{k: v for _, k, v in sorted(scoped, key=lambda s: -s[0])}}


def _conf(spark) -> dict:
    """Spark's session conf in one JVM call (``spark.conf.getAll`` makes one per entry: ~60 ms of
    every query on a Paimon table)."""
    return jvm.java_map(spark.sparkContext._jvm, spark._jsparkSession.conf().getAllAsJava())
