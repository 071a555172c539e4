"""``t$branches``: the table's branches besides main, with when each was created."""

from paimon_sql.systables.base import SystemTable, columns, local_time, register


@register
class BranchesTable(SystemTable):
    name = "branches"
    FIELDS = columns("branch_name STRING NOT NULL", "create_time TIMESTAMP(3) NOT NULL")

    def rows(self, predicate=None):
        branches = self.table.branch_manager.branches()
        return self.table_of({"branch_name": [n for n, _ in branches],
                              "create_time": [local_time(t) for _, t in branches]})
