package io.kvtier.model.tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import jdk.incubator.vector.LongVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Read bandwidth of the quantized kernels against a plain streaming read, measured in the same
 * run (JMH; not a test). Each thread owns a weight matrix of about {@code mib} MiB in native
 * memory (well beyond the caches) and a float activation vector; {@code matvec} runs
 * {@link QuantMatmul#matmul} over every row (the decode path), {@code read} sums the same number
 * of bytes with long vector loads into four accumulators. The {@code bytes} counter is bytes
 * read per second (summed over threads with {@code -t 2}).
 *
 * <pre>
 * mvn -B -q -pl kvtier-engine -am test-compile dependency:build-classpath \
 *     -Dmdep.includeScope=test -Dmdep.outputFile=/tmp/cp.txt
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *     -cp kvtier-engine/target/test-classes:kvtier-engine/target/classes:$(cat /tmp/cp.txt) \
 *     org.openjdk.jmh.Main QuantDotBench -t 1
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED"})
public class QuantDotBench {

    private static final VectorSpecies<Long> S = LongVector.SPECIES_PREFERRED;

    @Param({"F32", "F16", "Q8_0", "Q4_0", "Q4_K", "Q6_K"})
    public String type;

    /** Weight bytes per thread. */
    @Param("128")
    public int mib;

    /** Row width (a multiple of 256 so that every type fits). */
    @Param("2048")
    public int cols;

    private Arena arena;
    private Weight w;
    private float[] x;
    private float[] y;

    /** Bytes read per second (the weights only; the activations stay in L1). */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;

        @Setup(Level.Iteration)
        public void reset() {
            bytes = 0;
        }
    }

    @Setup
    public void setup() {
        TensorType t = TensorType.valueOf(type);
        long rowBytes = t.rowBytes(cols);
        int rows = (int) ((long) mib * 1024 * 1024 / rowBytes);
        arena = Arena.ofShared();
        MemorySegment data = arena.allocate(rowBytes * rows, 64);
        Random rnd = new Random(42);
        byte[] row = new byte[(int) rowBytes];
        for (int r = 0; r < rows; r++) {
            rnd.nextBytes(row);
            MemorySegment.copy(MemorySegment.ofArray(row), 0, data, r * rowBytes, rowBytes);
            QuantKernelsTest.fixHalves(t, data, r * rowBytes, cols, rnd);
        }
        w = new Weight(t, data, rows, cols);
        x = new float[cols];
        for (int i = 0; i < cols; i++) {
            x[i] = (float) rnd.nextGaussian();
        }
        y = new float[rows];
    }

    @TearDown
    public void tearDown() {
        arena.close();
    }

    @Benchmark
    public float matvec(Bytes b) {
        QuantMatmul.matmul(w, x, 1, y, 0, w.rows());
        b.bytes += w.data().byteSize();
        return y[0];
    }

    @Benchmark
    public long read(Bytes b) {
        MemorySegment d = w.data();
        long n = d.byteSize() / (4L * S.vectorByteSize()) * (4L * S.vectorByteSize());
        LongVector s0 = LongVector.zero(S), s1 = s0, s2 = s0, s3 = s0;
        long step = S.vectorByteSize();
        for (long p = 0; p < n; p += 4 * step) {
            s0 = s0.add(LongVector.fromMemorySegment(S, d, p, ByteOrder.LITTLE_ENDIAN));
            s1 = s1.add(LongVector.fromMemorySegment(S, d, p + step, ByteOrder.LITTLE_ENDIAN));
            s2 = s2.add(LongVector.fromMemorySegment(S, d, p + 2 * step, ByteOrder.LITTLE_ENDIAN));
            s3 = s3.add(LongVector.fromMemorySegment(S, d, p + 3 * step, ByteOrder.LITTLE_ENDIAN));
        }
        b.bytes += n;
        return s0.add(s1).add(s2).add(s3).reduceLanes(VectorOperators.ADD);
    }
}
