"""``metastore = rest``: a Paimon REST catalog (Apache Paimon's REST API, spoken by Java Paimon,
paimon-spark and pypaimon), as its client. ``rest_api`` is the HTTP API (Paimon's ``RESTApi``),
``resource_paths`` its URLs."""
