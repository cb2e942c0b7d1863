package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** The default device pool: sized from the requests (generate) or from context x max running (serve). */
class EngineOptionsTest {

    private static final long MIB = 1 << 20;

    @Test
    void generateHoldsEveryRequestAtItsLongestWithinTwoGibibytes() {
        assertThat(EngineOptions.requestBlocks(new long[] {17, 3, 5}, 3, MIB)).isEqualTo(25);
        assertThat(EngineOptions.requestBlocks(new long[] {}, 3, MIB)).isEqualTo(1);
        // 2 GiB of 1 MiB blocks is 2,048: 3,000 requested blocks are capped...
        assertThat(EngineOptions.requestBlocks(new long[] {1000, 1000, 1000}, 3, MIB)).isEqualTo(2048);
        // ...but never below the largest request, which must fit alone.
        assertThat(EngineOptions.requestBlocks(new long[] {3000, 10}, 2, MIB)).isEqualTo(3000);
    }

    @Test
    void generateHoldsOnlyTheLargestOfThoseThatRunAtOnce() {
        // --sequential: one at a time, so the largest request is room enough
        assertThat(EngineOptions.requestBlocks(new long[] {5, 17, 3}, 1, MIB)).isEqualTo(17);
        // --max-running 2 of four requests: the two largest, whichever run together
        assertThat(EngineOptions.requestBlocks(new long[] {5, 17, 3, 9}, 2, MIB)).isEqualTo(26);
        assertThat(EngineOptions.requestBlocks(new long[] {5, 17, 3, 9}, 10, MIB)).isEqualTo(34);
    }

    @Test
    void serveHoldsAContextPerRunningRequestWithinTwoGibibytes() {
        assertThat(EngineOptions.servingBlocks(64, 4, MIB)).isEqualTo(256);
        assertThat(EngineOptions.servingBlocks(64, 256, MIB)).isEqualTo(2048);
        assertThat(EngineOptions.servingBlocks(4096, 256, MIB)).as("at least one context").isEqualTo(4096);
    }
}
