package io.kvtier.model;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** The read pass reads every byte it is given (whole groups of 4 rows, whole vectors), at every thread count. */
class RowReaderTest {

    @ParameterizedTest(name = "{0} threads")
    @ValueSource(ints = {1, 2, 3})
    void readsEveryFloatOfWholeRowGroupsOnce(int threads) {
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
            // rows past the last whole group of 4 are not read
            assertThat(reader.read(w, rowFloats, 6)).isEqualTo(rowFloats * (1 + 2 + 3 + 4) / 64f);
        }
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
