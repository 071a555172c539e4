"""paimon-sql: Apache Paimon's table format in Python, with a SQL front layer over Apache Spark.

The core (``paimon_sql.catalog`` → ``table`` → ``format`` → ``io``) works on Arrow and needs no Spark.
"""

__version__ = "0.1.0"
