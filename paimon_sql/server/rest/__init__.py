"""Apache Paimon's REST catalog API served beside the Thrift port (``paimon-sql-server --rest-port P
--rest-token-file F``), over the same catalog: Java Paimon's ``RESTCatalog``, paimon-spark with
``metastore=rest``, Flink and pypaimon's REST catalog use the warehouse through it.

The server keeps the metadata namespace (databases, tables, views, schemas) and makes commits
atomic; clients read and write data files themselves at the table ``path`` it answers, as with
Paimon's own REST server. Modules, one concern each: ``server`` (HTTP, the route table, errors,
audit), ``tokens`` (the bearer tokens), ``grants`` (the policy file applied to each call),
``state`` (what every call sees), ``wire`` and ``paging`` (Paimon's JSON shapes and pages), and one
module of handlers per resource: ``databases``, ``tables``, ``snapshots``, ``versions`` (tags,
branches, consumers), ``views``, ``functions``, ``partitions``, ``vending`` (data tokens, query auth).
"""
