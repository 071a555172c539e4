"""A format table's options: Paimon's names (CoreOptions, FormatTableOptions, CsvOptions,
JsonOptions), each mapped to the option of Spark's reader and writer that does the same, and the
checks that refuse what a directory of plain files cannot honour (:mod:`paimon_sql.table.format_table`).

Kept with the file formats, below the schema, because a format table's schema is checked with them
at CREATE and after every ALTER (:meth:`TableSchema.check <paimon_sql.schema.table_schema.TableSchema.check>`).
"""

from __future__ import annotations

from typing import Dict, List, Mapping, Optional, Protocol

from paimon_sql.data.types import AtomicType, DataField
from paimon_sql.exceptions import InvalidOptionError, SchemaError
from paimon_sql.options import core_options as opts


class TableSchema(Protocol):
    """What the check reads of a format table's schema (schema.table_schema's, a layer above)."""

    fields: List[DataField]
    primary_keys: List[str]
    options: Dict[str, str]

FORMATS = ("csv", "parquet", "orc", "json")
DEFAULT_FORMAT = "parquet"  # CoreOptions file.format

# Paimon option (first: its key, then the fallback keys Paimon reads) -> (Spark option, default)
CSV_OPTIONS = {
    ("csv.field-delimiter", "field-delimiter"): ("sep", ","),
    ("csv.line-delimiter",): ("lineSep", "\n"),
    ("csv.quote-character",): ("quote", '"'),
    ("csv.escape-character",): ("escape", "\\"),
    ("csv.include-header",): ("header", "false"),
    ("csv.null-literal",): ("nullValue", ""),
    ("csv.mode",): ("mode", "PERMISSIVE"),
}
JSON_LINE_DELIMITER = "json.line-delimiter"  # Spark's lineSep
JSON_PARSE_ERRORS = "json.ignore-parse-errors"  # true: malformed lines dropped; false: the read fails
# JSON options Spark's maps make moot: a Spark map never has a null key
JSON_NULL_KEY_MODE, JSON_NULL_KEY_LITERAL = "json.map-null-key-mode", "json.map-null-key-literal"
COMPRESSION_KEYS = ("file.compression", "format-table.file.compression", "compression")  # CoreOptions' order
DEFAULT_COMPRESSION = {"parquet": "snappy", "orc": "zstd", "csv": "none", "json": "none"}
# the codecs Spark's writers have without native libraries
CODECS = {"parquet": ("none", "uncompressed", "snappy", "gzip", "zstd", "lz4", "lz4_raw"),
          "orc": ("none", "uncompressed", "snappy", "zlib", "zstd", "lz4"),
          "csv": ("none", "uncompressed", "gzip", "bzip2", "deflate", "snappy", "lz4"),
          "json": ("none", "uncompressed", "gzip", "bzip2", "deflate", "snappy", "lz4")}
CSV_MODES = ("PERMISSIVE", "DROPMALFORMED", "FAILFAST")  # CsvOptions.Mode, as Spark names them

# the options each format takes (any other Paimon option, or a csv/json one on another format, is refused)
_COMMON_KEYS = {"type", "file.format", *COMPRESSION_KEYS}
FORMAT_KEYS = {"parquet": _COMMON_KEYS, "orc": _COMMON_KEYS,
               "csv": _COMMON_KEYS | {k for keys in CSV_OPTIONS for k in keys},
               "json": _COMMON_KEYS | {JSON_LINE_DELIMITER, JSON_PARSE_ERRORS, JSON_NULL_KEY_MODE,
                                       JSON_NULL_KEY_LITERAL}}


def file_format(options: Mapping[str, str]) -> str:
    fmt = options.get("file.format", DEFAULT_FORMAT).strip().lower()
    if fmt not in FORMATS:
        raise InvalidOptionError(f"option 'file.format' of a format table must be one of {', '.join(FORMATS)}, "
                                 f"got {options.get('file.format')!r}")
    return fmt


def _first(options: Mapping[str, str], keys) -> Optional[str]:
    return next((options[k] for k in keys if k in options), None)


def compression(options: Mapping[str, str]) -> str:
    fmt = file_format(options)
    codec = (_first(options, COMPRESSION_KEYS) or DEFAULT_COMPRESSION[fmt]).strip().lower()
    if codec not in CODECS[fmt]:
        raise InvalidOptionError(f"compression '{codec}' is not supported for {fmt} format tables "
                                 f"(one of: {', '.join(CODECS[fmt])})")
    return codec


def _flag(options: Mapping[str, str], key: str) -> bool:
    text = options.get(key, "false").strip().lower()
    if text not in ("true", "false"):
        raise InvalidOptionError(f"option '{key}' must be true or false, got {options[key]!r}")
    return text == "true"


def spark_options(options: Mapping[str, str]) -> Dict[str, str]:
    """The options of Spark's reader and writer that do what the table's Paimon options say
    (checked: a value Spark cannot honour is refused)."""
    fmt = file_format(options)
    out = {"compression": compression(options)}
    if fmt == "csv":
        for keys, (name, default) in CSV_OPTIONS.items():
            out[name] = _first(options, keys) if _first(options, keys) is not None else default
        out["header"] = str(_flag(options, "csv.include-header")).lower()
        out["mode"] = out["mode"].strip().upper()
        if out["mode"] not in CSV_MODES:
            raise InvalidOptionError(f"option 'csv.mode' must be one of PERMISSIVE, DROPMALFORMED, FAILFAST, "
                                     f"got {out['mode']!r}")
        for key, name in (("csv.quote-character", "quote"), ("csv.escape-character", "escape"),
                          ("csv.line-delimiter", "lineSep")):
            if len(out[name]) != 1:
                raise InvalidOptionError(f"option '{key}' of a csv format table must be one character "
                                         f"(Spark's csv {name}), got {out[name]!r}")
        if not out["sep"]:
            raise InvalidOptionError("option 'csv.field-delimiter' of a csv format table cannot be empty")
    elif fmt == "json":
        out["lineSep"] = options.get(JSON_LINE_DELIMITER) or "\n"
        out["mode"] = "DROPMALFORMED" if _flag(options, JSON_PARSE_ERRORS) else "FAILFAST"
        mode = options.get(JSON_NULL_KEY_MODE, "FAIL").strip().upper()
        if mode not in ("FAIL", "DROP", "LITERAL"):
            raise InvalidOptionError(f"option 'json.map-null-key-mode' must be FAIL, DROP or LITERAL, got {mode!r}")
    return out


def check_options(options: Mapping[str, str], name: str) -> None:
    """Refuse what a format table cannot honour: a data-table option of Paimon's, an option of another
    file format, a value Spark's reader or writer cannot take."""
    fmt = file_format(options)
    registry, own = opts.registry(), FORMAT_KEYS[fmt]
    for key in options:
        paimons = key in registry or key.startswith(("csv.", "json.")) or key == "field-delimiter"
        if paimons and key not in own:
            raise InvalidOptionError(f"option '{key}' is not supported by {_article(fmt)} format table"
                                     f"{_named(name)} (plain files, read and written by Spark's own readers and "
                                     "writers)")
    spark_options(options)


def _article(fmt: str) -> str:
    return f"{'an' if fmt == 'orc' else 'a'} {fmt}"


def _named(name: str) -> str:
    return f" {name}" if name else ""


def check_schema(schema: TableSchema, name: str = "") -> None:
    """A format table's schema at CREATE: no primary key (as Paimon refuses one), its options as
    :func:`check_options` wants them, columns its file format can hold."""
    if schema.primary_keys:
        raise SchemaError(f"Cannot define primary-key for format table{_named(name)}")
    check_options(schema.options, name)
    fmt = file_format(schema.options)
    if fmt == "csv":
        bad = [f.name for f in schema.fields
               if not isinstance(f.type, AtomicType) or f.type.name in ("BINARY", "VARBINARY", "VARIANT")]
        if bad:
            raise SchemaError(f"a csv format table{_named(name)} cannot hold column(s) {', '.join(bad)} (nested or "
                              "binary types): use parquet, orc or json")
