"""Azure Blob Storage / Data Lake Gen2 warehouses (``abfs://container@account.dfs.core.windows.net/path``).

Options are Hadoop ABFS's names, as Paimon's Azure FileIO passes them (``azure.*`` or ``fs.azure.*``):
``fs.azure.account.key`` (or ``fs.azure.account.key.<account>.dfs.core.windows.net``),
``fs.azure.sas.fixed.token`` (likewise per account), ``fs.azure.abfs.endpoint`` (``host:port`` of an
emulator such as Azurite) and ``fs.azure.always.use.https``. Files go through pyarrow's
AzureFileSystem; ``snapshot-N`` is created by a Put Blob with ``If-None-Match: *``, which pyarrow
cannot send, through azure-storage-blob (the ``azure`` extra).
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Optional, Tuple

import pyarrow.fs as pafs

from paimon_sql.exceptions import InvalidOptionError, PaimonError
from paimon_sql.io.object_stores import flag, store_options

AZURE_OPTIONS = ("account.key", "sas.fixed.token", "abfs.endpoint", "always.use.https")
# Hadoop's per-account spellings: fs.azure.account.key.<account>.dfs.core.windows.net
_PER_ACCOUNT = re.compile(r"^((?:fs\.)?azure\.(?:account\.key|sas\.fixed\.token))\.(.+)$")


def azure_location(netloc: str) -> Tuple[str, str]:
    """``container@account.dfs.core.windows.net`` -> (account, container)."""
    container, _, host = netloc.partition("@")
    if not container or not host:
        raise InvalidOptionError(f"an abfs:// warehouse is abfs://<container>@<account>.dfs.core.windows.net/<path>, "
                                 f"not abfs://{netloc}")
    return host.split(".", 1)[0], container


@dataclass(frozen=True)
class AzureConfig:
    account: str
    key: Optional[str] = field(default=None, repr=False)
    sas: Optional[str] = field(default=None, repr=False)
    endpoint: Optional[str] = None  # host:port of an emulator; None: <account>.blob.core.windows.net
    https: bool = True

    @staticmethod
    def of(account: str, options: dict) -> "AzureConfig":
        picked = {}
        for key, value in options.items():
            m = _PER_ACCOUNT.match(key)
            if m is None:
                picked[key] = value
            elif m.group(2).split(".", 1)[0] == account:  # another account's key is not ours
                picked[m.group(1)] = value
        o = store_options("azure", picked, AZURE_OPTIONS)
        return AzureConfig(account, o.get("account.key"), o.get("sas.fixed.token"), o.get("abfs.endpoint"),
                           flag(o, "always.use.https", True, "fs.azure.always.use.https"))

    def filesystem(self) -> pafs.AzureFileSystem:
        kwargs = {"account_key": self.key, "sas_token": self.sas}
        if self.endpoint:
            scheme = "https" if self.https else "http"
            kwargs.update(blob_storage_authority=self.endpoint, dfs_storage_authority=self.endpoint,
                          blob_storage_scheme=scheme, dfs_storage_scheme=scheme)
        return pafs.AzureFileSystem(self.account, **{k: v for k, v in kwargs.items() if v is not None})


@functools.lru_cache(maxsize=None)
def _service(config: AzureConfig):
    try:
        from azure.storage.blob import BlobServiceClient
    except ImportError:
        return None
    url = (f"{'https' if config.https else 'http'}://{config.endpoint}/{config.account}" if config.endpoint
           else f"https://{config.account}.blob.core.windows.net")
    credential = {"account_name": config.account, "account_key": config.key} if config.key else config.sas
    return BlobServiceClient(account_url=url, credential=credential)


class AzureStore:
    """Create-if-absent on Azure: Put Blob with ``If-None-Match: *`` (409 BlobAlreadyExists: lost)."""

    def __init__(self, config: AzureConfig):
        self.config = config

    def put_if_absent(self, path: str, data: bytes) -> Optional[bool]:
        """True: created; False: ``path`` (``container/blob``) exists; None: no client library or
        credentials here to create conditionally (the caller needs the catalog lock)."""
        service = _service(self.config) if self.config.key or self.config.sas else None
        if service is None:
            return None
        from azure.core.exceptions import HttpResponseError, ResourceExistsError, ResourceModifiedError
        container, blob = path.split("/", 1)
        try:
            service.get_blob_client(container, blob).upload_blob(data, overwrite=False)
            return True
        except (ResourceExistsError, ResourceModifiedError):
            return False
        except HttpResponseError as e:
            raise PaimonError(f"Azure Put Blob of {container}/{blob} failed: {e.error_code} "
                              f"(HTTP {e.status_code})") from None

    def why_not(self) -> str:
        if not (self.config.key or self.config.sas):
            return "conditional creates on abfs:// need fs.azure.account.key or fs.azure.sas.fixed.token"
        return "conditional creates on abfs:// need azure-storage-blob (pip install 'paimon-sql[azure]')"
