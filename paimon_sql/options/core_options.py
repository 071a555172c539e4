"""Paimon's options: every key of CoreOptions and of the other option classes a Spark user may give,
typed, with its default — declared once.

The registry is ``core_options.tsv`` (key, Java type, Java default expression), extracted from
Apache Paimon's ``CoreOptions.java``, plus a fourth column of ours: the rule a value must keep so
that the table stays writable (``range 1..``, ``one-of a|b``, ``codec``, ``column(s)``; see
:func:`_rule`). Values are strings on disk (schema JSON ``options``); this module parses them by
their declared type and checks their rules. Unknown keys (engine or user keys) are kept as they
are, but ``fields.<columns>.<suffix>`` keys must name columns of the table. A value that does not
parse or breaks its rule is an :class:`InvalidOptionError` naming the key and what is allowed.

The other classes' keys (catalog, Spark read/write, file format, index and Iceberg options) are
``paimon_options.tsv`` (class, scope, key, type, default, description), generated from Paimon's
source by ``scripts/options_extract.py``. Table- and Spark-scope keys join CoreOptions' in
:func:`registry` (they are given the same ways: WITH, TBLPROPERTIES, hints, DataFrame and session
options); catalog-scope keys are :func:`catalog_registry`'s, checked by :func:`validate_catalog`.

What paimon-sql does with each key is ``option_support.tsv`` (:class:`Support`): an option we do not
honour is refused at a value other than its default, wherever options are validated (CREATE, ALTER,
hints, DataFrame and session options), never accepted and silently ignored; a table that already
carries one (written by Java or Flink) is refused where the option matters (:func:`check_usable`).

Values of keys that look secret (:func:`redact`) are masked wherever options are shown.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple

from paimon_sql.exceptions import InvalidOptionError

_MEM_UNITS = {"": 1, "b": 1, "bytes": 1, "k": 1 << 10, "kb": 1 << 10, "kib": 1 << 10, "m": 1 << 20, "mb": 1 << 20,
              "mib": 1 << 20, "g": 1 << 30, "gb": 1 << 30, "gib": 1 << 30, "t": 1 << 40, "tb": 1 << 40}
_DUR_UNITS = {"ms": 1, "milli": 1, "millis": 1, "millisecond": 1, "milliseconds": 1, "s": 1000, "sec": 1000,
              "secs": 1000, "second": 1000, "seconds": 1000, "min": 60000, "m": 60000, "minute": 60000,
              "minutes": 60000, "h": 3600000, "hour": 3600000, "hours": 3600000, "d": 86400000,
              "day": 86400000, "days": 86400000}

# Codecs our writers produce faithfully, per file format (format/file_format.py for data files,
# format/manifest.py for manifests, which are Avro); Spark's native Parquet writer fails on brotli.
COMPRESSION_CODECS: Dict[str, Tuple[str, ...]] = {
    "parquet": ("none", "uncompressed", "snappy", "gzip", "lz4", "zstd"),
    "orc": ("none", "uncompressed", "snappy", "zlib", "lz4", "zstd"),
    "avro": ("none", "uncompressed", "snappy", "deflate", "zstd"),
}

# Spark's spark.redaction.regex default (secret|password|token|access.key), also matching the '-'/'_'
# spellings (s3.access-key), storage account, private and API keys (fs.azure.account.key.<account>,
# fs.gs.auth.service.account.private.key[.id]), Azure SAS keys (fs.azure.sas.<container>.<account>) and
# HTTP authorization headers (a REST catalog's header.Authorization)
SECRET_KEY = re.compile(r"secret|passw(?:or)?d|token|(?:access|account|private|api)[._-]?key|(?:^|[._-])sas(?:[._-]|$)"
                        r"|authorization", re.IGNORECASE)
# the secret part of a value that is a URI: a password parameter (jdbc:...?password=x) or user info (http://u:x@h)
SECRET_IN_URI = re.compile(r"(?i)(?<![\w.-])(?:password|passwd|pwd|secret|token)=([^&;\s'\"]+)"
                           r"|//[^/:@\s'\"]*:([^/@\s'\"]+)@")
# a key = value pair as a statement writes it: 'k' = 'v' (WITH, TBLPROPERTIES, OPTIONS), k=v (a CALL's options)
# (an unquoted key starts where a word starts and is taken whole: linear in a long word, not quadratic)
_WRITTEN_PAIR = re.compile(r"""(['"`])([^'"`]+)\1\s*=\s*(['"])(.*?)\3|(?<![\w.-])([\w.-]++)\s*=\s*([^,'"\s)]+)""")
# SET k = v, whose value runs to the statement's end; map('k', 'v', ...) (a CALL's options as a map)
_SET_PAIR = re.compile(r"\s*SET\s+`?([^=`\s]+)`?\s*=\s*(.*?)[\s;]*", re.IGNORECASE | re.DOTALL)
_MAP_ARGUMENTS = re.compile(r"\bmap\s*\(([^()]*)\)", re.IGNORECASE)
_ARGUMENT_PAIR = re.compile(r"""(['"])(.*?)\1\s*,\s*(['"])(.*?)\3""")
MASK = "******"
PARTITIONED_IN_METASTORE = "metastore.partitioned-table"  # its partitions are kept by a metastore too


def table_type(options: Mapping[str, str]) -> str:
    """The option ``type`` (Paimon's TableType): table, format-table, object-table or materialized-table."""
    return options.get("type", "table").strip().lower()


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


def _bounded_int(bits: int):
    """Java's ``int``/``long``: a value past the bounds is an error here, not an overflow later."""
    def parse(text: str) -> int:
        value = int(text)
        if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
            raise ValueError(f"out of the {bits}-bit range")
        return value
    return parse


_PARSERS = {
    "Boolean": _parse_bool,
    "Integer": _bounded_int(32),
    "Long": _bounded_int(64),
    "Double": float,
    "Float": float,
    "String": str,
    "MemorySize": parse_memory_size,
    "Duration": parse_duration_ms,
    "Map<String, String>": _parse_map,
}


# -- rules: what a value must keep (the TSV's fourth column) -----------------------------------

@dataclass(frozen=True)
class _Context:
    """What a rule may look at besides the value: all options, and the table's columns (None when
    the check is not about a table, e.g. a value alone)."""
    options: Mapping[str, str]
    columns: Optional[Sequence[str]]


def _number_text(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else str(x)


@dataclass(frozen=True)
class Range:
    """Numbers allowed: single values and closed intervals, a missing bound open (``-1|1..2147483647``)."""
    intervals: Tuple[Tuple[Optional[float], Optional[float]], ...]

    @staticmethod
    def of(arg: str) -> "Range":
        def bound(text: str) -> Optional[float]:
            return float(text) if text else None
        parts = [p.partition("..") for p in arg.split("|")]
        return Range(tuple((bound(lo), bound(hi) if sep else bound(lo)) for lo, sep, hi in parts))

    def problem(self, value, ctx: _Context) -> Optional[str]:
        if any((lo is None or value >= lo) and (hi is None or value <= hi) for lo, hi in self.intervals):
            return None
        return "must be " + " or ".join(self._text(lo, hi) for lo, hi in self.intervals)

    @staticmethod
    def _text(lo: Optional[float], hi: Optional[float]) -> str:
        if lo == hi:
            return _number_text(lo)
        if hi is None:
            return f"at least {_number_text(lo)}"
        return f"between {_number_text(lo)} and {_number_text(hi)}"


@dataclass(frozen=True)
class OneOf:
    """A closed set of words (Paimon's enums print lower-case with dashes)."""
    values: Tuple[str, ...]

    @staticmethod
    def of(arg: str) -> "OneOf":
        return OneOf(tuple(arg.split("|")))

    def problem(self, value, ctx: _Context) -> Optional[str]:
        return None if str(value).strip().lower() in self.values else f"must be one of {', '.join(self.values)}"


@dataclass(frozen=True)
class Codec:
    """A compression codec our writers produce for ``fmt`` (None: the table's ``file.format``)."""
    fmt: Optional[str]

    @staticmethod
    def of(arg: str) -> "Codec":
        return Codec(arg or None)

    def problem(self, value, ctx: _Context) -> Optional[str]:
        fmt = self.fmt or str(ctx.options.get("file.format", registry()["file.format"].default)).lower()
        codecs = COMPRESSION_CODECS.get(fmt)  # an unknown format is file.format's own error
        if codecs is None or str(value).strip().lower() in codecs:
            return None
        return f"must be one of the {fmt} codecs {', '.join(codecs)}"


@dataclass(frozen=True)
class ZstdLevel:
    """A zstd level within ``levels`` for Parquet and Avro files; ORC files keep Paimon's default
    (1), as pyarrow's ORC writer takes no level."""
    levels: Range

    @staticmethod
    def of(arg: str) -> "ZstdLevel":
        return ZstdLevel(Range.of(arg))

    def problem(self, value, ctx: _Context) -> Optional[str]:
        fmt = str(ctx.options.get("file.format", registry()["file.format"].default)).lower()
        if fmt == "orc" and value != 1:
            return "must be 1 for orc files (pyarrow's ORC writer takes no zstd level)"
        return self.levels.problem(value, ctx)


def _names(text: str) -> List[str]:
    return [n.strip() for n in str(text).split(",")]


@dataclass(frozen=True)
class Columns:
    """The value names columns of the table (``many``: a comma-separated list), each once."""
    many: bool

    def names(self, value: str) -> List[str]:
        return _names(value) if self.many else [str(value).strip()]

    def problem(self, value, ctx: _Context) -> Optional[str]:
        names = self.names(value)
        twice = sorted({n for n in names if names.count(n) > 1})
        return _unknown_columns(names, ctx) or (f"names column(s) {', '.join(twice)} more than once" if twice
                                                else None)


def _unknown_columns(names: List[str], ctx: _Context) -> Optional[str]:
    missing = [n for n in names if ctx.columns is not None and n not in ctx.columns]
    return f"names unknown column(s) {', '.join(missing)} (columns: {', '.join(ctx.columns)})" if missing else None


_RULE_KINDS = {"range": Range.of, "one-of": OneOf.of, "codec": Codec.of, "zstd-level": ZstdLevel.of,
               "column": lambda arg: Columns(False), "columns": lambda arg: Columns(True)}


def _rule(text: str):
    """``<kind> [argument][; note]`` from the TSV → (rule, note); (None, "") for an empty column."""
    rule, _, note = text.partition(";")
    kind, _, arg = rule.strip().partition(" ")
    return (_RULE_KINDS[kind](arg.strip()) if kind else None), note.strip()


# -- support: what paimon-sql does with an option (option_support.tsv) -------------------------

HONOURED, REFUSED, ENGINE_TUNING, STREAMING = "honoured", "refused", "engine-tuning", "streaming/flink-only"
ENGINE_ONLY = "engine-only"  # another class's key that only sets Java/Spark/Flink machinery: accepted, no effect
CATALOG = "catalog"  # the scope of a refused catalog option
# a refused option stored in a table (written by Java/Flink) stops these uses of the table
SCOPE_USES = {"read": ("read", "written"), "write": ("written",)}


@dataclass(frozen=True)
class Support:
    """One row of option_support.tsv. ``status``: honoured (code and a test show its effect),
    refused (a value other than the default is an error), engine-tuning or streaming/flink-only
    (kept for Java/Flink, no effect on what a table holds or a query returns), engine-only (the same
    for the other classes' keys). ``scope`` (refused only): ``read`` when rows must be read or
    merged differently under the option (reading would give wrong answers), ``write`` when only
    writing is affected, ``catalog`` for a catalog option. ``note``: for honoured options the test
    showing the effect, for refused ones why."""
    status: str
    scope: str = ""
    note: str = ""

    def refusal(self, key: str) -> str:
        kind = "catalog option" if self.scope == CATALOG else "option"
        return f"{kind} '{key}' is not supported by paimon-sql ({self.note})"


@dataclass(frozen=True)
class OptionSpec:
    key: str
    java_type: str
    default: Any  # already parsed; None when the option has no default
    rule: Any = None  # Range | OneOf | Codec | Columns, or None
    note: str = ""  # said when the rule refuses a value (why a value Paimon knows is not ours)
    support: Support = Support(HONOURED)  # from option_support.tsv
    option_class: str = "CoreOptions"  # the Paimon class declaring the key
    description: str = ""  # Paimon's, for the other classes' keys (CoreOptions': Paimon's docs)

    def parse(self, text: str) -> Any:
        try:
            if self.java_type in _PARSERS:
                return _PARSERS[self.java_type](text)
            return str(text).strip().lower()
        except ValueError as e:
            raise InvalidOptionError(
                f"option '{self.key}' expects a {self.java_type} value, got {text!r} ({e})") from None

    def check(self, text: str, ctx: _Context) -> Any:
        """The parsed value, once paimon-sql honours it and it keeps the rule."""
        value = self.parse(text)
        if self.refuses(value):
            raise InvalidOptionError(self.support.refusal(self.key))
        problem = self.rule.problem(value, ctx) if self.rule is not None else None
        if problem:
            note = f" ({self.note})" if self.note else ""
            raise InvalidOptionError(f"option '{self.key}' {problem}, got {text!r}{note}")
        return value

    def refuses(self, value: Any) -> bool:
        """Whether ``value`` (parsed) is one paimon-sql would silently ignore: a refused option's
        value other than its default."""
        return self.support.status == REFUSED and value != self.default


def _java_default(java_type: str, expr: str) -> Any:
    expr = expr.strip()
    if expr == "(none)":
        return None
    if expr.startswith('"') and expr.endswith('"'):
        raw = bytes(expr[1:-1], "utf-8").decode("unicode_escape")  # Java's escapes: "\\n", "\\""
        return _PARSERS.get(java_type, str)(raw) if java_type in ("MemorySize", "Duration") else raw
    if expr in ("Integer.MAX_VALUE", "Long.MAX_VALUE"):
        return (1 << 31) - 1 if expr.startswith("Integer") else (1 << 63) - 1
    if expr == "Integer.MIN_VALUE":
        return -(1 << 31)
    m = re.fullmatch(r"(?:CoreOptions\.)?FILE_FORMAT_([A-Z]+)", expr)
    if m:
        return m.group(1).lower()
    if expr == "Catalog.DEFAULT_DATABASE":
        return "default"
    if expr.startswith("new HashMap"):
        return {}
    m = re.fullmatch(r"TimeUnit\.(SECONDS|MINUTES|HOURS)\.toMillis\((\d+)\)", expr)
    if m:
        return int(m.group(2)) * {"SECONDS": 1000, "MINUTES": 60000, "HOURS": 3600000}[m.group(1)]
    m = re.fullmatch(r"Duration\.of(Millis|Seconds|Minutes|Hours|Days)\((\d+)\)", expr)
    if m:
        return int(m.group(2)) * {"Millis": 1, "Seconds": 1000, "Minutes": 60000, "Hours": 3600000,
                                  "Days": 86400000}[m.group(1)]
    m = re.fullmatch(r'MemorySize\.parse\("([^"]+)"\)', expr)
    if m:
        return parse_memory_size(m.group(1))
    m = re.fullmatch(r"(?:MemorySize\.)?of(MebiBytes|KibiBytes|Bytes)\((\d+)\)", expr)
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


def _tsv_rows(name: str) -> Iterable[List[str]]:
    """The tab-separated rows of a file next to this module (``#`` lines are comments)."""
    with open(os.path.join(os.path.dirname(__file__), name), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                yield line.rstrip("\n").split("\t")


@lru_cache(maxsize=1)
def _support() -> Dict[str, Support]:
    return {key: Support(*rest) for key, *rest in _tsv_rows("option_support.tsv")}


def key_prefixes() -> Dict[str, Support]:
    """option_support.tsv's rows for keys Paimon reads by a prefix (``metadata.iceberg.rest.*``),
    which no option class declares one by one."""
    return {key: s for key, s in _support().items() if key.endswith(".*")}


def own_keys() -> Dict[str, Support]:
    """option_support.tsv's rows for paimon-sql's own keys, which no Paimon option class declares
    (Java ignores them): each is parsed and checked where it is read (``metadata.iceberg.*``'s by
    iceberg_options.py, at CREATE and ALTER too)."""
    paimon = {*registry(), *catalog_registry()}
    return {key: s for key, s in _support().items() if key not in paimon and not key.endswith(".*")}


@lru_cache(maxsize=1)
def other_options() -> Dict[str, Dict[str, OptionSpec]]:
    """Scope (``table``, ``spark``, ``catalog``) → key → spec of the keys of Paimon's option classes
    other than CoreOptions (paimon_options.tsv); a key two classes declare (``uri``) is the first's."""
    support, out = _support(), {}
    for cls, scope, key, java_type, default, description in _tsv_rows("paimon_options.tsv"):
        out.setdefault(scope, {}).setdefault(key, OptionSpec(
            key, java_type, _java_default(java_type, default), support=support[key], option_class=cls,
            description=description))
    return out


def class_keys() -> Dict[Tuple[str, str], List[str]]:
    """(class, scope) → its keys, in paimon_options.tsv's order (a key two classes declare under both)."""
    out: Dict[Tuple[str, str], List[str]] = {}
    for cls, scope, key, *_ in _tsv_rows("paimon_options.tsv"):
        out.setdefault((cls, scope), []).append(key)
    return out


@lru_cache(maxsize=1)
def registry() -> Dict[str, OptionSpec]:
    """The keys a table or a read or write may carry → spec: CoreOptions' (core_options.tsv), then
    the table- and Spark-scope keys of the other classes, with what paimon-sql does with each
    (option_support.tsv)."""
    support = _support()
    specs = {}
    for key, java_type, default, *rule in _tsv_rows("core_options.tsv"):
        specs[key] = OptionSpec(key, java_type, _java_default(java_type, default), *_rule(rule[0] if rule else ""),
                                support=support[key])
    for scope in ("table", "spark"):
        specs.update((k, spec) for k, spec in other_options().get(scope, {}).items() if k not in specs)
    return specs


def catalog_registry() -> Dict[str, OptionSpec]:
    """The keys of Paimon's catalog option classes → spec."""
    return other_options()["catalog"]


@lru_cache(maxsize=1)
def _spellings() -> Dict[str, str]:
    return {k.lower(): k for k in (*catalog_registry(), *registry())}


def as_paimon_spells(options: Mapping[str, Any]) -> Dict[str, Any]:
    """``options`` with each known key spelled as Paimon spells it: Spark lower-cases the keys of
    DataFrame options (``read.allow.fullscan``), which would otherwise match no key and be ignored."""
    spellings = _spellings()
    return {spellings.get(k.lower(), k): v for k, v in options.items()}


def validate_catalog(options: Mapping[str, str]) -> None:
    """Refuse a catalog option paimon-sql would silently ignore (a refused key at a value other
    than its default), in one line naming it; other keys (storage options, unknown keys) pass."""
    specs = catalog_registry()
    for key, text in options.items():
        spec = specs.get(key)
        if spec is not None and spec.support.status == REFUSED and spec.refuses(spec.parse(text)):
            raise InvalidOptionError(spec.support.refusal(key))


# ``fields.<c1,c2>.<suffix>``: the key names columns (aggregate-function, ignore-retract, sequence-group...)
_FIELD_KEY = re.compile(r"fields\.(?P<columns>.+)\.(?P<suffix>[a-z][a-z\-]*)")
_SUFFIXES_NAMING_COLUMNS = ("sequence-group",)  # ... and these name columns in their value too


def _field_key(key: str) -> Optional[Tuple[List[str], str]]:
    """``fields.<c1,c2>.<suffix>`` → ([c1, c2], suffix); None for other keys."""
    m = _FIELD_KEY.fullmatch(key)
    return (_names(m.group("columns")), m.group("suffix")) if m else None


def _value_names_columns(key: str) -> bool:
    """Whether an option's value lists columns (a column rule, or a sequence group)."""
    spec, field = registry().get(key), _field_key(key)
    if spec is not None:
        return isinstance(spec.rule, Columns)
    return field is not None and field[1] in _SUFFIXES_NAMING_COLUMNS


def _named_columns(key: str, value: str) -> List[str]:
    """The columns an option names, in its key and in its value."""
    field = _field_key(key)
    return (field[0] if field else []) + (_names(value) if _value_names_columns(key) else [])


def validate(options: Mapping[str, str], columns: Optional[Sequence[str]] = None,
             keys: Optional[Iterable[str]] = None) -> None:
    """Raise InvalidOptionError for the first option that does not parse or breaks its rule.

    ``columns``: the table's column names, so that options naming columns are checked (None: they
    are not). ``keys``: check only these (a statement's own, e.g. a hint's), judged along with all
    of ``options`` (a codec by the table's file format)."""
    ctx = _Context(options, columns)
    specs = registry()
    wanted = set(options if keys is None else keys)
    for k in (k for k in options if k in wanted):
        if k in specs:
            specs[k].check(options[k], ctx)
        elif _field_key(k):
            problem = _unknown_columns(_named_columns(k, options[k]), ctx)
            if problem:
                raise InvalidOptionError(f"option '{k}' {problem}")


def check_usable(options: Mapping[str, str], use: str) -> None:
    """Refuse to use a table (``use``: ``read`` or ``written``) whose stored options hold a value we
    would silently ignore there (a table written by Java or Flink): reads stop on refused options of
    read scope, writes on any refused option."""
    specs = registry()
    for k, text in options.items():
        spec = specs.get(k)
        if spec is not None and use in SCOPE_USES.get(spec.support.scope, ()) and spec.refuses(spec.parse(text)):
            raise InvalidOptionError(f"{spec.support.refusal(k)}: the table cannot be {use} here")


def options_naming(options: Mapping[str, str], column: str) -> List[str]:
    """Keys of the options that name ``column`` (it cannot be dropped while they do)."""
    return [k for k, v in options.items() if column in _named_columns(k, v)]


def rename_column(options: Mapping[str, str], old: str, new: str) -> Dict[str, str]:
    """``options`` with column ``old`` called ``new`` wherever an option names it, in keys and
    values (Paimon's SchemaManager renames bucket-key, sequence.field and ``fields.*`` alike)."""
    def swap(names: List[str]) -> str:
        return ",".join(new if n == old else n for n in names)
    out = {}
    for k, v in options.items():
        field = _field_key(k)
        value = swap(_names(v)) if _value_names_columns(k) else v
        out[f"fields.{swap(field[0])}.{field[1]}" if field else k] = value
    return out


def redact(options: Mapping[str, Any]) -> Dict[str, Any]:
    """``options`` as shown to users: the value of every key that looks secret masked (Spark's
    redaction rule), and the password or user info of a URI value, so that SHOW/DESCRIBE and
    system tables never print credentials."""
    return {k: MASK if SECRET_KEY.search(k) else _masked_uri(v) for k, v in options.items()}


def _masked_uri(value: Any) -> Any:
    if not isinstance(value, str):
        return value
    return SECRET_IN_URI.sub(lambda m: m.group(0).replace(m.group(1) or m.group(2), MASK), value)


def secret_values(statement: str) -> List[str]:
    """The credentials a statement writes: the values of its secret-looking keys and the secret parts
    of URIs in it, longest first (what :func:`scrub` takes out of an error about the statement)."""
    found = {m.group(4) if m.group(2) else m.group(6) for m in _WRITTEN_PAIR.finditer(statement)
             if SECRET_KEY.search(m.group(2) or m.group(5))}
    found |= {m.group(1) or m.group(2) for m in SECRET_IN_URI.finditer(statement)}
    found |= {m.group(4) for args in _MAP_ARGUMENTS.finditer(statement)
              for m in _ARGUMENT_PAIR.finditer(args.group(1)) if SECRET_KEY.search(m.group(2))}
    setting = _SET_PAIR.fullmatch(statement)
    if setting and SECRET_KEY.search(setting.group(1)):
        found.add(setting.group(2))
    return sorted((v for v in found if v), key=len, reverse=True)


def scrub(message: str, statement: str) -> str:
    """``message`` (an error about ``statement``) with every credential the statement writes masked:
    an error may quote any part of the statement (a syntax error its token, a CALL its arguments)."""
    for value in secret_values(statement):
        message = message.replace(value, MASK)
    return message


class CoreOptions:
    """Typed view over a table's string options. Attributes name the options the core uses."""

    def __init__(self, options: Mapping[str, str]):
        self.raw: Dict[str, str] = dict(options)

    def checked(self, key: str) -> Any:
        """The value of a known key once it keeps its rule: for code that would misbehave on a
        value stored before the rule existed (a loop that cannot progress)."""
        spec = registry()[key]
        return spec.check(self.raw[key], _Context(self.raw, None)) if key in self.raw else spec.default

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
