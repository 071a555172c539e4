"""Object-store warehouses: pyarrow filesystems from catalog options, and create-if-absent.

Options are named as Paimon's FileIOs read them: its S3 FileIO hands ``s3.*``, ``s3a.*`` and
``fs.s3a.*`` to Hadoop's S3A as ``fs.s3a.*`` (``s3.access-key`` and ``s3.access.key`` alike), its GCS
FileIO ``gs.*``/``fs.gs.*`` to the GCS connector as ``fs.gs.*``, its Azure FileIO ``azure.*``/``fs.azure.*``
to ABFS as ``fs.azure.*``. We keep those names; an option of these prefixes we cannot pass on to pyarrow
is refused, not ignored.

An object store has no atomic rename, so a snapshot is published by a conditional create: on S3 a
PUT with ``If-None-Match: *`` (S3A's ``fs.s3a.create.conditional.enabled``, hence
``s3.create.conditional.enabled``, default true as in Hadoop), which pyarrow cannot send, so it goes
through boto3 (the ``s3`` extra). A store may not support it: it answers 501, or ignores the header
and overwrites; :meth:`S3Store.put_if_absent` probes each bucket once per process to find out. Where
a create cannot be conditional the catalog's lock must serialise commits (see :class:`CommitGuard`).
GCS and Azure are in :mod:`paimon_sql.io.gcs_store` and :mod:`paimon_sql.io.azure_store`.
"""

from __future__ import annotations

import functools
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Dict, Optional, Tuple
from urllib.parse import urlparse

import pyarrow.fs as pafs

from paimon_sql.exceptions import CommitConflictError, InvalidOptionError, PaimonError

S3_SCHEMES = ("s3", "s3a")
GCS_SCHEMES = ("gs",)
AZURE_SCHEMES = ("abfs", "abfss")

# prefix groups as Paimon's FileIOs read them, and the Hadoop names they become
_PREFIXES = {
    "s3": ("fs.s3a.", "s3a.", "s3."),
    "gs": ("fs.gs.", "gs."),
    "azure": ("fs.azure.", "azure."),
}
# Paimon's S3 FileIO mirrors these dashed spellings onto S3A's dotted names
_S3_MIRRORED = {"access-key": "access.key", "secret-key": "secret.key", "path-style-access": "path.style.access"}
S3_OPTIONS = ("endpoint", "endpoint.region", "region", "access.key", "secret.key", "session.token",
              "path.style.access", "connection.ssl.enabled", "create.conditional.enabled")

# metastores whose catalog holds its lock (lock.enabled) around every create of snapshot-N/schema-N
LOCKING_METASTORES = ("jdbc", "hive")


def store_options(group: str, options: dict, known: Tuple[str, ...]) -> Dict[str, str]:
    """The options of one store as Hadoop's suffixes (``endpoint``, ``access.key``, ...); an option
    of the store's prefixes we do not know is refused with the list of those we do."""
    found = {}
    for key, value in options.items():
        prefix = next((p for p in _PREFIXES[group] if key.startswith(p)), None)
        if prefix is None:
            continue
        suffix = key[len(prefix):]
        suffix = _S3_MIRRORED.get(suffix, suffix) if group == "s3" else suffix
        if suffix not in known:
            raise InvalidOptionError(f"catalog option '{key}' is not supported for {group} warehouses "
                                     f"(supported: {', '.join(_PREFIXES[group][-1] + k for k in known)})")
        found[suffix] = str(value)
    return found


def flag(options: Dict[str, str], key: str, default: bool, shown: str = "") -> bool:
    """A true/false option (``shown``: its name as the user wrote it, default ``key``)."""
    shown = shown or key
    value = str(options.get(key, default)).strip().lower()
    if value not in ("true", "false"):
        raise InvalidOptionError(f"catalog option '{shown}' must be true or false, not '{options[key]}'")
    return value == "true"


# -- S3 ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class S3Config:
    """S3 options resolved once; picklable, as a FileIO travels to Spark's executors."""

    endpoint: Optional[str] = None  # scheme://host[:port], or None for AWS
    region: Optional[str] = None
    access_key: Optional[str] = field(default=None, repr=False)  # secrets never in a repr or an error
    secret_key: Optional[str] = field(default=None, repr=False)
    session_token: Optional[str] = field(default=None, repr=False)
    path_style: bool = False
    conditional: bool = True

    @staticmethod
    def of(options: dict) -> "S3Config":
        o = store_options("s3", options, S3_OPTIONS)
        endpoint = o.get("endpoint")
        if endpoint and "://" not in endpoint:
            ssl = flag(o, "connection.ssl.enabled", True, "s3.connection.ssl.enabled")
            endpoint = f"{'https' if ssl else 'http'}://{endpoint}"
        # unset: path style against a custom endpoint (MinIO), virtual hosts on AWS (pyarrow's rule)
        path_style = flag(o, "path.style.access", bool(endpoint), "s3.path.style.access")
        return S3Config(endpoint, o.get("endpoint.region") or o.get("region"), o.get("access.key"),
                        o.get("secret.key"), o.get("session.token"), path_style,
                        flag(o, "create.conditional.enabled", True, "s3.create.conditional.enabled"))

    def filesystem(self) -> pafs.S3FileSystem:
        kwargs = {"access_key": self.access_key, "secret_key": self.secret_key,
                  "session_token": self.session_token, "region": self.region,
                  "force_virtual_addressing": not self.path_style and self.endpoint is not None or None}
        if self.endpoint:
            parsed = urlparse(self.endpoint)
            kwargs.update(endpoint_override=parsed.netloc + parsed.path.rstrip("/"), scheme=parsed.scheme)
        return pafs.S3FileSystem(**{k: v for k, v in kwargs.items() if v is not None})


@functools.lru_cache(maxsize=None)
def _s3_client(config: S3Config):
    try:
        import boto3
        from botocore.config import Config
    except ImportError:
        return None
    # checksums only when required: S3-compatible stores (MinIO, OSS) reject the newer default ones
    addressing = "path" if config.path_style else "virtual" if config.endpoint else "auto"
    cfg = Config(s3={"addressing_style": addressing},
                 request_checksum_calculation="when_required", response_checksum_validation="when_required",
                 retries={"max_attempts": 5, "mode": "standard"})
    return boto3.session.Session().client(
        "s3", endpoint_url=config.endpoint, region_name=config.region or "us-east-1",
        aws_access_key_id=config.access_key, aws_secret_access_key=config.secret_key,
        aws_session_token=config.session_token, config=cfg)


_probed: Dict[Tuple[S3Config, str], bool] = {}
_probe_lock = threading.Lock()


class S3Store:
    """Create-if-absent on S3 by a conditional PUT."""

    CONFLICT_RETRIES = 5

    def __init__(self, config: S3Config):
        self.config = config

    def put_if_absent(self, path: str, data: bytes) -> Optional[bool]:
        """True: we created ``path`` (``bucket/key``); False: it exists; None: this store cannot
        create conditionally (the caller needs the catalog lock)."""
        if not self.config.conditional or _s3_client(self.config) is None:
            return None
        bucket, key = path.split("/", 1)
        if not self._supported(bucket, key.rsplit("/", 1)[0]):
            return None
        return self._put(bucket, key, data)

    def _put(self, bucket: str, key: str, data: bytes) -> Optional[bool]:
        from botocore.exceptions import ClientError
        client = _s3_client(self.config)
        for attempt in range(self.CONFLICT_RETRIES):
            try:
                client.put_object(Bucket=bucket, Key=key, Body=data, IfNoneMatch="*")
                return True
            except ClientError as e:
                status = e.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
                code = e.response.get("Error", {}).get("Code")
                if status == 412 or code == "PreconditionFailed":
                    return False
                if status == 501 or code == "NotImplemented":
                    return None
                if status != 409:  # 409 ConditionalRequestConflict: a concurrent write; S3 says retry
                    raise PaimonError(f"S3 PUT of s3://{bucket}/{key} failed: {code} (HTTP {status})") from None
            time.sleep(0.05 * 2 ** attempt)
        raise CommitConflictError(f"S3 kept answering 409 ConditionalRequestConflict to creating "
                                  f"s3://{bucket}/{key}; retry the commit")

    def why_not(self) -> str:
        if not self.config.conditional:
            return "'s3.create.conditional.enabled' is false"
        if _s3_client(self.config) is None:
            return "conditional puts on S3 need boto3 (pip install 'paimon-sql[s3]')"
        return "the store does not honour conditional puts (If-None-Match)"

    def _supported(self, bucket: str, folder: str) -> bool:
        """Whether the bucket honours ``If-None-Match: *``: a probe object created twice must be refused
        the second time (a store that ignores the header would silently overwrite snapshots)."""
        with _probe_lock:
            if (self.config, bucket) not in _probed:
                probe = f"{folder}/.conditional-put-probe-{uuid.uuid4().hex}"
                first = self._put(bucket, probe, b"")
                honoured = first is True and self._put(bucket, probe, b"") is False
                if first is not None:
                    _s3_client(self.config).delete_object(Bucket=bucket, Key=probe)
                _probed[(self.config, bucket)] = honoured
            return _probed[(self.config, bucket)]


# -- who guarantees a create is exclusive ---------------------------------------------------------

@dataclass(frozen=True)
class CommitGuard:
    """What makes creating ``snapshot-N`` exclusive when the store cannot create conditionally:
    the catalog's lock (a jdbc or hive catalog holds it around every create when ``lock.enabled``,
    which on an object store defaults to true, as Paimon's ``AbstractCatalog.lockEnabled``), or
    the user's word that one writer commits at a time (``lock.enabled`` = false)."""

    locked: bool = False
    single_writer: bool = False

    @staticmethod
    def of(options: dict) -> "CommitGuard":
        enabled = flag(options, "lock.enabled", True, "lock.enabled")
        return CommitGuard(locked=enabled and options.get("metastore") in LOCKING_METASTORES,
                           single_writer=not enabled)

    def refuse(self, where: str, why: str) -> None:
        """Raise unless a lock or a single writer makes an unconditional create safe."""
        if not (self.locked or self.single_writer):
            raise InvalidOptionError(
                f"{where} cannot create a file only if it is absent ({why}): concurrent commits need "
                f"'lock.enabled' = 'true' with a jdbc or hive catalog ('lock.enabled' = 'false' commits "
                f"without, for a single writer)")
