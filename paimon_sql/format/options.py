"""Table options: every key of Paimon's CoreOptions, typed, with its default — declared once.

The registry is ``core_options.tsv`` (key, Java type, Java default expression), extracted from
Apache Paimon's ``CoreOptions.java``. Values are strings on disk (schema JSON ``options``); this
module parses them by their declared type. Unknown keys (``fields.x.aggregate-function``, engine
or user keys) are kept as they are; a known key whose value does not parse is an
:class:`InvalidOptionError` naming the key.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, Mapping, Optional, Tuple

from paimon_sql.exceptions import InvalidOptionError

_MEM_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
              "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
_DUR_UNITS = {"ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1, "s": 1000, "sec": 1000,
              "secs": 1000, "second": 1000, "seconds": 1000, "min": 60000, "m": 60000, "minute": 60000,
              "minutes": 60000, "h": 3600000, "hour": 3600000, "hours": 3600000, "d": 86400000,
              "day": 86400000, "days": 86400000}

# Enum options whose members we know, so that a typo is an error rather than silently the default.
ENUM_VALUES: Dict[str, Tuple[str, ...]] = {
    "merge-engine": ("deduplicate", "partial-update", "aggregation", "first-row"),
    "changelog-producer": ("none", "input", "full-compaction", "lookup"),
    "scan.mode": ("default", "latest-full", "full", "latest", "from-snapshot", "from-snapshot-full",
                  "from-timestamp", "from-creation-timestamp", "from-file-creation-time", "compacted-full",
                  "incremental"),
    "sequence.field.sort-order": ("ascending", "descending"),
}


def parse_memory_size(text: str) -> int:
    """``'128 mb'`` → bytes."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or m.group(2).lower() not in _MEM_UNITS:
        raise ValueError(f"not a memory size: {text!r}")
    return int(m.group(1)) * _MEM_UNITS[m.group(2).lower()]


def parse_duration_ms(text: str) -> int:
    """``'1 h'`` / ``'30 min'`` / ``'500'`` (ms) → milliseconds."""
    m = re.fullmatch(r"\s*(\d+)\s*([a-zA-Z]*)\s*", str(text))
    if not m or (m.group(2) and m.group(2).lower() not in _DUR_UNITS):
        raise ValueError(f"not a duration: {text!r}")
    return int(m.group(1)) * _DUR_UNITS.get(m.group(2).lower(), 1)


def _parse_bool(text: str) -> bool:
    v = str(text).strip().lower()
    if v not in ("true", "false"):
        raise ValueError(f"not a boolean: {text!r}")
    return v == "true"


def _parse_map(text: str) -> Dict[str, str]:
    out = {}
    for part in filter(None, (p.strip() for p in str(text).split(","))):
        k, sep, v = part.partition(":")
        if not sep:
            raise ValueError(f"not a map entry 'k:v': {part!r}")
        out[k.strip()] = v.strip()
    return out


def _enum_text(java_const: str) -> str:
    """``MergeEngine.FIRST_ROW`` → ``first-row`` (Paimon's enums print lower-case with dashes)."""
    return java_const.split(".")[-1].lower().replace("_", "-")


_PARSERS = {
    "Boolean": _parse_bool,
    "Integer": int,
    "Long": int,
    "Double": float,
    "Float": float,
    "String": str,
    "MemorySize": parse_memory_size,
    "Duration": parse_duration_ms,
    "Map<String, String>": _parse_map,
}


@dataclass(frozen=True)
class OptionSpec:
    key: str
    java_type: str
    default: Any  # already parsed; None when the option has no default

    def parse(self, text: str) -> Any:
        try:
            if self.java_type in _PARSERS:
                return _PARSERS[self.java_type](text)
            value = str(text).strip().lower()
            allowed = ENUM_VALUES.get(self.key)
            if allowed and value not in allowed:
                raise ValueError(f"expected one of {', '.join(allowed)}")
            return value
        except ValueError as e:
            raise InvalidOptionError(
                f"option '{self.key}' expects a {self.java_type} value, got {text!r} ({e})") from None


def _java_default(java_type: str, expr: str) -> Any:
    expr = expr.strip()
    if expr == "(none)":
        return None
    if expr.startswith('"') and expr.endswith('"'):
        raw = expr[1:-1]
        return _PARSERS.get(java_type, str)(raw) if java_type in ("MemorySize", "Duration") else raw
    if expr in ("Integer.MAX_VALUE", "Long.MAX_VALUE"):
        return (1 << 31) - 1 if expr.startswith("Integer") else (1 << 63) - 1
    if expr == "Integer.MIN_VALUE":
        return -(1 << 31)
    if expr == "FILE_FORMAT_PARQUET":
        return "parquet"
    if expr.startswith("new HashMap"):
        return {}
    m = re.fullmatch(r"Duration\.of(Millis|Seconds|Minutes|Hours|Days)\((\d+)\)", expr)
    if m:
        return int(m.group(2)) * {"Millis": 1, "Seconds": 1000, "Minutes": 60000, "Hours": 3600000,
                                  "Days": 86400000}[m.group(1)]
    m = re.fullmatch(r'MemorySize\.parse\("([^"]+)"\)', expr)
    if m:
        return parse_memory_size(m.group(1))
    m = re.fullmatch(r"MemorySize\.of(MebiBytes|KibiBytes|Bytes)\((\d+)\)", expr)
    if m:
        return int(m.group(2)) * {"MebiBytes": 1 << 20, "KibiBytes": 1 << 10, "Bytes": 1}[m.group(1)]
    if expr == "MemorySize.VALUE_8_MB":
        return 8 << 20
    if expr == "MemorySize.MAX_VALUE":
        return (1 << 63) - 1
    if expr in ("true", "false"):
        return expr == "true"
    m = re.fullmatch(r"(-?[\d_]+(?:\.\d+)?)[LFdD]?", expr)
    if m:
        num = m.group(1).replace("_", "")
        return float(num) if "." in num or java_type in ("Double", "Float") else int(num)
    return _enum_text(expr)


@lru_cache(maxsize=1)
def registry() -> Dict[str, OptionSpec]:
    """All known option keys → spec, read once from core_options.tsv."""
    path = os.path.join(os.path.dirname(__file__), "core_options.tsv")
    specs = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            key, java_type, default = line.rstrip("\n").split("\t")
            specs[key] = OptionSpec(key, java_type, _java_default(java_type, default))
    return specs


def validate(options: Mapping[str, str]) -> None:
    """Raise InvalidOptionError for the first known key whose value does not parse."""
    specs = registry()
    for k, v in options.items():
        if k in specs:
            specs[k].parse(v)


class CoreOptions:
    """Typed view over a table's string options. Attributes name the options the core uses."""

    def __init__(self, options: Mapping[str, str]):
        self.raw: Dict[str, str] = dict(options)

    def get(self, key: str, default: Any = None) -> Any:
        spec = registry().get(key)
        if key in self.raw:
            return spec.parse(self.raw[key]) if spec else self.raw[key]
        if spec is not None and spec.default is not None:
            return spec.default
        return default

    @property
    def bucket(self) -> int:
        return self.get("bucket")

    @property
    def bucket_key(self) -> Optional[list]:
        v = self.get("bucket-key")
        return [s.strip() for s in v.split(",")] if v else None

    @property
    def file_format(self) -> str:
        return self.get("file.format").lower()

    @property
    def file_compression(self) -> str:
        return self.get("file.compression").lower()

    @property
    def manifest_compression(self) -> str:
        return self.get("manifest.compression").lower()

    def target_file_size(self, has_primary_key: bool) -> int:
        """Paimon: 128 MB for primary-key tables, 256 MB for append tables, unless set."""
        v = self.get("target-file-size")
        return v if v is not None else (128 << 20 if has_primary_key else 256 << 20)

    @property
    def stats_mode(self) -> str:
        return self.get("metadata.stats-mode").lower()

    @property
    def sequence_fields(self) -> list:
        v = self.get("sequence.field")
        return [s.strip() for s in v.split(",")] if v else []

    @property
    def rowkind_field(self) -> Optional[str]:
        return self.get("rowkind.field")

    @property
    def merge_engine(self) -> str:
        return self.get("merge-engine")

    @property
    def ignore_delete(self) -> bool:
        """``ignore-delete`` or one of its fallback keys (``<engine>.ignore-delete``)."""
        return bool(self.get("ignore-delete", False)) or any(
            _parse_bool(self.raw.get(f"{engine}.ignore-delete", "false"))
            for engine in ("deduplicate", "partial-update", "first-row"))

    @property
    def partition_default_name(self) -> str:
        return self.get("partition.default-name")

    @property
    def commit_max_retries(self) -> int:
        return self.get("commit.max-retries")
