/*
 * A query's Arrow batches, each partition's in one piece while it stays small: one Spark job for a
 * small result, where streaming it (Spark's toLocalIterator) runs a job per partition.
 *
 * Each partition gives its batches if they come to at most maxBytes, else the one-byte marker
 * TOO_BIG (the rest of the partition is never computed); the caller streams the query instead then.
 * Used by paimon_sql/server/operations.py: a point query through the server took 0.11-0.17 s to
 * stream from two partitions and 0.03-0.06 s collected whole.
 *
 * The partitions are mapped by RDD.mapPartitionsInternal (Spark's own Dataset.toArrowBatchRdd maps
 * its partitions so): JavaRDD.mapPartitions runs Spark's ClosureCleaner, which reads and parses
 * JavaRDDLike's class file at every call, 5 % of the JVM's time on a served point query.
 */
package paimon_sql.spark;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;

import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.function.FlatMapFunction;
import org.apache.spark.rdd.RDD;
import scala.jdk.javaapi.CollectionConverters;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;
import scala.runtime.AbstractFunction1;

public final class CappedBatches implements FlatMapFunction<Iterator<byte[]>, byte[]> {
    private static final long serialVersionUID = 1L;

    /** What a partition over the cap gives: no Arrow IPC message is one byte long. */
    public static final byte[] TOO_BIG = {0};

    private final long maxBytes;

    /** No cap: the instance Python loads by name, to call {@link #of} on. */
    public CappedBatches() {
        this(0);
    }

    private CappedBatches(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** The batches of {@code batches}' partitions, each partition's whole or TOO_BIG. */
    public JavaRDD<byte[]> of(RDD<byte[]> batches, long maxBytesPerPartition) {
        ClassTag<byte[]> tag = ClassTag$.MODULE$.apply(byte[].class);
        RDD<byte[]> capped = batches.mapPartitionsInternal(new OfPartition(new CappedBatches(maxBytesPerPartition)),
                false, tag);
        return new JavaRDD<>(capped, tag);
    }

    /** {@link #call} as the Scala function mapPartitionsInternal takes. */
    private static final class OfPartition
            extends AbstractFunction1<scala.collection.Iterator<byte[]>, scala.collection.Iterator<byte[]>>
            implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        private final CappedBatches capped;

        OfPartition(CappedBatches capped) {
            this.capped = capped;
        }

        @Override
        public scala.collection.Iterator<byte[]> apply(scala.collection.Iterator<byte[]> batches) {
            return CollectionConverters.asScala(capped.call(CollectionConverters.asJava(batches)));
        }
    }

    @Override
    public Iterator<byte[]> call(Iterator<byte[]> batches) {
        List<byte[]> out = new ArrayList<>();
        long size = 0;
        while (batches.hasNext()) {
            byte[] batch = batches.next();
            size += batch.length;
            if (size > maxBytes) {
                return Collections.singletonList(TOO_BIG).iterator();
            }
            out.add(batch);
        }
        return out.iterator();
    }
}
