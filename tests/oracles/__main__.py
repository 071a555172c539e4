"""``python -m oracles`` (from tests/): fetch every Java oracle and compile its drivers ahead of the
tests (Paimon's REST test server's among them), find paimon-spark and make its venv (PySpark 4.1.2), printing what is cached where. Exits 1
naming the first oracle that cannot be had."""

import sys
from pathlib import Path

from oracles import OracleUnavailable, iceberg_java, paimon_rest, paimon_spark
from oracles.paimon_java import VERSIONS, driver_command

DRIVERS = Path(__file__).resolve().parent.parent / "interop" / "java"
AHEAD = {"1.0": "PaimonDriver.java", "2.0": "ReadDriver.java"}  # the others compile on first use


def main() -> int:
    try:
        print(f"PySpark {paimon_spark.PYSPARK}: {paimon_spark.python()}")
        for version in VERSIONS:
            command = driver_command(DRIVERS / AHEAD[version], version=version)
            print(f"Java Paimon {version}: {command[command.index('-cp') + 1]}")
        for version in (iceberg_java.LATEST, iceberg_java.V3):
            command = iceberg_java.driver_command(version)
            print(f"Iceberg Java {version}: {command[command.index('-cp') + 1]}")
        print(f"paimon-spark: {paimon_spark.jar()}")
        print(f"Paimon's REST test server: {paimon_rest.command()[-1]} (paimon-core 2.0.0 tests jar)")
        print(f"Java Paimon's RESTCatalog client: {driver_command(DRIVERS / 'RestCatalogClientDriver.java', version='2.0')[-1]}")
    except OracleUnavailable as e:
        print(f"oracles: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
