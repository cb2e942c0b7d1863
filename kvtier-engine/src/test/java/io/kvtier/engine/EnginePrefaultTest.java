package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.memory.ReservedMemory;
import java.util.List;
import org.junit.jupiter.api.Test;

/** generate makes its job's device blocks resident before the first step (no page faults mid-step). */
class EnginePrefaultTest {

    @Test
    void theBlocksTheRequestsCanWriteAreMadeResidentAndTheOutputsAreUnchanged() {
        assumeTrue(ReservedMemory.lazy(), "needs Linux (mmap)");
        EngineConfig config = FingerprintEngines.config(4, 64);
        try (Engine e = FingerprintEngines.engine(config)) {
            // KV slots: 5 + 8 - 1 = 12 positions (3 blocks of 4) and 3 + 2 - 1 = 4 (1 block).
            List<Request> requests = List.of(
                    new Request(0, new int[] {3, 5, 7, 9, 11}, 8, SamplingParams.GREEDY, ExtraKeys.NONE),
                    new Request(1, new int[] {4, 6, 8}, 2, SamplingParams.GREEDY, ExtraKeys.NONE));
            long block = e.pool().layout().bytesPerBlock();
            assertThat(e.pool().residentBytes()).isZero();

            e.prefault(requests, Long.MAX_VALUE);

            // mincore counts whole pages: 4 blocks, rounded up to the page that holds the last byte.
            assertThat(e.pool().residentBytes()).isBetween(4 * block, 4 * block + 4095);
            requests.forEach(e::submit);
            List<Request> done = e.runToCompletion();
            assertThat(done).hasSize(2);
            FingerprintEngines.assertMatchReferences(done);
            assertThatThrownBy(() -> e.prefault(requests, Long.MAX_VALUE)).isInstanceOf(IllegalStateException.class);
        }
    }

    @Test
    void theBoundStopsThePrefaultAtWholeBlocks() {
        assumeTrue(ReservedMemory.lazy(), "needs Linux (mmap)");
        // Blocks of 1 KiB (16 positions of the fingerprint layout): 13 wanted, 5 allowed, 4 pages against 2.
        EngineConfig config = FingerprintEngines.config(16, 64);
        try (Engine e = FingerprintEngines.engine(config)) {
            long block = e.pool().layout().bytesPerBlock();
            List<Request> requests = List.of(new Request(0, new int[] {3, 5, 7}, 200, SamplingParams.GREEDY, ExtraKeys.NONE));
            e.prefault(requests, 5 * block + 1);
            assertThat(e.pool().residentBytes()).isBetween(5 * block, 5 * block + 4095);
        }
    }
}
