"""Quickstart of the core API (the SQL form, quickstart.sql, arrives with the SQL front layer).

Creates a partitioned primary-key table in the warehouse given on the command line, inserts,
upserts, deletes, reads the latest state and travels back to the first snapshot.
"""

import sys

import pyarrow as pa

from paimon_sql.catalog import load_catalog
from paimon_sql.format import predicate as P
from paimon_sql.format import row_kind

warehouse = sys.argv[1] if len(sys.argv) > 1 else "./warehouse"
catalog = load_catalog(warehouse)
catalog.create_database("quickstart", ignore_if_exists=True)
catalog.drop_table("quickstart.orders", ignore_if_not_exists=True)
schema = pa.schema([pa.field("order_id", pa.int64(), False), ("customer", pa.string()), ("amount", pa.float64()),
                    pa.field("dt", pa.string(), False)])
orders = catalog.create_table_from_arrow("quickstart.orders", schema, partition_keys=["dt"],
                                         primary_keys=["order_id", "dt"], options={"bucket": "2"})

first = orders.write_arrow(pa.table({"order_id": [1, 2, 3], "customer": ["ann", "bob", "cyd"],
                                     "amount": [10.0, 20.0, 30.0], "dt": ["2024-06-01"] * 3}, schema=schema))
orders.write_arrow(pa.table({"order_id": [2, 4], "customer": ["bob", "dan"], "amount": [25.0, 40.0],
                             "dt": ["2024-06-01", "2024-06-02"]}, schema=schema))  # upsert 2, insert 4
orders.write_arrow(pa.table({"order_id": [3], "customer": ["cyd"], "amount": [30.0], "dt": ["2024-06-01"]},
                            schema=schema), row_kinds=pa.array([row_kind.DELETE], pa.int8()))  # delete 3

print("latest:", orders.to_arrow().sort_by("order_id").to_pylist())
print("orders over 20 on 2024-06-01:",
      orders.new_scan().filter(P.and_(P.equal("dt", "2024-06-01"), P.greater_than("amount", 20.0)))
      .select("order_id", "amount").to_arrow().to_pylist())
print(f"snapshot {first}:", orders.to_arrow(snapshot_id=first).sort_by("order_id").to_pylist())
