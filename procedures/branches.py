"""Branch procedures: paimon-spark's CreateBranch, DeleteBranch, RenameBranch, FastForward and
MergeBranch, over :class:`~paimon_sql.table.branch_manager.BranchManager`.

A branch is read and written as ``t$branch_<name>``; these procedures create, drop and rename its
directory, ``fast_forward`` makes the table's branch (main) take a branch's state, and ``merge_branch``
adds to one branch the data files another has (append tables only). Each checks
its arguments and the branches it names before it changes anything.
"""

from __future__ import annotations

from paimon_sql.io.paths import MAIN_BRANCH
from paimon_sql.procedures.base import Procedure, columns, optional, register, required
from paimon_sql.table import fallback_read

RESULT = columns("result BOOLEAN")


@register
class CreateBranchProcedure(Procedure):
    name = "create_branch"
    parameters = (required("table", "STRING"), required("branch", "STRING"), optional("tag", "STRING"),
                  optional("ignoreIfExists", "STRING"))
    output = RESULT
    description = "Create a branch: empty (the table's schema only) or holding a tag's snapshot."

    def call(self, session, args):
        # as Java's Boolean.parseBoolean: 'true' in any case is true, any other text false
        ignore = (args["ignoreIfExists"] or "").lower() == "true"
        table = self.table(session, args["table"])
        if ignore and table.branch_manager.exists(args["branch"]):  # as Java: nothing else is checked
            return [(True,)]
        tag = args["tag"]
        if tag is not None and not tag.strip():
            raise self.fail("tag must not be blank (leave it out for an empty branch)")
        if tag is not None and not table.tag_manager.exists(tag):
            raise self.fail(f"tag '{tag}' of table {table.name} does not exist")
        table.branch_manager.create(args["branch"], table, tag=tag, ignore_if_exists=ignore)
        return [(True,)]


@register
class DeleteBranchProcedure(Procedure):
    name = "delete_branch"
    parameters = (required("table", "STRING"), required("branch", "STRING"))
    output = RESULT
    description = "Drop branches (comma-separated names); their files are left to orphan cleanup."

    def call(self, session, args):
        table = self.table(session, args["table"])
        names = [n.strip() for n in args["branch"].split(",")]
        read_by = fallback_read.other_branch(table)
        for name in names:  # all checked first: a bad name drops none
            table.branch_manager.check_existing(name, "dropped")
            if read_by is not None and read_by[1] == name:
                raise self.fail(f"branch '{name}' is the table's '{read_by[0]}': unset the option first")
        for name in dict.fromkeys(names):
            table.branch_manager.drop(name)
        return [(True,)]


@register
class RenameBranchProcedure(Procedure):
    name = "rename_branch"
    parameters = (required("table", "STRING"), required("from_branch", "STRING"), required("to_branch", "STRING"))
    output = RESULT
    description = "Rename a branch."

    def call(self, session, args):
        self.table(session, args["table"]).branch_manager.rename(args["from_branch"], args["to_branch"])
        return [(True,)]


@register
class FastForwardProcedure(Procedure):
    name = "fast_forward"
    parameters = (required("table", "STRING"), required("branch", "STRING"))
    output = RESULT
    description = "Make the table (main) take a branch's snapshots, schemas and tags from the branch's base on."

    def call(self, session, args):
        table = self.table(session, args["table"])
        table.branch_manager.fast_forward(table, args["branch"])
        return [(True,)]


@register
class MergeBranchProcedure(Procedure):
    name = "merge_branch"
    parameters = (required("table", "STRING"), required("source_branch", "STRING"),
                  optional("target_branch", "STRING"))
    output = RESULT
    description = "Commit an append table's data files a branch has and another (main) lacks to that other branch."

    def call(self, session, args):
        table = self.table(session, args["table"])
        target = args["target_branch"] if args["target_branch"] and args["target_branch"].strip() else MAIN_BRANCH
        table.branch_manager.merge(table, args["source_branch"], target)
        return [(True,)]
