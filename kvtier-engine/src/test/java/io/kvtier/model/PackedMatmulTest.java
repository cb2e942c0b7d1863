package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.model.tensor.ScalarDequant;
import io.kvtier.model.tensor.ScalarQuant;
import io.kvtier.model.tensor.TensorType;
import io.kvtier.model.tensor.Weight;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The packed batched product ({@link PackedMatmul}, used by the vector kernels for batches of a
 * vector of rows or more) against the scalar reference, on random shapes with their edges: batch
 * rows not a multiple of the vector length or of the block (2 vectors), weight rows not a multiple
 * of the 8- and 4-row tiles, rows split into parts at multiples of 4 as the pool splits them; and
 * its form for encoded weights (Q8_0, Q4_0, F16, BF16 rows decoded into the tile).
 * Each case names its seed and shape on failure.
 */
class PackedMatmulTest {

    private static final int L = VectorKernels.S.length();
    private static final Kernels SCALAR = Kernels.scalar();
    private static final Kernels VECTOR = VectorKernels.INSTANCE;

    private final Arena arena = Arena.ofConfined();

    @AfterEach
    void close() {
        arena.close();
    }

    /** Batch sizes around every edge of the block layout at this JVM's vector length. */
    private static int[] batchSizes() {
        return new int[] {L, L + 1, 2 * L - 1, 2 * L, 2 * L + 1, 3 * L, 3 * L + 3, 4 * L + 1, 32, 33, 64 + 7};
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {101, 102, 103, 104, 105, 106})
    void agreesWithTheScalarKernelsOnRandomShapes(long seed) {
        Random r = new Random(seed);
        for (int n : batchSizes()) {
            int in = 1 + r.nextInt(r.nextBoolean() ? 40 : 300);
            int out = 1 + r.nextInt(80);
            float[] w = random(r, out * in);
            MemorySegment ws = segment(w);
            float[] x = random(r, n * in);
            float[] ref = new float[n * out];
            SCALAR.matmul(ws, in, out, x, n, ref, 0, out);

            float[] got = new float[n * out];
            float[] packed = new float[VECTOR.packedLength(n, in)];
            VECTOR.packRows(x, n, in, packed);
            int[] cuts = cuts(r, out);
            for (int c = 0; c + 1 < cuts.length; c++) {
                VECTOR.matmulPacked(ws, in, out, packed, n, got, cuts[c], cuts[c + 1]);
            }
            float[] unpacked = new float[n * out];
            VECTOR.matmul(ws, in, out, x, n, unpacked, 0, out);
            for (int i = 0; i < n; i++) {
                for (int o = 0; o < out; o++) {
                    double tol = tolerance(w, o * in, x, i * in, in);
                    String what = String.format("seed %d, in %d, out %d, n %d, L %d, y[%d][%d]", seed, in, out, n, L, i, o);
                    assertThat((double) got[i * out + o]).as(what).isCloseTo(ref[i * out + o], within(tol));
                    assertThat(unpacked[i * out + o]).as(what + " (unpacked call)").isEqualTo(got[i * out + o]);
                }
            }
        }
    }

    /**
     * Every output is the sequential fma sum over k, bit for bit, whichever tile or remainder
     * computed it: so the result does not depend on how rows are split across threads.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {201, 202, 203})
    void everyOutputIsTheSequentialFmaSumWhateverTheSplit(long seed) {
        Random r = new Random(seed);
        for (int n : batchSizes()) {
            int in = 1 + r.nextInt(200);
            int out = 1 + r.nextInt(70);
            float[] w = random(r, out * in);
            MemorySegment ws = segment(w);
            float[] x = random(r, n * in);
            float[] packed = new float[VECTOR.packedLength(n, in)];
            VECTOR.packRows(x, n, in, packed);
            float[] whole = new float[n * out];
            VECTOR.matmulPacked(ws, in, out, packed, n, whole, 0, out);
            float[] split = new float[n * out];
            int[] cuts = cuts(r, out);
            for (int c = 0; c + 1 < cuts.length; c++) {
                VECTOR.matmulPacked(ws, in, out, packed, n, split, cuts[c], cuts[c + 1]);
            }
            for (int i = 0; i < n; i++) {
                for (int o = 0; o < out; o++) {
                    float acc = 0f;
                    for (int k = 0; k < in; k++) {
                        acc = Math.fma(w[o * in + k], x[i * in + k], acc);
                    }
                    String what = String.format("seed %d, in %d, out %d, n %d, L %d, y[%d][%d]", seed, in, out, n, L, i, o);
                    assertThat(whole[i * out + o]).as(what).isEqualTo(acc);
                    assertThat(split[i * out + o]).as(what + " (split)").isEqualTo(acc);
                }
            }
        }
    }

    /**
     * Encoded weights (the forward pass's batched path for GGUF types): every output is the
     * sequential fma sum over k of the exactly dequantized weights ({@link ScalarDequant}) times
     * the activations, bit for bit, for the whole range and for rows split as the pool splits them.
     */
    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {301, 302, 303})
    void encodedWeightsGiveTheSequentialFmaSumOfTheirDequantizedValues(long seed) {
        Random r = new Random(seed);
        for (TensorType type : new TensorType[] {TensorType.Q8_0, TensorType.Q4_0, TensorType.F16, TensorType.BF16}) {
            for (int n : batchSizes()) {
                int in = 32 * (1 + r.nextInt(10));
                int out = 1 + r.nextInt(40);
                float[] values = random(r, out * in);
                ByteBuffer buf = ByteBuffer.allocate((int) type.rowBytes(in) * out).order(ByteOrder.LITTLE_ENDIAN);
                ScalarQuant.encode(type, values, 0, out * in, buf);
                Weight w = new Weight(type, MemorySegment.ofArray(buf.array()), out, in);
                float[] exact = new float[out * in];
                ScalarDequant.dequantize(type, w.data(), 0, exact, 0, out * in);
                float[] x = random(r, n * in);
                float[] packed = new float[PackedMatmul.packedLength(n, in)];
                PackedMatmul.pack(x, n, in, packed);
                float[] whole = new float[n * out];
                PackedMatmul.matmul(w, packed, n, whole, 0, out);
                float[] split = new float[n * out];
                int[] cuts = cuts(r, out);
                for (int c = 0; c + 1 < cuts.length; c++) {
                    PackedMatmul.matmul(w, packed, n, split, cuts[c], cuts[c + 1]);
                }
                for (int i = 0; i < n; i++) {
                    for (int o = 0; o < out; o++) {
                        float acc = 0f;
                        for (int k = 0; k < in; k++) {
                            acc = Math.fma(exact[o * in + k], x[i * in + k], acc);
                        }
                        String what = String.format("seed %d, %s, in %d, out %d, n %d, L %d, y[%d][%d]", seed, type, in, out,
                                n, L, i, o);
                        assertThat(whole[i * out + o]).as(what).isEqualTo(acc);
                        assertThat(split[i * out + o]).as(what + " (split)").isEqualTo(acc);
                    }
                }
            }
        }
    }

    @Test
    void packsOnlyBatchesOfAVectorOrMore() {
        assertThat(PackedMatmul.packs(L - 1)).isFalse();
        assertThat(PackedMatmul.packs(L)).isTrue();
        assertThat(VECTOR.packedLength(L - 1, 10)).isEqualTo((L - 1) * 10);
        // rounded up to whole vectors of batch rows
        assertThat(VECTOR.packedLength(L + 1, 10)).isEqualTo(2 * L * 10);
        assertThat(SCALAR.packedLength(L + 1, 10)).isEqualTo((L + 1) * 10);
    }

    @Test
    void computesAKnownProduct() {
        // W [3][2] = {{1,0},{0,1},{1,1}}; X [n][2] with row i = {i, 2i} -> Y[i] = {i, 2i, 3i}
        int n = 2 * L + 1;
        float[] x = new float[2 * n];
        for (int i = 0; i < n; i++) {
            x[2 * i] = i;
            x[2 * i + 1] = 2 * i;
        }
        float[] packed = new float[VECTOR.packedLength(n, 2)];
        VECTOR.packRows(x, n, 2, packed);
        float[] y = new float[3 * n];
        VECTOR.matmulPacked(segment(new float[] {1, 0, 0, 1, 1, 1}), 2, 3, packed, n, y, 0, 3);
        for (int i = 0; i < n; i++) {
            assertThat(new float[] {y[3 * i], y[3 * i + 1], y[3 * i + 2]}).as("row %d", i).containsExactly(i, 2 * i, 3 * i);
        }
    }

    /** Random cut points 0 = c0 < c1 < ... = out at multiples of 4, as {@link Parallel} cuts rows. */
    private static int[] cuts(Random r, int out) {
        int parts = 1 + r.nextInt(4);
        int[] c = new int[parts + 1];
        for (int p = 1; p < parts; p++) {
            c[p] = Math.max(c[p - 1], Math.min(out, r.nextInt(out + 1) / 4 * 4));
        }
        c[parts] = out;
        java.util.Arrays.sort(c);
        return c;
    }

    /** As {@code KernelsDifferentialTest}: {@code 1e-5 * sum|a_i b_i| + 1e-6}. */
    private static double tolerance(float[] a, int aOff, float[] b, int bOff, int n) {
        double s = 0;
        for (int i = 0; i < n; i++) {
            s += Math.abs((double) a[aOff + i] * b[bOff + i]);
        }
        return 1e-5 * s + 1e-6;
    }

    private static float[] random(Random r, int n) {
        float[] v = new float[n];
        for (int i = 0; i < n; i++) {
            v[i] = r.nextFloat() * 2 - 1;
        }
        return v;
    }

    private MemorySegment segment(float[] v) {
        MemorySegment s = arena.allocate((long) v.length * Float.BYTES, 4);
        MemorySegment.copy(v, 0, s, ValueLayout.JAVA_FLOAT_UNALIGNED.withOrder(java.nio.ByteOrder.LITTLE_ENDIAN), 0, v.length);
        return s;
    }
}
