"""Spark side: the ``paimon`` Python data source and DataFrame plan builders over the core."""
