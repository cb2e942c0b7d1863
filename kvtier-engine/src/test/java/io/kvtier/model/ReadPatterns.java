package io.kvtier.model;

import java.lang.foreign.MemorySegment;
import java.nio.ByteOrder;
import jdk.incubator.vector.FloatVector;
import jdk.incubator.vector.VectorOperators;
import jdk.incubator.vector.VectorSpecies;

/**
 * Other ways to stream a buffer of floats than the bound's read pass ({@link VectorKernels#sumStreams}:
 * four streams, four vectors a stream per trip), for {@link MatvecReadComparison}: each only adds
 * what it reads, over {@code bytes} bytes (a multiple of 4 KiB x the streams, or the last bytes
 * are not read). The streams of a pattern are {@code bytes / streams} apart, rounded down to 4 KiB.
 */
final class ReadPatterns {

    private static final VectorSpecies<Float> S = VectorKernels.S;
    private static final int L = S.length();
    private static final ByteOrder LE = ByteOrder.LITTLE_ENDIAN;

    private ReadPatterns() {
    }

    /** The read pass before speed12: rows of {@code in} floats, 4 adjacent rows at a time, two vectors a row per trip. */
    static float adjacentRows4(MemorySegment w, long rowBytes, int in, int rows) {
        FloatVector s0 = FloatVector.zero(S), s1 = s0, s2 = s0, s3 = s0, t0 = s0, t1 = s0, t2 = s0, t3 = s0;
        for (int r = 0; r + 4 <= rows; r += 4) {
            long o0 = r * rowBytes, o1 = o0 + rowBytes, o2 = o1 + rowBytes, o3 = o2 + rowBytes;
            for (int k = 0; k + 2 * L <= in; k += 2 * L) {
                long kb = (long) k * Float.BYTES, kc = kb + L * 4L;
                s0 = FloatVector.fromMemorySegment(S, w, o0 + kb, LE).add(s0);
                s1 = FloatVector.fromMemorySegment(S, w, o1 + kb, LE).add(s1);
                s2 = FloatVector.fromMemorySegment(S, w, o2 + kb, LE).add(s2);
                s3 = FloatVector.fromMemorySegment(S, w, o3 + kb, LE).add(s3);
                t0 = FloatVector.fromMemorySegment(S, w, o0 + kc, LE).add(t0);
                t1 = FloatVector.fromMemorySegment(S, w, o1 + kc, LE).add(t1);
                t2 = FloatVector.fromMemorySegment(S, w, o2 + kc, LE).add(t2);
                t3 = FloatVector.fromMemorySegment(S, w, o3 + kc, LE).add(t3);
            }
        }
        return s0.add(t0).add(s1.add(t1)).add(s2.add(t2).add(s3.add(t3))).reduceLanes(VectorOperators.ADD);
    }

    /** One stream, eight vectors a trip. */
    static float linear8(MemorySegment w, long bytes) {
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        long step = 8L * L * 4;
        for (long o = 0; o + step <= bytes; o += step) {
            a0 = FloatVector.fromMemorySegment(S, w, o, LE).add(a0);
            a1 = FloatVector.fromMemorySegment(S, w, o + 4 * L, LE).add(a1);
            a2 = FloatVector.fromMemorySegment(S, w, o + 8 * L, LE).add(a2);
            a3 = FloatVector.fromMemorySegment(S, w, o + 12 * L, LE).add(a3);
            b0 = FloatVector.fromMemorySegment(S, w, o + 16 * L, LE).add(b0);
            b1 = FloatVector.fromMemorySegment(S, w, o + 20 * L, LE).add(b1);
            b2 = FloatVector.fromMemorySegment(S, w, o + 24 * L, LE).add(b2);
            b3 = FloatVector.fromMemorySegment(S, w, o + 28 * L, LE).add(b3);
        }
        return a0.add(a1).add(a2.add(a3)).add(b0.add(b1).add(b2.add(b3))).reduceLanes(VectorOperators.ADD);
    }

    /** Two streams, four vectors a stream per trip. */
    static float streams2x4(MemorySegment w, long bytes) {
        long q = bytes / 2 / 4096 * 4096;
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (long o = 0; o + 16L * L <= q; o += 16L * L) {
            long p = o + q;
            a0 = FloatVector.fromMemorySegment(S, w, o, LE).add(a0);
            a1 = FloatVector.fromMemorySegment(S, w, o + 4 * L, LE).add(a1);
            a2 = FloatVector.fromMemorySegment(S, w, o + 8 * L, LE).add(a2);
            a3 = FloatVector.fromMemorySegment(S, w, o + 12 * L, LE).add(a3);
            b0 = FloatVector.fromMemorySegment(S, w, p, LE).add(b0);
            b1 = FloatVector.fromMemorySegment(S, w, p + 4 * L, LE).add(b1);
            b2 = FloatVector.fromMemorySegment(S, w, p + 8 * L, LE).add(b2);
            b3 = FloatVector.fromMemorySegment(S, w, p + 12 * L, LE).add(b3);
        }
        return a0.add(a1).add(a2.add(a3)).add(b0.add(b1).add(b2.add(b3))).reduceLanes(VectorOperators.ADD);
    }

    /** Four streams, eight vectors a stream per trip. */
    static float streams4x8(MemorySegment w, long bytes) {
        long q = bytes / 4 / 4096 * 4096;
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (long o = 0; o + 32L * L <= q; o += 32L * L) {
            for (int s = 0; s < 4; s++) {
                long p = o + s * q;
                a0 = FloatVector.fromMemorySegment(S, w, p, LE).add(a0);
                a1 = FloatVector.fromMemorySegment(S, w, p + 4 * L, LE).add(a1);
                a2 = FloatVector.fromMemorySegment(S, w, p + 8 * L, LE).add(a2);
                a3 = FloatVector.fromMemorySegment(S, w, p + 12 * L, LE).add(a3);
                b0 = FloatVector.fromMemorySegment(S, w, p + 16 * L, LE).add(b0);
                b1 = FloatVector.fromMemorySegment(S, w, p + 20 * L, LE).add(b1);
                b2 = FloatVector.fromMemorySegment(S, w, p + 24 * L, LE).add(b2);
                b3 = FloatVector.fromMemorySegment(S, w, p + 28 * L, LE).add(b3);
            }
        }
        return a0.add(a1).add(a2.add(a3)).add(b0.add(b1).add(b2.add(b3))).reduceLanes(VectorOperators.ADD);
    }

    /** Six streams, two vectors a stream per trip. */
    static float streams6x2(MemorySegment w, long bytes) {
        long q = bytes / 6 / 4096 * 4096;
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
        for (long o = 0; o + 8L * L <= q; o += 8L * L) {
            for (int half = 0; half < 2; half++) {
                long p = o + half * 4L * L;
                a0 = FloatVector.fromMemorySegment(S, w, p, LE).add(a0);
                a1 = FloatVector.fromMemorySegment(S, w, p + q, LE).add(a1);
                a2 = FloatVector.fromMemorySegment(S, w, p + 2 * q, LE).add(a2);
                a3 = FloatVector.fromMemorySegment(S, w, p + 3 * q, LE).add(a3);
                a4 = FloatVector.fromMemorySegment(S, w, p + 4 * q, LE).add(a4);
                a5 = FloatVector.fromMemorySegment(S, w, p + 5 * q, LE).add(a5);
            }
        }
        return a0.add(a1).add(a2.add(a3)).add(a4.add(a5)).reduceLanes(VectorOperators.ADD);
    }

    /** Eight streams, two vectors a stream per trip. */
    static float streams8x2(MemorySegment w, long bytes) {
        long q = bytes / 8 / 4096 * 4096;
        FloatVector a0 = FloatVector.zero(S), a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0, b2 = a0, b3 = a0;
        for (long o = 0; o + 8L * L <= q; o += 8L * L) {
            for (int half = 0; half < 2; half++) {
                long p = o + half * 4L * L;
                a0 = FloatVector.fromMemorySegment(S, w, p, LE).add(a0);
                a1 = FloatVector.fromMemorySegment(S, w, p + q, LE).add(a1);
                a2 = FloatVector.fromMemorySegment(S, w, p + 2 * q, LE).add(a2);
                a3 = FloatVector.fromMemorySegment(S, w, p + 3 * q, LE).add(a3);
                b0 = FloatVector.fromMemorySegment(S, w, p + 4 * q, LE).add(b0);
                b1 = FloatVector.fromMemorySegment(S, w, p + 5 * q, LE).add(b1);
                b2 = FloatVector.fromMemorySegment(S, w, p + 6 * q, LE).add(b2);
                b3 = FloatVector.fromMemorySegment(S, w, p + 7 * q, LE).add(b3);
            }
        }
        return a0.add(a1).add(a2.add(a3)).add(b0.add(b1).add(b2.add(b3))).reduceLanes(VectorOperators.ADD);
    }
}
