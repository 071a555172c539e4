"""Iceberg compatibility (Paimon's ``metadata.iceberg.storage``): after each commit, Iceberg
metadata (metadata JSON, manifest lists and manifests in Avro) naming the table's own data files,
so that Iceberg readers see the table without a copy. One module per concept: ``paths`` (where
it is written), ``conversions`` (Iceberg's binary single values), ``metadata`` (the JSON),
``manifest`` (the Avro codecs), ``deletion_vectors`` (Paimon's 64-bit vectors as Iceberg v3 ones),
``commit_callback`` (the job run after each commit, and the check before a write), ``publisher``
(each snapshot's metadata), ``incremental`` and ``afresh`` (its two paths), ``expiry``,
``manifest_compaction``, ``branches`` (Iceberg's one table is Paimon's main branch), ``tags``,
``alter``."""
