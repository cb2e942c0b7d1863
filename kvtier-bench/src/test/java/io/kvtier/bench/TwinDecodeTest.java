package io.kvtier.bench;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.OffloadSetup;
import io.kvtier.engine.ReferenceRecords;
import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.offload.OffloadConfig;
import org.junit.jupiter.api.Test;

/**
 * {@code bench offload}'s twin: both engines decode the same tokens of the same waves (checked by
 * the twin itself, which throws otherwise), the measured tokens are the decode tokens of every
 * request on both sides, and "on" stores every full block.
 */
class TwinDecodeTest {

    @Test
    void bothSidesDecodeTheSameWavesAndOnStoresEveryFullBlock() {
        int batch = 2;
        int tierChunks;
        try (Model cp = Models.load(ReferenceRecords.model())) {
            tierChunks = 2 * TwinDecode.deviceBlocks(cp, batch);
        }
        OffloadSetup on = new OffloadSetup(0, tierChunks, "lru", OffloadConfig.DEFAULT.withOffloadPromptOnly(false));
        try (TwinDecode twin = new TwinDecode(ReferenceRecords.model(), 1, batch, on, 1)) {
            TwinDecode.Cost off = new TwinDecode.Cost();
            TwinDecode.Cost onCost = new TwinDecode.Cost();
            twin.run(0, off, onCost); // one wave
            // 256 tokens per request, the first sampled by the prefill step, which is not measured
            assertThat(off.tokens).isEqualTo(batch * 255L);
            assertThat(onCost.tokens).isEqualTo(off.tokens);
            // KV for 2 + 256 - 1 = 257 positions: 16 full blocks of 16 per request, each its own chunk
            assertThat(twin.chunksStored()).isEqualTo(batch * 16L);
            assertThat(off.engineCpu).isPositive();
            assertThat(onCost.engineCpu).isPositive();
            assertThat(off.transferCpu).as("the off engine has no transfer thread").isZero();
            // The forward passes are timed inside each measured turn: part of its wall time, never all of it
            assertThat(off.forward).isPositive().isLessThan(off.wall);
            assertThat(onCost.forward).isPositive().isLessThan(onCost.wall);
            // The on engine's own offloading work, per stored block: the wave's 32 blocks, each decided,
            // copied and completed on the engine thread; the off side has none of it
            assertThat(onCost.storedBlocks).isEqualTo(batch * 16L);
            assertThat(onCost.decideNanos).isPositive();
            assertThat(onCost.copyNanos).isPositive();
            assertThat(onCost.completeNanos).isPositive();
            assertThat(off.storedBlocks + off.decideNanos + off.copyNanos + off.completeNanos).isZero();
        }
    }
}
