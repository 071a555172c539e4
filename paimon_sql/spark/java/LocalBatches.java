/*
 * A query's Arrow batches made on the driver when its plan is a local table scan (a VALUES, or rows
 * read on the driver: paimon_sql/spark/driver_read.py). Spark's own collection to Arrow runs a job
 * even then, ~18 ms of scheduling for a few rows; the plan's own executeCollect runs none.
 * A query of local relations alone is planned with interpreted expressions: Spark's optimizer
 * evaluates a filter over a local relation on the driver (ConvertToLocalRelation) and compiles it
 * first, with the query's literals in the generated code, so each point lookup on another key
 * compiled anew (~6 ms of the driver's CPU, more than interpreting it over a few rows takes).
 * Used by paimon_sql/server/operations.py for a served point lookup's result, and by
 * paimon_sql/spark/local_write.py for the rows of a small write.
 */
package paimon_sql.spark;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
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
    /** The instance Python loads by name, to call {@link #of} on. */
    public LocalBatches() {
    }

    /**
     * The Arrow IPC record batch messages of {@code ds}'s rows, as Spark's toArrowBatchRdd writes them
     * (no duplicate-name check, small string types), or null when its plan is not a local table scan.
     */
    public byte[][] of(Dataset<Row> ds, String timeZone, long maxRecordsPerBatch) {
        SparkPlan plan = planned(ds, true).executedPlan();
        if (!(plan instanceof LocalTableScanExec)) {
            return null;
        }
        InternalRow[] rows = plan.executeCollect();
        scala.collection.Iterator<byte[]> batches = ArrowConverters$.MODULE$.toBatchIterator(
                CollectionConverters.asScala(Arrays.asList(rows).iterator()), ds.schema(), maxRecordsPerBatch, timeZone,
                false, false, null);
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
        SQLConf conf = ds.sparkSession().sessionState().conf().clone();
        conf.setConfString(SQLConf$.MODULE$.CODEGEN_FACTORY_MODE().key(), "NO_CODEGEN");
        return SQLConf$.MODULE$.withExistingConf(conf, () -> {
            qe.optimizedPlan();
            if (executed) {
                qe.executedPlan();
            }
            return qe;
        });
    }
}
