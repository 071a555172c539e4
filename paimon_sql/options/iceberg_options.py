"""The ``metadata.iceberg.*`` options (Paimon's IcebergOptions), parsed and checked in one place.

They live beside the core options because ``TableSchema.check`` (CREATE, ALTER) must refuse a value
we cannot honour before any table holds it, and the schema sits below the ``iceberg`` package that
writes the metadata. What paimon-sql builds: ``table-location`` and ``hadoop-catalog`` storage,
Iceberg format versions 2 and 3 (3 with deletion vectors). Hive and REST catalogs and their
connection options are refused in one line each, never accepted and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from paimon_sql.exceptions import InvalidOptionError

PREFIX = "metadata.iceberg."
STORAGE = "metadata.iceberg.storage"
STORAGE_LOCATION = "metadata.iceberg.storage-location"
FORMAT_VERSION = "metadata.iceberg.format-version"
COMPACT_MIN_FILES = "metadata.iceberg.compaction.min.file-num"
COMPACT_MAX_FILES = "metadata.iceberg.compaction.max.file-num"
DELETE_AFTER_COMMIT = "metadata.iceberg.delete-after-commit.enabled"
PREVIOUS_VERSIONS_MAX = "metadata.iceberg.previous-versions-max"
MANIFEST_COMPRESSION = "metadata.iceberg.manifest-compression"
MANIFEST_LEGACY_VERSION = "metadata.iceberg.manifest-legacy-version"

STORAGE_TYPES = ("disabled", "table-location", "hadoop-catalog", "hive-catalog", "rest-catalog")
BUILT_STORAGE = ("table-location", "hadoop-catalog")
TABLE_LOCATION, CATALOG_LOCATION = "table-location", "catalog-location"
# manifest compression → fastavro codec (Java writes Avro with the codec of the same name)
CODECS = {"snappy": "snappy", "zstd": "zstandard", "zstandard": "zstandard", "deflate": "deflate",
          "none": "null", "null": "null", "uncompressed": "null"}
# the Hive / Glue catalog's options, with Java's defaults: only for hive-catalog storage, not built
CATALOG_ONLY = {"metadata.iceberg.uri": None, "metadata.iceberg.hive-conf-dir": None,
                "metadata.iceberg.hadoop-conf-dir": None,
                "metadata.iceberg.hive-client-class": "org.apache.hadoop.hive.metastore.HiveMetaStoreClient",
                "metadata.iceberg.database": None, "metadata.iceberg.table": None,
                "metadata.iceberg.glue.skip-archive": "false", "metadata.iceberg.hive-skip-update-stats": "false"}
REST_PREFIX = "metadata.iceberg.rest."


@dataclass(frozen=True)
class IcebergOptions:
    storage: str
    location: str  # where the metadata directory is: table-location or catalog-location
    format_version: int
    compaction_min_files: int
    compaction_max_files: int
    delete_after_commit: bool
    previous_versions_max: int
    codec: str  # fastavro's name of the manifests' codec
    legacy_manifest: bool


def _refused(key: str, why: str) -> InvalidOptionError:
    return InvalidOptionError(f"option '{key}' is not supported by paimon-sql ({why})")


def _int(options: Mapping[str, str], key: str, default: int) -> int:
    text = options.get(key)
    try:
        return default if text is None else int(str(text).strip())
    except ValueError:
        raise InvalidOptionError(f"option '{key}' expects an Integer value, got {text!r}") from None


def _bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    text = options.get(key)
    if text is None:
        return default
    value = str(text).strip().lower()
    if value not in ("true", "false"):
        raise InvalidOptionError(f"option '{key}' expects a Boolean value, got {text!r}")
    return value == "true"


def _choice(options: Mapping[str, str], key: str, allowed, default: Optional[str]) -> Optional[str]:
    text = options.get(key)
    if text is None:
        return default
    value = str(text).strip().lower()
    if value not in allowed:
        raise InvalidOptionError(f"option '{key}' expects one of {', '.join(allowed)}, got {text!r}")
    return value


def iceberg_options(options: Mapping[str, str]) -> Optional[IcebergOptions]:
    """The table's Iceberg options; None when ``metadata.iceberg.storage`` is disabled. A value
    paimon-sql does not build is refused in one line (also when storage is disabled: the user
    set it for an effect)."""
    for key, default in CATALOG_ONLY.items():
        if key in options and (default is None or str(options[key]).strip().lower() != default.lower()):
            raise _refused(key, "Iceberg metadata is not registered in a Hive or Glue metastore: hive-catalog "
                                "storage is not built")
    rest = sorted(k for k in options if k.startswith(REST_PREFIX))
    if rest:
        raise _refused(rest[0], "Iceberg metadata is not committed to a REST catalog: rest-catalog storage is not built")
    storage = _choice(options, STORAGE, STORAGE_TYPES, "disabled")
    if storage in ("hive-catalog", "rest-catalog"):
        raise _refused(STORAGE, f"{storage} storage is not built; table-location and hadoop-catalog are")
    default_location = TABLE_LOCATION if storage == "table-location" else CATALOG_LOCATION
    location = _choice(options, STORAGE_LOCATION, (TABLE_LOCATION, CATALOG_LOCATION), default_location)
    version = _int(options, FORMAT_VERSION, 2)
    if version not in (2, 3):
        raise InvalidOptionError(f"option '{FORMAT_VERSION}' expects 2 or 3, got {options[FORMAT_VERSION]!r}")
    compression = _choice(options, MANIFEST_COMPRESSION, tuple(CODECS), "snappy")
    parsed = IcebergOptions(storage, location, version, _int(options, COMPACT_MIN_FILES, 10),
                            _int(options, COMPACT_MAX_FILES, 50), _bool(options, DELETE_AFTER_COMMIT, True),
                            _int(options, PREVIOUS_VERSIONS_MAX, 0), CODECS[compression],
                            _bool(options, MANIFEST_LEGACY_VERSION, False))
    return None if storage == "disabled" else parsed
