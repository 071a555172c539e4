"""Google Cloud Storage warehouses (``gs://bucket/path``).

Options are the GCS connector's names, as Paimon's GCS FileIO passes them (``gs.*`` or ``fs.gs.*``):
``gs.project.id``, ``gs.auth.type`` (``APPLICATION_DEFAULT``, Google's application default
credentials, or ``UNAUTHENTICATED``) and ``gs.storage.root.url`` (an emulator's URL). Files go
through pyarrow's GcsFileSystem; ``snapshot-N`` is created by an upload with
``ifGenerationMatch=0`` (only if no live object has the name), which pyarrow cannot send, through
google-cloud-storage (the ``gcs`` extra).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Optional
from urllib.parse import urlparse

import pyarrow.fs as pafs

from paimon_sql.exceptions import InvalidOptionError, PaimonError
from paimon_sql.io.object_stores import store_options

GCS_OPTIONS = ("storage.root.url", "project.id", "auth.type")
AUTH_TYPES = ("APPLICATION_DEFAULT", "UNAUTHENTICATED")


@dataclass(frozen=True)
class GcsConfig:
    root_url: Optional[str] = None
    project: Optional[str] = None
    anonymous: bool = False

    @staticmethod
    def of(options: dict) -> "GcsConfig":
        o = store_options("gs", options, GCS_OPTIONS)
        auth = o.get("auth.type", "APPLICATION_DEFAULT").upper()
        if auth not in AUTH_TYPES:
            raise InvalidOptionError(f"catalog option 'gs.auth.type' = '{o['auth.type']}' is not supported "
                                     f"({' or '.join(AUTH_TYPES)}; a key file goes in GOOGLE_APPLICATION_CREDENTIALS)")
        return GcsConfig(o.get("storage.root.url"), o.get("project.id"), auth == "UNAUTHENTICATED")

    def filesystem(self) -> pafs.GcsFileSystem:
        kwargs = {"anonymous": self.anonymous, "project_id": self.project}
        if self.root_url:
            parsed = urlparse(self.root_url)
            kwargs.update(endpoint_override=parsed.netloc, scheme=parsed.scheme or "https")
        return pafs.GcsFileSystem(**{k: v for k, v in kwargs.items() if v is not None})


@functools.lru_cache(maxsize=None)
def _client(config: GcsConfig):
    try:
        from google.cloud import storage
    except ImportError:
        return None
    from google.auth.credentials import AnonymousCredentials
    endpoint = {"api_endpoint": config.root_url} if config.root_url else None
    if config.anonymous:  # an emulator: no credentials, and no project to find from them
        return storage.Client(project=config.project or "anonymous", credentials=AnonymousCredentials(),
                              client_options=endpoint)
    return storage.Client(project=config.project, client_options=endpoint)


class GcsStore:
    """Create-if-absent on GCS: an upload with ``ifGenerationMatch=0`` (412: lost)."""

    def __init__(self, config: GcsConfig):
        self.config = config

    def put_if_absent(self, path: str, data: bytes) -> Optional[bool]:
        """True: created; False: ``path`` (``bucket/object``) exists; None: google-cloud-storage is
        not installed (the caller needs the catalog lock)."""
        client = _client(self.config)
        if client is None:
            return None
        from google.api_core.exceptions import GoogleAPIError, PreconditionFailed
        bucket, name = path.split("/", 1)
        try:
            client.bucket(bucket).blob(name).upload_from_string(data, if_generation_match=0)
            return True
        except PreconditionFailed:
            return False
        except GoogleAPIError as e:
            raise PaimonError(f"GCS upload of gs://{bucket}/{name} failed: {type(e).__name__} "
                              f"(HTTP {getattr(e, 'code', '?')})") from None

    def why_not(self) -> str:
        return "conditional creates on gs:// need google-cloud-storage (pip install 'paimon-sql[gcs]')"
