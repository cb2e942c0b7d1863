package io.kvtier.model.tensor;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;

/**
 * Finds the first infinite or NaN value of a tensor's data. A NaN weight makes every logit NaN,
 * which greedy sampling turns into token 0 ({@code <unk>}) for ever: a model holding one is
 * refused at load instead. Float types are checked value by value; quantized types through
 * their block scales (Q8_0 and Q4_0 {@code d}, Q4_K {@code d} and {@code dmin}, Q6_K {@code d}),
 * the only float fields their blocks hold (ggml's layouts, see {@link ScalarDequant}).
 *
 * <p>The data is read in pieces of {@link #PIECE} values through a small method, so that the
 * JIT compiles it by invocation count even where on-stack replacement is off (the launcher's
 * {@code generate}).
 */
public final class FiniteCheck {

    private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
    static final int PIECE = 4096;

    private FiniteCheck() {
    }

    /**
     * The first non-finite value of a tensor.
     *
     * @param element     index of the value (for a quantized type, of its block's first value)
     * @param description a phrase such as {@code "NaN (first at element 1234)"} or
     *                    {@code "an infinite scale (block 3, elements 96..127)"}
     */
    public record Found(long element, String description) {
    }

    /**
     * The first non-finite value of {@code values} values of {@code type} at the start of
     * {@code data}; null when all are finite.
     *
     * @throws IllegalArgumentException when {@code data} is shorter than {@code values} values
     */
    public static Found firstNonFinite(TensorType type, MemorySegment data, long values) {
        long bytes = type.rowBytes(values);
        if (data.byteSize() < bytes) {
            throw new IllegalArgumentException(values + " " + type + " values need " + bytes + " bytes, the data has "
                    + data.byteSize());
        }
        return switch (type) {
            case F32 -> floats(data, values);
            case F16 -> halves(data, values, 0x7c00, 0x3ff);
            case BF16 -> halves(data, values, 0x7f80, 0x7f);
            case Q8_0, Q4_0 -> scales(type, data, values, 0, -1);
            case Q4_K -> scales(type, data, values, 0, 2);
            case Q6_K -> scales(type, data, values, type.blockBytes() - 2, -1);
        };
    }

    private static Found floats(MemorySegment data, long values) {
        for (long start = 0; start < values; start += PIECE) {
            long at = floatPiece(data, start, Math.min(values, start + PIECE));
            if (at >= 0) {
                int bits = data.get(INT, at * 4);
                return new Found(at, kind((bits & 0x7fffff) != 0) + " (first at element " + at + ")");
            }
        }
        return null;
    }

    /** The first element in {@code [from, to)} whose exponent bits are all ones, or -1. */
    private static long floatPiece(MemorySegment data, long from, long to) {
        for (long i = from; i < to; i++) {
            if ((data.get(INT, i * 4) & 0x7f800000) == 0x7f800000) {
                return i;
            }
        }
        return -1;
    }

    /** 16-bit floats (IEEE half or bfloat16): {@code exponent} is the exponent mask. */
    private static Found halves(MemorySegment data, long values, int exponent, int mantissa) {
        for (long start = 0; start < values; start += PIECE) {
            long at = halfPiece(data, start, Math.min(values, start + PIECE), exponent);
            if (at >= 0) {
                int bits = data.get(SHORT, at * 2);
                return new Found(at, kind((bits & mantissa) != 0) + " (first at element " + at + ")");
            }
        }
        return null;
    }

    private static long halfPiece(MemorySegment data, long from, long to, int exponent) {
        for (long i = from; i < to; i++) {
            if ((data.get(SHORT, i * 2) & exponent) == exponent) {
                return i;
            }
        }
        return -1;
    }

    /**
     * The F16 scale at byte {@code scale} of each block, and a second one {@code second} bytes
     * after it when {@code second > 0} (Q4_K's {@code dmin}).
     */
    private static Found scales(TensorType type, MemorySegment data, long values, int scale, int second) {
        long blocks = values / type.blockValues();
        for (long start = 0; start < blocks; start += PIECE) {
            long at = scalePiece(data, type.blockBytes(), start, Math.min(blocks, start + PIECE), scale, second);
            if (at >= 0) {
                long base = at * type.blockBytes() + scale;
                int bits = data.get(SHORT, base);
                if ((bits & 0x7c00) != 0x7c00) {
                    bits = data.get(SHORT, base + second);
                }
                long first = at * type.blockValues();
                return new Found(first, ((bits & 0x3ff) != 0 ? "a NaN" : "an infinite") + " scale (block " + at
                        + ", elements " + first + ".." + (first + type.blockValues() - 1) + ")");
            }
        }
        return null;
    }

    private static long scalePiece(MemorySegment data, int blockBytes, long from, long to, int scale, int second) {
        for (long b = from; b < to; b++) {
            long base = b * blockBytes + scale;
            if ((data.get(SHORT, base) & 0x7c00) == 0x7c00 || second > 0 && (data.get(SHORT, base + second) & 0x7c00) == 0x7c00) {
                return b;
            }
        }
        return -1;
    }

    private static String kind(boolean nan) {
        return nan ? "NaN" : "an infinite value";
    }
}
