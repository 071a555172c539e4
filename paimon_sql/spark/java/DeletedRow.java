/*
 * Whether a row is deleted: Paimon's deletion vectors applied inside a native Parquet read.
 *
 * Spark's Parquet source cannot drop rows by position, and a join against the deleted positions
 * costs a broadcast per query. A read's UDF (over(vectors)) carries every vector of the read,
 * travels with the tasks as part of the plan, and is decoded once per task; a row, known by its
 * file's size (unique among the files of the read, which the caller checks) and its row index,
 * then costs a lookup of its file (rows of one file come together) and a bitmap probe.
 *
 * The vectors (big-endian): int n; n times (long file size, int length), sorted by size; then the
 * n bitmaps in RoaringBitmap's portable format, each of its length. Built by
 * paimon_sql/spark/jvm_classes.py.
 */
package paimon_sql.spark;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.util.Arrays;

import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.roaringbitmap.RoaringBitmap;

public final class DeletedRow implements UDF2<Long, Long, Boolean> {
    private static final long serialVersionUID = 1L;

    private final byte[] vectors;
    private transient volatile Vectors decoded;

    /** No vectors: the instance Python loads by name, to call {@link #over} on. */
    public DeletedRow() {
        this(new byte[4]);
    }

    private DeletedRow(byte[] vectors) {
        this.vectors = vectors;
    }

    /** The UDF of one read, over its vectors (built here: from Python, py4j could pick Spark's
     * untyped udf(Object, DataType) overload, which Spark refuses). */
    public UserDefinedFunction over(byte[] vectors) {
        return functions.udf(new DeletedRow(vectors), DataTypes.BooleanType).withName("paimon_deleted_row");
    }

    @Override
    public Boolean call(Long fileSize, Long rowIndex) {
        Vectors v = decoded;
        if (v == null) {
            v = new Vectors(vectors);
            decoded = v;
        }
        RoaringBitmap bitmap = fileSize == null ? null : v.of(fileSize);
        return bitmap != null && rowIndex != null && bitmap.contains((int) (long) rowIndex);
    }

    private static final class Vectors {
        final long[] sizes;
        final RoaringBitmap[] bitmaps;
        long lastSize = -1;
        RoaringBitmap last;

        Vectors(byte[] vectors) {
            ByteBuffer in = ByteBuffer.wrap(vectors);
            int n = in.getInt();
            sizes = new long[n];
            int[] lengths = new int[n];
            for (int i = 0; i < n; i++) {
                sizes[i] = in.getLong();
                lengths[i] = in.getInt();
            }
            bitmaps = new RoaringBitmap[n];
            for (int i = 0; i < n; i++) {
                ByteBuffer body = in.slice();
                body.limit(lengths[i]);
                bitmaps[i] = new RoaringBitmap();
                try {
                    bitmaps[i].deserialize(body);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                in.position(in.position() + lengths[i]);
            }
        }

        RoaringBitmap of(long fileSize) {
            if (fileSize != lastSize) {
                int i = Arrays.binarySearch(sizes, fileSize);
                last = i >= 0 ? bitmaps[i] : null;
                lastSize = fileSize;
            }
            return last;
        }
    }
}
