"""How our data files are written: Paimon's settings, and Parquet dictionaries only where they pay.

Paimon writes zstd at ``file.compression.zstd-level`` (default 1) in every format; for Parquet
``parquet.compression.codec.zstd.level`` wins, as Paimon hands its ``parquet.*`` table options to
parquet-mr (``RowDataParquetBuilder``). parquet-mr pages hold 1 MB or 20,000 rows, each column
chunk carries a page index (column and offset index: each page's min/max and place, which lets a
reader skip the pages a filter rules out: Spark's, parquet-mr's and Paimon's readers do), and a
row group is cut at ``parquet.block.size`` (128 MB), so most files are one row group. A
column's dictionary (``parquet.enable.dictionary``, per column ``parquet.enable.dictionary#<col>``)
is kept only while it pays: after the first page it falls back to PLAIN unless the dictionary plus
the indexes are smaller than the plain values (FallbackValuesWriter), and it also falls back once
the dictionary outgrows its page (1 MB).

pyarrow dictionary-encodes every column unless told otherwise, which makes sorted keys, sequence
numbers and doubles 2-3x the bytes of parquet-mr's plain pages. So each file's first rows (as many
as parquet-mr's first page) decide the same test per column with Arrow kernels, and only the
columns it passes get a dictionary; pyarrow applies the dictionary page limit itself. Encodings
stay PLAIN and RLE_DICTIONARY, what parquet-mr's v1 writer produces and every Paimon reader reads.
"""

from __future__ import annotations

from typing import Dict, Iterator, List, Mapping, Tuple

import pyarrow as pa
import pyarrow.compute as pc

from paimon_sql.exceptions import InvalidOptionError
from paimon_sql.options.core_options import CoreOptions

_DICTIONARY = "parquet.enable.dictionary"
_ZSTD_LEVEL = "parquet.compression.codec.zstd.level"
# parquet-mr's key -> (pyarrow's ParquetWriter argument, parquet-mr's default)
_SIZES = {"parquet.page.size": ("data_page_size", 1 << 20),
          "parquet.dictionary.page.size": ("dictionary_pagesize_limit", 1 << 20),
          "parquet.page.row.count.limit": ("max_rows_per_page", 20_000)}
_BLOCK_SIZE = ("parquet.block.size", 128 << 20)  # a row group's bytes, cut by the file writer's caller
# parquet-mr's keys pyarrow's writer cannot follow: (parquet-mr's default, why not)
_REFUSED = {"parquet.writer.version": ("v1", "pages are written as parquet-mr's v1 writer writes them")}
_LEVELS = (-(1 << 17), 22)  # zstd's (ZSTD_minCLevel, ZSTD_maxCLevel)
_SAMPLE_ROWS = 20_000  # parquet-mr decides on its first page, of at most 20,000 rows


def _hadoop_int(options: Mapping[str, str], key: str, default: int) -> int:
    """Hadoop's ``Configuration.getInt``, but a value it cannot parse is an error, not ignored."""
    if key not in options:
        return default
    try:
        value = int(str(options[key]).strip())
    except ValueError:
        raise InvalidOptionError(f"option '{key}' expects an integer, got {options[key]!r}") from None
    if value < 1 and key != _ZSTD_LEVEL:
        raise InvalidOptionError(f"option '{key}' must be at least 1, got {options[key]!r}")
    return value


def zstd_level(options: Mapping[str, str]) -> int:
    """``file.compression.zstd-level`` (its rule keeps it within zstd's levels)."""
    return CoreOptions(options).checked("file.compression.zstd-level")


def parquet_writer_args(options: Mapping[str, str], codec: str) -> Dict[str, object]:
    """pyarrow ``ParquetWriter`` arguments for a table's options (its ``file.compression`` codec
    ``codec``), as Paimon configures parquet-mr; ``use_dictionary`` is decided per file."""
    for key, (default, why) in _REFUSED.items():
        if str(options.get(key, default)).strip().lower() != default:
            raise InvalidOptionError(f"option '{key}' is not supported by paimon-sql ({why})")
    asked = str(options.get("parquet.compression", codec)).strip().lower()
    if {"uncompressed": "none"}.get(asked, asked) != codec:
        raise InvalidOptionError("option 'parquet.compression' is not supported by paimon-sql "
                                 "(data files are written with 'file.compression')")
    out: Dict[str, object] = {arg: _hadoop_int(options, key, default) for key, (arg, default) in _SIZES.items()}
    out["write_page_index"] = True
    if codec == "zstd":
        level = _hadoop_int(options, _ZSTD_LEVEL, zstd_level(options))
        if not _LEVELS[0] <= level <= _LEVELS[1]:
            raise InvalidOptionError(f"option '{_ZSTD_LEVEL}' must be between {_LEVELS[0]} and {_LEVELS[1]}, "
                                     f"got {options[_ZSTD_LEVEL]!r}")
        out["compression_level"] = level
    return out


def row_group_bytes(options: Mapping[str, str]) -> int:
    """The bytes of the file at which a Parquet row group is cut: ``file.block-size`` when set (Paimon
    sets ``parquet.block.size`` from it), else ``parquet.block.size``."""
    if "file.block-size" in options:
        return CoreOptions(options).checked("file.block-size")
    return _hadoop_int(options, *_BLOCK_SIZE)


def orc_stripe_bytes(options: Mapping[str, str]) -> int:
    """An ORC stripe's bytes: ``file.block-size`` when set (Paimon sets ``orc.stripe.size`` from
    it), else ORC's 64 MB."""
    if "file.block-size" in options:
        return CoreOptions(options).checked("file.block-size")
    return 64 << 20


def _enabled(options: Mapping[str, str], path: str) -> bool:
    """Whether a column may have a dictionary: ``parquet.enable.dictionary#<path>`` (its dotted
    Parquet path), else ``parquet.enable.dictionary`` (default true), read as parquet-mr reads them."""
    key = f"{_DICTIONARY}#{path}"
    if key in options:
        return str(options[key]).strip().lower() == "true"  # Hadoop's getBoolean(key, false)
    return str(options.get(_DICTIONARY, "true")).strip().lower() != "false"


def _leaves(path: str, values: pa.Array) -> Iterator[Tuple[str, pa.Array]]:
    """(Parquet column path, values) of each leaf column under ``values``, named as pyarrow's
    writer names them (compliant nested types: ``a.list.element``, ``m.key_value.key``)."""
    t = values.type
    if pa.types.is_struct(t):
        for i in range(t.num_fields):
            yield from _leaves(f"{path}.{t.field(i).name}", values.field(i))
    elif pa.types.is_map(t):
        yield from _leaves(f"{path}.key_value.key", values.keys)
        yield from _leaves(f"{path}.key_value.value", values.items)
    elif pa.types.is_list(t) or pa.types.is_large_list(t):
        yield from _leaves(f"{path}.list.element", values.flatten())
    else:
        yield path, values


def _width(t: pa.DataType) -> int:
    """Bytes of one plain-encoded value of a fixed-width Arrow type in the file."""
    if pa.types.is_decimal(t):  # stored as Java Paimon stores them (file_format's docstring)
        return 4 if t.precision <= 9 else 8 if t.precision <= 18 else next(
            n for n in range(1, 33) if 2 ** (8 * n - 1) > 10 ** t.precision)
    return max(4, t.bit_width // 8)  # INT8 and INT16 are INT32 in Parquet


def _pays(values: pa.Array) -> bool:
    """parquet-mr's test after its first page: dictionary bytes + index bytes < plain bytes."""
    t = values.type
    if pa.types.is_boolean(t) or pa.types.is_null(t):
        return False  # neither writer gives these a dictionary
    present = values.drop_null()
    n = len(present)
    if n == 0:
        return False
    distinct = pc.unique(present)
    ndv = len(distinct)
    indexes = n * max(1, (ndv - 1).bit_length()) // 8
    if pa.types.is_binary(t) or pa.types.is_string(t) or pa.types.is_large_binary(t) or \
            pa.types.is_large_string(t):
        plain = pc.sum(pc.binary_length(present)).as_py() + 4 * n
        dictionary = pc.sum(pc.binary_length(distinct)).as_py() + 4 * ndv
        return dictionary + indexes < plain
    width = t.byte_width if pa.types.is_fixed_size_binary(t) else _width(t)
    return ndv * width + indexes < n * width


def dictionary_columns(options: Mapping[str, str], first: pa.Table) -> List[str]:
    """The Parquet column paths that get a dictionary in a file whose first rows are ``first``."""
    head = first.slice(0, _SAMPLE_ROWS)
    out = []
    for name, column in zip(head.column_names, head.columns):
        values = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
        out += [path for path, leaf in _leaves(name, values) if _enabled(options, path) and _pays(leaf)]
    return out
