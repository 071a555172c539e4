"""The ``metadata.iceberg.*`` options (Paimon's IcebergOptions), parsed and checked in one place.

They live beside the core options because ``TableSchema.check`` (CREATE, ALTER) must refuse a value
we cannot honour before any table holds it, and the schema sits below the ``iceberg`` package that
writes the metadata. What paimon-sql builds: ``table-location``, ``hadoop-catalog`` and
``hive-catalog`` storage (its metastore options: :func:`hive_options`), Iceberg format versions 2
and 3 (3 with deletion vectors). The REST catalog and its connection options are refused in one
line each, never accepted and ignored.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional, Tuple
from urllib.parse import urlparse

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
HIVE_CATALOG = "hive-catalog"
TABLE_LOCATION, CATALOG_LOCATION = "table-location", "catalog-location"
# manifest compression → fastavro codec (Java writes Avro with the codec of the same name)
CODECS = {"snappy": "snappy", "zstd": "zstandard", "zstandard": "zstandard", "deflate": "deflate",
          "none": "null", "null": "null", "uncompressed": "null"}
# hive-catalog storage's metastore options (hive_options)
URI = "metadata.iceberg.uri"
HIVE_CONF_DIR = "metadata.iceberg.hive-conf-dir"
HADOOP_CONF_DIR = "metadata.iceberg.hadoop-conf-dir"
HIVE_CLIENT_CLASS = "metadata.iceberg.hive-client-class"
DEFAULT_HIVE_CLIENT = "org.apache.hadoop.hive.metastore.HiveMetaStoreClient"
METASTORE_DATABASE = "metadata.iceberg.database"
METASTORE_TABLE = "metadata.iceberg.table"
GLUE_SKIP_ARCHIVE = "metadata.iceberg.glue.skip-archive"
HIVE_SKIP_UPDATE_STATS = "metadata.iceberg.hive-skip-update-stats"
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
    hive_options(options)
    rest = sorted(k for k in options if k.startswith(REST_PREFIX))
    if rest:
        raise _refused(rest[0], "Iceberg metadata is not committed to a REST catalog: rest-catalog storage is not built")
    storage = _choice(options, STORAGE, STORAGE_TYPES, "disabled")
    if storage == "rest-catalog":
        raise _refused(STORAGE, "rest-catalog storage is not built; table-location, hadoop-catalog and "
                                "hive-catalog are")
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


@dataclass(frozen=True)
class IcebergHiveOptions:
    """Where ``hive-catalog`` storage registers the Iceberg table (Paimon's IcebergHiveMetadataCommitter)."""
    uri: Optional[str]  # thrift://host:port[,...]; else hive.metastore.uris of hive-site.xml
    hive_conf_dir: Optional[str]
    databases: Tuple[str, ...]  # empty: the Paimon table's own database
    table: Optional[str]  # None: the Paimon table's own name
    glue_skip_archive: bool
    skip_update_stats: bool


def hive_options(options: Mapping[str, str]) -> IcebergHiveOptions:
    """The metastore options, checked whatever the storage (as Java reads them only for
    ``hive-catalog``, they do nothing elsewhere). Refused: a client class other than Hive's own
    (Glue's AWSCatalogMetastoreClient is a Java class), and Hadoop configuration files."""
    client = options.get(HIVE_CLIENT_CLASS)
    if client is not None and str(client).strip() != DEFAULT_HIVE_CLIENT:
        raise _refused(HIVE_CLIENT_CLASS, f"the metastore is reached through its Thrift API; only "
                                          f"'{DEFAULT_HIVE_CLIENT}' is served")
    if options.get(HADOOP_CONF_DIR):
        raise _refused(HADOOP_CONF_DIR, "Hadoop's configuration files are not read: give the metastore by "
                                        f"'{URI}' or '{HIVE_CONF_DIR}'")
    uri = (options.get(URI) or "").strip() or None
    for part in uri.split(",") if uri else ():
        if not _thrift_address(part.strip()):
            raise InvalidOptionError(f"option '{URI}' expects thrift://host:port (comma-separated for several), "
                                     f"got {options[URI]!r}")
    databases = tuple(d.strip() for d in str(options.get(METASTORE_DATABASE) or "").split(";"))
    if options.get(METASTORE_DATABASE) and not all(databases):
        raise InvalidOptionError(f"option '{METASTORE_DATABASE}' expects database names separated by ';', "
                                 f"got {options[METASTORE_DATABASE]!r}")
    table = (options.get(METASTORE_TABLE) or "").strip() or None
    return IcebergHiveOptions(uri, (options.get(HIVE_CONF_DIR) or "").strip() or None,
                              databases if options.get(METASTORE_DATABASE) else (), table,
                              _bool(options, GLUE_SKIP_ARCHIVE, False), _bool(options, HIVE_SKIP_UPDATE_STATS, False))


def _thrift_address(text: str) -> bool:
    parsed = urlparse(text)
    try:
        return parsed.scheme == "thrift" and bool(parsed.hostname) and bool(parsed.port)
    except ValueError:  # a port that is not a number
        return False
