"""The ``metadata.iceberg.*`` options (Paimon's IcebergOptions), parsed and checked in one place.

They live beside the core options because ``TableSchema.check`` (CREATE, ALTER) must refuse a value
we cannot honour before any table holds it, and the schema sits below the ``iceberg`` package that
writes the metadata. What paimon-sql builds: every storage, ``hive-catalog``'s metastore options
(:func:`hive_options`), ``rest-catalog``'s connection options (:func:`rest_options`, the
``metadata.iceberg.rest.*`` keys Java passes to Iceberg's RESTCatalog), the REST table's own
properties (``metadata.iceberg.table-properties.*``, :func:`table_properties`, as Paimon's master
after 2.0), Iceberg format versions 2 and 3 (3 with deletion vectors), and one key of paimon-sql's
own, :data:`PUFFIN_FILES` (Java ignores keys it does not declare). A connection option we do not
serve is refused in one line, never accepted and ignored.
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
# paimon-sql's own (no Paimon class declares it; Java ignores it): deletion vectors copied into Puffin files
PUFFIN_FILES = "metadata.iceberg.deletion-vectors.puffin-files"

STORAGE_TYPES = ("disabled", "table-location", "hadoop-catalog", "hive-catalog", "rest-catalog")
HIVE_CATALOG, REST_CATALOG = "hive-catalog", "rest-catalog"
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
# the REST catalog properties served (Iceberg's RESTCatalog names), and header.<name>
REST_URI, REST_WAREHOUSE, REST_PREFIX_KEY, REST_TOKEN = "uri", "warehouse", "prefix", "token"
REST_CREDENTIAL, REST_SCOPE, REST_OAUTH2_URI, REST_HEADER = "credential", "scope", "oauth2-server-uri", "header."
REST_KEYS = (REST_URI, REST_WAREHOUSE, REST_PREFIX_KEY, REST_TOKEN, REST_CREDENTIAL, REST_SCOPE, REST_OAUTH2_URI)
TABLE_PROPERTIES_PREFIX = "metadata.iceberg.table-properties."
# Iceberg's TableProperties.RESERVED_PROPERTIES: its catalogs refuse to store them as properties
ICEBERG_RESERVED = ("format-version", "uuid", "snapshot-count", "current-snapshot-id", "current-snapshot-summary",
                    "current-snapshot-timestamp-ms", "current-schema", "default-partition-spec", "default-sort-order")
# the properties each REST commit sets from options of ours, and the name mapping (iceberg/name_mapping.py)
OWN_PROPERTIES = {"write.metadata.previous-versions-max": PREVIOUS_VERSIONS_MAX,
                  "write.metadata.delete-after-commit.enabled": DELETE_AFTER_COMMIT,
                  "schema.name-mapping.default": "the table's file format"}


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
    puffin_files: bool = False  # deletion vectors copied into Puffin files (paimon_sql/iceberg/puffin.py)
    table_properties: Tuple[Tuple[str, str], ...] = ()  # metadata.iceberg.table-properties.<name>


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
    hive = hive_options(options)
    rest = rest_options(options)
    storage = _choice(options, STORAGE, STORAGE_TYPES, "disabled")
    if storage == REST_CATALOG and rest.uri is None:
        raise InvalidOptionError(f"option '{STORAGE}' = '{REST_CATALOG}' needs the catalog's address: "
                                 f"'{REST_PREFIX}{REST_URI}' (http://host:port)")
    if storage == REST_CATALOG and len(hive.databases) > 1:
        raise InvalidOptionError(f"option '{METASTORE_DATABASE}' names one REST catalog namespace with "
                                 f"'{STORAGE}' = '{REST_CATALOG}', got {options[METASTORE_DATABASE]!r}")
    default_location = TABLE_LOCATION if storage == "table-location" else CATALOG_LOCATION
    location = _choice(options, STORAGE_LOCATION, (TABLE_LOCATION, CATALOG_LOCATION), default_location)
    version = _int(options, FORMAT_VERSION, 2)
    if version not in (2, 3):
        raise InvalidOptionError(f"option '{FORMAT_VERSION}' expects 2 or 3, got {options[FORMAT_VERSION]!r}")
    compression = _choice(options, MANIFEST_COMPRESSION, tuple(CODECS), "snappy")
    puffin_files = _bool(options, PUFFIN_FILES, False)
    if puffin_files and version < 3:
        raise InvalidOptionError(f"option '{PUFFIN_FILES}' = 'true' needs '{FORMAT_VERSION}' = '3' (Iceberg "
                                 f"deletion vectors), got {version}")
    parsed = IcebergOptions(storage, location, version, _int(options, COMPACT_MIN_FILES, 10),
                            _int(options, COMPACT_MAX_FILES, 50), _bool(options, DELETE_AFTER_COMMIT, True),
                            _int(options, PREVIOUS_VERSIONS_MAX, 0), CODECS[compression],
                            _bool(options, MANIFEST_LEGACY_VERSION, False), puffin_files, table_properties(options))
    return None if storage == "disabled" else parsed


def table_properties(options: Mapping[str, str]) -> Tuple[Tuple[str, str], ...]:
    """The ``metadata.iceberg.table-properties.<name>`` = value pairs, which ``rest-catalog``
    storage sets on the catalog's table (Paimon's master after 2.0, #9268); they do nothing
    elsewhere, as in Java. Refused, where Java logs and drops them: an empty name, a name Iceberg
    reserves (its catalog refuses it), and one a commit sets itself from another option."""
    out = []
    for key in sorted(k for k in options if k.startswith(TABLE_PROPERTIES_PREFIX)):
        name = key[len(TABLE_PROPERTIES_PREFIX):]
        if not name:
            raise InvalidOptionError(f"option '{key}' names no Iceberg table property")
        if name in ICEBERG_RESERVED:
            raise _refused(key, f"'{name}' is reserved by Iceberg: its catalogs refuse it as a table property")
        if name in OWN_PROPERTIES:
            raise _refused(key, f"'{name}' is set by each commit from {OWN_PROPERTIES[name]}")
        out.append((name, str(options[key])))
    return tuple(out)


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


@dataclass(frozen=True)
class IcebergRestOptions:
    """The REST catalog ``rest-catalog`` storage commits to (Paimon's IcebergRestMetadataCommitter
    passes every ``metadata.iceberg.rest.<key>`` to Iceberg's RESTCatalog as ``<key>``)."""
    uri: Optional[str]  # the catalog's base URI, http(s)://host:port[/path]
    warehouse: Optional[str]  # sent to GET /v1/config, which may answer with a prefix
    prefix: Optional[str]  # the path prefix of every call (the server's config overrides it)
    token: Optional[str]  # a bearer token
    credential: Optional[str]  # OAuth2 client credentials, "<client id>:<secret>" or "<secret>"
    scope: str
    oauth2_server_uri: Optional[str]  # default: <uri>/v1/oauth/tokens
    headers: Tuple[Tuple[str, str], ...]  # header.<name> = value


def rest_options(options: Mapping[str, str]) -> IcebergRestOptions:
    """The REST catalog options, checked whatever the storage (Java reads them only for
    ``rest-catalog``). Served: the address (uri, warehouse, prefix) and a static token, OAuth2
    client credentials or extra headers; any other RESTCatalog property is refused naming it
    (SigV4 signing, token exchange and refresh, FileIO settings: the commit writes no files
    through the catalog)."""
    conf = {}
    for key in sorted(k for k in options if k.startswith(REST_PREFIX)):
        name = key[len(REST_PREFIX):]
        if not name:
            raise InvalidOptionError(f"option '{key}' names no REST catalog property")
        if name not in REST_KEYS and not (name.startswith(REST_HEADER) and len(name) > len(REST_HEADER)):
            raise _refused(key, f"the REST catalog is called with {', '.join(REST_KEYS)} and header.<name>; "
                                f"'{name}' is not served")
        conf[name] = str(options[key]).strip()
    uri = conf.get(REST_URI) or None
    if uri is not None and urlparse(uri).scheme not in ("http", "https"):
        raise InvalidOptionError(f"option '{REST_PREFIX}{REST_URI}' expects http(s)://host:port, got {uri!r}")
    if conf.get(REST_TOKEN) and conf.get(REST_CREDENTIAL):
        raise InvalidOptionError(f"options '{REST_PREFIX}{REST_TOKEN}' and '{REST_PREFIX}{REST_CREDENTIAL}' "
                                 "are two ways to authenticate: set one")
    headers = tuple((k[len(REST_HEADER):], v) for k, v in conf.items() if k.startswith(REST_HEADER))
    return IcebergRestOptions(uri, conf.get(REST_WAREHOUSE) or None, conf.get(REST_PREFIX_KEY) or None,
                              conf.get(REST_TOKEN) or None, conf.get(REST_CREDENTIAL) or None,
                              conf.get(REST_SCOPE) or "catalog", conf.get(REST_OAUTH2_URI) or None, headers)
