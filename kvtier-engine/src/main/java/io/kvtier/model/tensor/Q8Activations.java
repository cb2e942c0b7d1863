package io.kvtier.model.tensor;

import static io.kvtier.model.tensor.QuantSpecies.F;
import static io.kvtier.model.tensor.QuantSpecies.L;
import static io.kvtier.model.tensor.QuantSpecies.S;

import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.IntVector;
import jdk.incubator.vector.ShortVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorShuffle;
import jdk.incubator.vector.VectorSpecies;

/**
 * Activation rows quantized to Q8_0 blocks, as llama.cpp does before a Q8_0 (or Q4_0) matrix
 * product ({@code quantize_row_q8_0}, its x86 form): per block of 32 values, {@code amax = max|x|},
 * the scale {@code d = amax / 127} rounded to half precision, and {@code q = rint(x * (127 / amax))}
 * (round half to even; 0 for an all-zero block), so every {@code q} lies in {@code [-127, 127]}.
 * The quants are kept in shorts, the layout {@link Int8Dot}'s kernels load directly.
 *
 * <p>One instance is scratch owned by one caller; {@link #quantize} grows it as needed.
 */
public final class Q8Activations {

    /** 1.5 * 2^23: added and taken away, rounds a float below 2^22 in magnitude to an integer, half to even (Math.rint). */
    private static final float RINT = 12582912f;
    /**
     * {@link #pairs}' order as a shuffle of a block's quants (shorts, little-endian ints): in each run of 8,
     * values 0-3 to the even shorts and 4-7 to the odd ones, so int {@code 4m + t} is values {@code 8m + t}
     * and {@code 8m + 4 + t}.
     */
    /** Ints of a short vector of {@link QuantSpecies#S}: L / 2 lanes. */
    private static final VectorSpecies<Integer> I2 = S.withLanes(int.class);
    private static final VectorShuffle<Short> PAIRS = VectorShuffle.fromOp(S,
            i -> 8 * (i / 8) + ((i & 1) == 0 ? (i % 8) / 2 : 4 + (i % 8) / 2));

    /** Quants, {@code [rows][cols]}, each in {@code [-127, 127]}. */
    short[] q = new short[0];
    /** Half-rounded block scales as floats, {@code [rows][cols / 32]}. */
    float[] d = new float[0];
    /**
     * Per activation row, what {@link Q4Interleaved}'s kernel reads, each row an array of its own
     * (C2 compiled that kernel with every activation broadcast loaded from memory only when a
     * row's values start at index 0 of their array): {@code pairs[row]} ({@code cols / 2} ints),
     * {@code offsets[row]} and {@code scales[row]} ({@code cols / 32} each).
     *
     * <p>{@code pairs}: the quants in the order the paired lanes meet them: int {@code 16b + 4m + t}
     * holds value {@code 32b + 8m + t} in its low 16 bits and value {@code 32b + 8m + 4 + t} in
     * its high 16 bits ({@code m, t < 4}). {@code offsets}: per block an int whose low 16 bits are
     * {@code -8} times the sum of the block's values {@code 8m + t} and whose high 16 bits are
     * {@code -8} times the sum of its values {@code 8m + 4 + t}, the 16 quants each half of a
     * paired lane meets; each at most {@code 8 * 16 * 127 = 16256} in magnitude, so a short.
     * {@code scales}: the rows' part of {@link #d}.
     */
    int[][] pairs = new int[0][];
    /**
     * Per activation row, what {@link Q8Interleaved}'s kernel broadcasts: int {@code j} holds
     * value {@code 2j} in its low 16 bits and value {@code 2j + 1} in its high 16 bits
     * ({@code cols / 2} ints).
     */
    int[][] adjacent = new int[0][];
    int[][] offsets = new int[0][];
    float[][] scales = new float[0][];
    private int cols;

    /**
     * Quantizes rows {@code 0..rows-1} of {@code x} ({@code [rows][cols]}, {@code cols} a multiple of 32).
     *
     * @throws IllegalArgumentException when {@code cols} is not a multiple of 32
     */
    public void quantize(float[] x, int rows, int cols) {
        if (cols % 32 != 0) {
            throw new IllegalArgumentException("Q8_0 activations need a multiple of 32 values, got " + cols);
        }
        int n = rows * cols;
        if (q.length < n) {
            q = new short[n];
            d = new float[n / 32];
        }
        if (pairs.length < rows || pairs[0].length != cols / 2) {
            pairs = new int[rows][cols / 2];
            adjacent = new int[rows][cols / 2];
            offsets = new int[rows][cols / 32];
            scales = new float[rows][cols / 32];
        }
        this.cols = cols;
        for (int b = 0; b < n / 32; b++) {
            int o = 32 * b;
            FloatVector abs = FloatVector.fromArray(F, x, o).abs();
            for (int k = L; k < 32; k += L) {
                abs = abs.max(FloatVector.fromArray(F, x, o + k).abs());
            }
            float amax = abs.reduceLanes(VectorOperators.MAX);
            d[b] = Float.float16ToFloat(Float.floatToFloat16(amax / 127f));
            float id = amax != 0 ? 127f / amax : 0f;
            for (int k = 0; k < 32; k += L) {
                // rint: |x * id| <= 127 < 2^22, so adding 1.5 * 2^23 rounds to an integer, half to even, exactly
                FloatVector v = FloatVector.fromArray(F, x, o + k).mul(id).add(RINT).sub(RINT);
                v.convertShape(VectorOperators.F2S, S, 0).reinterpretAsShorts().intoArray(q, o + k);
            }
            int row = b / (cols / 32);
            int rb = b % (cols / 32);
            // Each run of L quants: as ints for adjacent, shuffled for pairs, whose low and high
            // shorts are summed for the offsets (one reduction each per block).
            IntVector lows = IntVector.zero(I2);
            IntVector highs = lows;
            for (int k = 0; k < 32; k += L) {
                ShortVector qs = ShortVector.fromArray(S, q, o + k);
                qs.reinterpretAsInts().intoArray(adjacent[row], 16 * rb + k / 2);
                IntVector p = qs.rearrange(PAIRS).reinterpretAsInts();
                p.intoArray(pairs[row], 16 * rb + k / 2);
                lows = lows.add(p.lanewise(VectorOperators.LSHL, 16).lanewise(VectorOperators.ASHR, 16));
                highs = highs.add(p.lanewise(VectorOperators.ASHR, 16));
            }
            int low = lows.reduceLanes(VectorOperators.ADD);
            int high = highs.reduceLanes(VectorOperators.ADD);
            offsets[row][rb] = (-8 * low & 0xFFFF) | (-8 * high << 16);
            scales[row][rb] = d[b];
        }
    }

    /** The pair int {@code k} ({@code < cols / 2}) of row {@code row}, as {@link #pairs} holds it (for tests). */
    public int pairs(int row, int k) {
        return pairs[row][k];
    }

    /** Values per row of the last {@link #quantize}. */
    public int cols() {
        return cols;
    }

    /** The {@code - 8} int of block {@code b} of row {@code row}, as {@link #offsets} holds it (for tests). */
    public int offsets(int row, int b) {
        return offsets[row][b];
    }

    /** The quantized value {@code j} of row {@code row} (for tests). */
    public int quant(int row, int j) {
        return q[row * cols + j];
    }

    /** The (half-rounded) scale of block {@code b} of row {@code row} (for tests). */
    public float scale(int row, int b) {
        return d[row * cols / 32 + b];
    }
}
