/*
 * Whether a row is deleted: Paimon's deletion vectors applied inside a native Parquet read.
 *
 * Spark's Parquet source cannot drop rows by position, and a join against the deleted positions
 * costs a broadcast exchange (a job) per query. A read's UDF (over(vectors)) holds a Spark broadcast
 * variable of every vector of the read, fetched and decoded once per executor (kept while the
 * broadcast's bytes live); a row, known by its file's size (unique among the files of the read,
 * which the caller sees to) and its row index, then costs a lookup of its file (rows of one file
 * come together) and a bitmap probe.
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
import java.util.Map;
import java.util.WeakHashMap;

import org.apache.spark.broadcast.Broadcast;
import org.apache.spark.sql.api.java.UDF2;
import org.apache.spark.sql.expressions.UserDefinedFunction;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.roaringbitmap.RoaringBitmap;

public final class DeletedRow implements UDF2<Long, Long, Boolean> {
    private static final long serialVersionUID = 1L;

    /** Decoded vectors by the broadcast's bytes (arrays hash by identity; gone with the bytes). */
    private static final Map<byte[], Vectors> DECODED = new WeakHashMap<>();

    private final Broadcast<byte[]> vectors;
    private transient Vectors decoded;
    private transient Memo memo;

    /** No vectors: the instance Python loads by name, to call {@link #over} on. */
    public DeletedRow() {
        this(null);
    }

    private DeletedRow(Broadcast<byte[]> vectors) {
        this.vectors = vectors;
    }

    /** The UDF of one read, over its vectors (built here: from Python, py4j could pick Spark's
     * untyped udf(Object, DataType) overload, which Spark refuses). */
    public UserDefinedFunction over(Broadcast<byte[]> vectors) {
        return functions.udf(new DeletedRow(vectors), DataTypes.BooleanType).withName("paimon_deleted_row");
    }

    @Override
    public Boolean call(Long fileSize, Long rowIndex) {
        if (fileSize == null || rowIndex == null) {
            return false;
        }
        Memo m = memo;  // one read of the field: a consistent pair even if tasks shared this instance
        if (m == null || m.size != fileSize) {
            m = new Memo(fileSize, decoded().of(fileSize));
            memo = m;
        }
        return m.bitmap != null && m.bitmap.contains((int) (long) rowIndex);
    }

    private Vectors decoded() {
        Vectors v = decoded;
        if (v == null) {
            byte[] bytes = vectors.value();
            synchronized (DECODED) {
                v = DECODED.get(bytes);
                if (v == null) {
                    v = new Vectors(bytes);
                    DECODED.put(bytes, v);
                }
            }
            decoded = v;
        }
        return v;
    }

    /** The bitmap of the file last looked up. */
    private static final class Memo {
        final long size;
        final RoaringBitmap bitmap;

        Memo(long size, RoaringBitmap bitmap) {
            this.size = size;
            this.bitmap = bitmap;
        }
    }

    /** The vectors of a read, immutable once decoded (tasks of an executor share them). */
    private static final class Vectors {
        final long[] sizes;
        final RoaringBitmap[] bitmaps;

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
            int i = Arrays.binarySearch(sizes, fileSize);
            return i >= 0 ? bitmaps[i] : null;
        }
    }
}
