/*
 * A query's Arrow batches made on the driver when its plan is a local table scan (a VALUES, or rows
 * read on the driver: paimon_sql/spark/driver_read.py). Spark's own collection to Arrow runs a job
 * even then, ~18 ms of scheduling for a few rows; the plan's own executeCollect runs none.
 * A query of local relations alone is planned with interpreted expressions: Spark's optimizer
 * evaluates a filter over a local relation on the driver (ConvertToLocalRelation) and compiles it
 * first, with the query's literals in the generated code, so each point lookup on another key
 * compiled anew (~6 ms of the driver's CPU, more than interpreting it over a few rows takes).
 * Such a plan is also evaluated here when Spark would plan a job for it: Spark folds a Project, Filter
 * or Limit over a local relation (ConvertToLocalRelation) but not one over a one-row relation (a
 * SELECT of literals), nor a join of two local relations (a one-row MERGE's source and the target
 * rows read on the driver); those are folded here too, with interpreted expressions, when the join
 * has at most MAX_PAIRS pairs of rows to try. A MERGE of one row so runs no job (~80 ms of its ~190).
 * Used by paimon_sql/server/operations.py for a served point lookup's result, and by
 * paimon_sql/spark/local_write.py for the rows of a small write.
 */
package paimon_sql.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.expressions.Attribute;
import org.apache.spark.sql.catalyst.expressions.AttributeReference;
import org.apache.spark.sql.catalyst.expressions.BasePredicate;
import org.apache.spark.sql.catalyst.expressions.Expression;
import org.apache.spark.sql.catalyst.expressions.GenericInternalRow;
import org.apache.spark.sql.catalyst.expressions.JoinedRow;
import org.apache.spark.sql.catalyst.expressions.Predicate$;
import org.apache.spark.sql.catalyst.expressions.Unevaluable;
import org.apache.spark.sql.catalyst.optimizer.ConvertToLocalRelation;
import org.apache.spark.sql.catalyst.plans.Cross$;
import org.apache.spark.sql.catalyst.plans.FullOuter$;
import org.apache.spark.sql.catalyst.plans.Inner$;
import org.apache.spark.sql.catalyst.plans.JoinType;
import org.apache.spark.sql.catalyst.plans.LeftAnti$;
import org.apache.spark.sql.catalyst.plans.LeftOuter$;
import org.apache.spark.sql.catalyst.plans.LeftSemi$;
import org.apache.spark.sql.catalyst.plans.RightOuter$;
import org.apache.spark.sql.catalyst.plans.logical.Join;
import org.apache.spark.sql.catalyst.plans.logical.LocalRelation;
import org.apache.spark.sql.catalyst.plans.logical.LogicalPlan;
import org.apache.spark.sql.catalyst.plans.logical.OneRowRelation;
import org.apache.spark.sql.classic.Dataset;
import org.apache.spark.sql.execution.LocalTableScanExec;
import org.apache.spark.sql.execution.QueryExecution;
import org.apache.spark.sql.execution.SparkPlan;
import org.apache.spark.sql.execution.arrow.ArrowConverters$;
import org.apache.spark.sql.internal.SQLConf;
import org.apache.spark.sql.internal.SQLConf$;
import scala.jdk.javaapi.CollectionConverters;

public final class LocalBatches {
    /** Pairs of rows a join folded on the driver may try at most (its condition interpreted on each). */
    static final long MAX_PAIRS = 100_000;

    /** The instance Python loads by name, to call {@link #of} on. */
    public LocalBatches() {
    }

    /**
     * The Arrow IPC record batch messages of {@code ds}'s rows, as Spark's toArrowBatchRdd writes them
     * (no duplicate-name check, small string types), or null when its plan neither folds to rows on
     * the driver nor plans as a local table scan.
     */
    public byte[][] of(Dataset<Row> ds, String timeZone, long maxRecordsPerBatch) {
        scala.collection.Iterator<InternalRow> rows = rows(ds);
        if (rows == null) {
            return null;
        }
        scala.collection.Iterator<byte[]> batches = ArrowConverters$.MODULE$.toBatchIterator(
                rows, ds.schema(), maxRecordsPerBatch, timeZone, false, false, null);
        List<byte[]> out = new ArrayList<>();
        while (batches.hasNext()) {
            out.add(batches.next());
        }
        return out.toArray(new byte[0][]);
    }

    /**
     * The most rows {@code ds} can have when every leaf of its optimized plan is rows the driver
     * holds (local relations, a one-row relation), else -1: whether a write of its rows could be
     * taken on the driver without reading anything.
     */
    public long localRows(Dataset<Row> ds) {
        LogicalPlan plan = planned(ds, false).optimizedPlan();
        if (!local(plan)) {
            return -1;
        }
        scala.Option<Object> most = plan.maxRows();
        return most.isDefined() ? (Long) most.get() : -1;
    }

    /** {@code ds}'s rows when its plan folds to a local relation or plans as a local table scan, else null. */
    private static scala.collection.Iterator<InternalRow> rows(Dataset<Row> ds) {
        LogicalPlan optimized = planned(ds, false).optimizedPlan();
        if (local(optimized)) {
            LogicalPlan folded = interpreted(ds, () -> fold(optimized));
            if (folded instanceof LocalRelation relation) {
                return relation.data().iterator();
            }
        }
        SparkPlan plan = planned(ds, true).executedPlan();
        if (!(plan instanceof LocalTableScanExec)) {
            return null;
        }
        return CollectionConverters.asScala(Arrays.asList(plan.executeCollect()).iterator());
    }

    /**
     * {@code plan} with its one-row relations as local relations of one empty row, and each Project,
     * Filter, Limit (Spark's ConvertToLocalRelation) and join over local relations evaluated, bottom up.
     */
    private static LogicalPlan fold(LogicalPlan plan) {
        List<LogicalPlan> children = new ArrayList<>();
        boolean changed = false;
        scala.collection.Iterator<LogicalPlan> it = plan.children().iterator();
        while (it.hasNext()) {
            LogicalPlan child = it.next();
            LogicalPlan folded = fold(child);
            children.add(folded);
            changed |= folded != child;
        }
        LogicalPlan node = changed ? plan.withNewChildren(seq(children)) : plan;
        if (node instanceof OneRowRelation) {
            return new LocalRelation(seq(List.of()), seq(List.of(new GenericInternalRow(0))), false, scala.Option.empty());
        }
        if (node instanceof Join join && join.left() instanceof LocalRelation left
                && join.right() instanceof LocalRelation right) {
            LogicalPlan joined = joined(join, left, right);
            return joined != null ? joined : node;
        }
        return ConvertToLocalRelation.apply(node);
    }

    /** The rows of {@code join} of two local relations, as a local relation; null where not folded here. */
    private static LogicalPlan joined(Join join, LocalRelation left, LocalRelation right) {
        JoinType type = join.joinType();
        boolean keepLeft = type == LeftOuter$.MODULE$ || type == FullOuter$.MODULE$;
        boolean keepRight = type == RightOuter$.MODULE$ || type == FullOuter$.MODULE$;
        boolean semi = type == LeftSemi$.MODULE$;
        boolean anti = type == LeftAnti$.MODULE$;
        if (!(type == Inner$.MODULE$ || type == Cross$.MODULE$ || keepLeft || keepRight || semi || anti) || left.isStreaming()
                || right.isStreaming() || join.condition().isDefined() && !evaluable(join.condition().get())) {
            return null;
        }
        InternalRow[] ls = rowArray(left);
        InternalRow[] rs = rowArray(right);
        if ((long) ls.length * rs.length > MAX_PAIRS) {
            return null;
        }
        BasePredicate condition = null;
        if (join.condition().isDefined()) {
            List<Attribute> both = new ArrayList<>(CollectionConverters.asJava(left.output()));
            both.addAll(CollectionConverters.asJava(right.output()));
            condition = Predicate$.MODULE$.create(join.condition().get(), seq(both));
            condition.initialize(0);
        }
        boolean[] rightMatched = new boolean[rs.length];
        List<InternalRow> out = new ArrayList<>();
        JoinedRow pair = new JoinedRow();
        InternalRow noLeft = new GenericInternalRow(left.output().size());
        InternalRow noRight = new GenericInternalRow(right.output().size());
        for (InternalRow l : ls) {
            boolean matched = false;
            for (int i = 0; i < rs.length; i++) {
                if (condition == null || condition.eval(pair.apply(l, rs[i]))) {
                    matched = true;
                    rightMatched[i] = true;
                    if (!semi && !anti) {
                        out.add(new JoinedRow(l, rs[i]));
                    }
                }
            }
            if (semi && matched || anti && !matched) {
                out.add(l);
            } else if (keepLeft && !matched) {
                out.add(new JoinedRow(l, noRight));
            }
        }
        for (int i = 0; keepRight && i < rs.length; i++) {
            if (!rightMatched[i]) {
                out.add(new JoinedRow(noLeft, rs[i]));
            }
        }
        return new LocalRelation(join.output(), seq(out), false, scala.Option.empty());
    }

    /** Whether {@code e} can be evaluated as it is (no subquery, no unresolved part). */
    private static boolean evaluable(Expression e) {
        if (e instanceof Unevaluable && !(e instanceof AttributeReference)) {
            return false;
        }
        scala.collection.Iterator<Expression> it = e.children().iterator();
        while (it.hasNext()) {
            if (!evaluable(it.next())) {
                return false;
            }
        }
        return true;
    }

    private static InternalRow[] rowArray(LocalRelation relation) {
        return CollectionConverters.asJava(relation.data()).toArray(new InternalRow[0]);
    }

    private static <T> scala.collection.immutable.Seq<T> seq(List<T> items) {
        return CollectionConverters.asScala(items).toSeq();
    }

    /** Whether every leaf of {@code plan} is rows the driver holds. */
    private static boolean local(LogicalPlan plan) {
        scala.collection.Iterator<LogicalPlan> leaves = plan.collectLeaves().iterator();
        while (leaves.hasNext()) {
            LogicalPlan leaf = leaves.next();
            if (!(leaf instanceof LocalRelation || leaf instanceof OneRowRelation)) {
                return false;
            }
        }
        return true;
    }

    /**
     * {@code ds}'s query execution with its optimized (and, when {@code executed}, its physical) plan
     * made; with interpreted expressions, in this thread only, when its analyzed plan reads local
     * relations alone.
     */
    private static QueryExecution planned(Dataset<Row> ds, boolean executed) {
        QueryExecution qe = ds.queryExecution();
        if (!local(qe.analyzed())) {
            return qe;
        }
        return interpreted(ds, () -> {
            qe.optimizedPlan();
            if (executed) {
                qe.executedPlan();
            }
            return qe;
        });
    }

    /** {@code work}'s result, run with interpreted expressions (in this thread only). */
    private static <T> T interpreted(Dataset<Row> ds, scala.Function0<T> work) {
        SQLConf conf = ds.sparkSession().sessionState().conf().clone();
        conf.setConfString(SQLConf$.MODULE$.CODEGEN_FACTORY_MODE().key(), "NO_CODEGEN");
        return SQLConf$.MODULE$.withExistingConf(conf, work);
    }
}
