package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The read pass reads every float it is given, once, at every thread count. */
class RowReaderTest {

    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2, 3})
    void readsEveryFloatOnce(int threads) {
        int rowFloats = 288, rows = 256;   // 288 = 9 vectors of 32, 18 of 16, 36 of 8: no row tail at any width
        try (Arena arena = Arena.ofShared(); RowReader reader = new RowReader(threads)) {
            MemorySegment w = arena.allocate((long) rowFloats * rows * Float.BYTES, 64);
            for (long i = 0; i < (long) rowFloats * rows; i++) {
                // row r holds r+1 (sums of small integers are exact in float)
                w.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) (i / rowFloats + 1) / 64f);
            }
            float expected = rowFloats * (rows * (rows + 1) / 2f) / 64f;
            assertThat(reader.threads()).isEqualTo(threads);
            for (int round = 0; round < 20; round++) {
                assertThat(reader.read(w, rowFloats, rows)).as("round %d", round).isEqualTo(expected);
            }
            assertThat(RowReader.readOnCaller(w, rowFloats, rows)).isEqualTo(expected);
            // rows past the last whole group of 4 are read too
            assertThat(reader.read(w, rowFloats, 6)).isEqualTo(rowFloats * (1 + 2 + 3 + 4 + 5 + 6) / 64f);
        }
    }

    /** A copy across the threads writes every byte of the rows asked and none after them. */
    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2, 3})
    void copiesEveryRowOnceAcrossTheThreads(int threads) {
        int rowFloats = 291, rows = 203;
        long bytes = (long) rowFloats * rows * Float.BYTES;
        try (Arena arena = Arena.ofShared(); RowReader reader = new RowReader(threads)) {
            MemorySegment src = arena.allocate(bytes, 64);
            MemorySegment dst = arena.allocate(bytes, 64);
            for (long i = 0; i < bytes; i++) {
                src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + 7));
            }
            dst.fill((byte) -1);
            reader.copy(src, dst, rowFloats, rows - 1);
            long copied = (long) rowFloats * (rows - 1) * Float.BYTES;
            assertThat(dst.asSlice(0, copied).mismatch(src.asSlice(0, copied))).isEqualTo(-1L);
            for (long i = copied; i < bytes; i++) {
                assertThat(dst.get(ValueLayout.JAVA_BYTE, i)).as("byte %d after the rows", i).isEqualTo((byte) -1);
            }
        }
    }

    /**
     * Rows that are not whole vectors (291 floats), few rows (one part: less than four trips a
     * stream) and many (the four streams and the linear rest): each float is summed once.
     */
    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2, 3})
    void readsRowsThatAreNotWholeVectors(int threads) {
        int rowFloats = 291, rows = 203;
        try (Arena arena = Arena.ofShared(); RowReader reader = new RowReader(threads)) {
            MemorySegment w = arena.allocate((long) rowFloats * rows * Float.BYTES, 64);
            for (long i = 0; i < (long) rowFloats * rows; i++) {
                w.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) (i % 7 + 1) / 8f);   // exact sums
            }
            for (int n : new int[] {1, 3, 5, 64, 203}) {
                double expected = 0;
                for (long i = 0; i < (long) rowFloats * n; i++) {
                    expected += (i % 7 + 1) / 8.0;
                }
                assertThat((double) reader.read(w, rowFloats, n)).as("%d rows", n).isEqualTo(expected);
                assertThat((double) RowReader.readOnCaller(w, rowFloats, n)).as("%d rows on the caller", n).isEqualTo(expected);
            }
        }
    }

    /** Where the 12 FMA chains of the compute pass start (RowReader.fmaChains). */
    private static final float[] STARTS = {0.50f, 0.51f, 0.52f, 0.53f, 0.54f, 0.55f, 0.56f, 0.57f, 0.58f, 0.59f, 0.60f, 0.61f};

    /**
     * The compute pass does its multiply-adds: each of the 12 chains of every lane is the float
     * recurrence {@code a = fma(0.9999, a, 1e-5)} from its own start, and a pass cut into parts
     * restarts the chains in each part (so n parts of one unit sum n one-unit results).
     */
    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2, 3})
    void computeRunsEveryChainOfEveryUnit(int threads) {
        int lanes = VectorKernels.S.length();   // the compute pass runs at the kernels' width
        assertThat(RowReader.multiplyAddsPerUnit()).isEqualTo(4096L * 12 * lanes);
        double starts = 0, oneUnit = 0;
        for (float a : STARTS) {
            starts += (double) a * lanes;
            for (int t = 0; t < 4096; t++) {
                a = Math.fma(0.9999f, a, 1e-5f);
            }
            oneUnit += (double) a * lanes;
        }
        // each chain goes a third of the way from its start to 1e-5 / (1 - 0.9999) = 0.1 (0.9999^4096 = 0.66): the trips ran
        assertThat(oneUnit).isBetween(starts * 0.70, starts * 0.75);
        assertThat((double) RowReader.computeOnCaller(0)).isCloseTo(starts, within(starts * 1e-6));
        assertThat((double) RowReader.computeOnCaller(1)).isCloseTo(oneUnit, within(oneUnit * 1e-6));
        try (RowReader reader = new RowReader(threads)) {
            assertThat(reader.compute(1)).isEqualTo(RowReader.computeOnCaller(1));   // one part: on the caller
            int units = Parallel.PARTS_PER_THREAD * threads;   // parts of 1 unit each; 1 thread: one part of all
            double expected = threads == 1 ? RowReader.computeOnCaller(units) : units * oneUnit;
            assertThat((double) reader.compute(units)).isCloseTo(expected, within(expected * 1e-5));
        }
        assertThatThrownBy(() -> RowReader.computeOnCaller(-1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 0");
    }

    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {0, -1})
    void refusesNoThreads(int threads) {
        assertThatThrownBy(() -> new RowReader(threads)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("at least 1");
    }

    @org.junit.jupiter.api.Test
    void refusesRowsOutsideTheSegment() {
        try (Arena arena = Arena.ofConfined(); RowReader reader = new RowReader(1)) {
            MemorySegment w = arena.allocate(288 * 4 * 4);
            assertThatThrownBy(() -> reader.read(w, 288, 5)).isInstanceOf(IndexOutOfBoundsException.class)
                    .hasMessageContaining("5 rows of 288 floats do not fit in 4608 bytes");
        }
    }
}
