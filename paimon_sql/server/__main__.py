"""``python -m paimon_sql.server``: the same as the ``paimon-sql-server`` command."""

import sys

from paimon_sql.server.main import main

sys.exit(main())
