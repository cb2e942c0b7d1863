package io.kvtier.replay.sim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.engine.ScheduledChunk;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reference setup's derived figures and the forward-pass roofline. */
class CostModelTest {

    private static final CostModel REF = CostModel.REFERENCE;

    private static ScheduledChunk chunk(int start, int tokens) {
        return new ScheduledChunk(0, new int[tokens], start, new int[0], true);
    }

    @Test
    void referenceFiguresFollowFromTheModelAndTheGpu() {
        assertThat(REF.kvBytesPerToken()).isEqualTo(131_072); // 32 layers x 8 KV heads x 128 x (K,V) x 2 B
        assertThat(REF.linearNanosPerToken()).isCloseTo(32_464, within(1.0));
        assertThat(REF.attentionNanosPerPair()).isCloseTo(1.3107, within(1e-4));
        assertThat(REF.weightReadNanos()).isCloseTo(5_992_537, within(1.0));
        assertThat(REF.kvReadNanosPerToken()).isCloseTo(48.907, within(1e-3));
        assertThat(REF.hostBytesPerSecond()).isEqualTo(50e9);
        assertThat(REF.contextTokens()).isEqualTo(131_072);
    }

    @Test
    void prefillIsComputeBoundWithACausalAttentionTerm() {
        // 8192 tokens from position 0: 0.5 ms + 8192 x 32.46 us + 8192 x 8193 / 2 pairs x 1.31 ns
        double expected = 500_000 + 8192 * REF.linearNanosPerToken() + 8192.0 * 8193 / 2 * REF.attentionNanosPerPair();
        assertThat(REF.forwardNanos(List.of(chunk(0, 8192)))).isEqualTo(Math.round(expected));
        assertThat(REF.prefillNanos(8192)).isEqualTo(Math.round(expected));
        // a chunk later in the prompt attends to everything before it
        double later = 500_000 + 1000 * REF.linearNanosPerToken() + (1000.0 * 5000 + 1000.0 * 1001 / 2) * REF.attentionNanosPerPair();
        assertThat(REF.forwardNanos(List.of(chunk(5000, 1000)))).isEqualTo(Math.round(later));
    }

    @Test
    void decodeIsBoundByReadingTheWeightsAndEachSequencesKv() {
        List<ScheduledChunk> batch = new ArrayList<>();
        for (int i = 0; i < 64; i++) {
            batch.add(chunk(4000, 1));
        }
        // 64 tokens of compute (2.1 ms) < one read of the weights (5.99 ms); KV reads dominate attention
        double expected = 500_000 + REF.weightReadNanos() + 64 * 4001 * REF.kvReadNanosPerToken();
        assertThat(REF.forwardNanos(batch)).isEqualTo(Math.round(expected));
        // at 256 sequences the matmuls' compute (8.3 ms) exceeds the weight read
        for (int i = 0; i < 192; i++) {
            batch.add(chunk(4000, 1));
        }
        double big = 500_000 + 256 * REF.linearNanosPerToken() + 256 * 4001 * REF.kvReadNanosPerToken();
        assertThat(REF.forwardNanos(batch)).isEqualTo(Math.round(big));
    }

    @Test
    void aTransferCostsLatencyPlusBytesOverBandwidth() {
        long block = 512L * 131_072; // 64 MiB
        assertThat(REF.hostTransferNanos(block)).isEqualTo(Math.round(10_000 + block / 50e9 * 1e9));
        assertThat(REF.hostTransferNanos(0)).isEqualTo(10_000);
    }

    @Test
    void rejectsNonsense() {
        assertThatThrownBy(() -> new CostModel("x", 0, 1, 1, 1, 1, 1, 1, 1, 1)).hasMessageContaining("KV bytes per token");
        assertThatThrownBy(() -> new CostModel("x", 1, -1, 1, 1, 1, 1, 1, 1, 1)).hasMessageContaining("linear");
        assertThatThrownBy(() -> new CostModel("x", 1, 1, 1, 1, 1, 1, 0, 1, 1)).hasMessageContaining("bandwidth");
    }
}
