"""A persistent view: its columns and its query, as Paimon's ViewSchema keeps them.

The JSON is Paimon's (``org.apache.paimon.view.ViewSchema``): ``fields`` (Paimon DataFields),
``query``, ``dialects`` (engine -> the query in that engine's SQL; paimon-spark writes its text
under ``spark``), ``comment`` (left out when there is none) and ``options``. The JDBC catalog keeps
this JSON in its ``paimon_views`` table and the filesystem catalog in a file; the Hive catalog
keeps the same facts in a VIRTUAL_VIEW of the metastore (where Java reads no dialects).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Dict, List, Optional

from paimon_sql.data.types import DataField
from paimon_sql.exceptions import CorruptMetadataError

SPARK_DIALECT = "spark"  # paimon-spark's SupportView.DIALECT


@dataclass(frozen=True)
class ViewSchema:
    fields: List[DataField]
    query: str
    dialects: Dict[str, str] = field(default_factory=dict)
    comment: Optional[str] = None
    options: Dict[str, str] = field(default_factory=dict)

    @staticmethod
    def of_spark(fields: List[DataField], query: str, comment: Optional[str] = None,
                 options: Optional[dict] = None) -> "ViewSchema":
        """A view made by Spark SQL, as paimon-spark makes one: its text is the query and the ``spark`` dialect."""
        return ViewSchema(list(fields), query, {SPARK_DIALECT: query}, comment, dict(options or {}))

    def query_of(self, dialect: str = SPARK_DIALECT) -> str:
        """The query in ``dialect``, else the view's query (Paimon's ``View.query(dialect)``)."""
        return self.dialects.get(dialect, self.query)

    @property
    def field_names(self) -> List[str]:
        return [f.name for f in self.fields]

    def to_json(self) -> str:
        d = {"fields": [f.to_json() for f in self.fields], "query": self.query, "dialects": self.dialects}
        if self.comment is not None:
            d["comment"] = self.comment
        d["options"] = self.options
        return json.dumps(d, indent=2)

    @staticmethod
    def from_json(text: str, where: str) -> "ViewSchema":
        """The view JSON read from ``where`` (named in the error of a file that is not one)."""
        try:
            d = json.loads(text)
            return ViewSchema([DataField.from_json(f) for f in d["fields"]], d["query"], dict(d.get("dialects") or {}),
                              d.get("comment"), dict(d.get("options") or {}))
        except (ValueError, KeyError, TypeError) as e:
            raise CorruptMetadataError(f"view {where}: not a Paimon view schema ({type(e).__name__}: {e})") from None
