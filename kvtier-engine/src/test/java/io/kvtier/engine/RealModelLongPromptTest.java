package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Checkpoint;
import io.kvtier.model.Kernels;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.offload.OffloadStats;
import io.kvtier.tier.disk.DiskFsync;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 15 on the real model (stories260K, 16-token blocks): a prompt of 15 full blocks before its
 * last token and a host tier of 8 chunks. Its repeat, with the device prefix cache dropped, loads
 * the 8-chunk prefix from the host tier, and after a restart from the disk; every output equals
 * the output of an engine without any cache.
 */
class RealModelLongPromptTest {

    private static final int MAX_TOKENS = 8;
    private static int[] prompt;
    private static int[] expected;

    @TempDir
    Path dir;

    @BeforeAll
    static void reference() {
        List<Record> records = ReferenceRecords.load();
        // The reference prompts' ids, one after another, cut to 15 blocks and one token.
        IntStream ids = IntStream.empty();
        for (int i = 0; i < 6; i++) {
            for (Record r : records) {
                ids = IntStream.concat(ids, IntStream.of(r.promptIds()));
            }
        }
        prompt = ids.limit(15 * 16 + 1).toArray();
        assertThat(prompt).hasSize(241);
        try (Engine e = engine(OffloadSetup.OFF)) {
            expected = run(e).outputIds();
        }
        assertThat(expected).hasSize(MAX_TOKENS);
    }

    private static Engine engine(OffloadSetup setup) {
        return LlamaRunner.engine(Checkpoint.load(ReferenceRecords.model()), EngineConfig.of(16, 64), Kernels.best(), 2, setup);
    }

    private static Request run(Engine e) {
        e.resetDevicePrefixCache();
        Request r = new Request(0, prompt, MAX_TOKENS, SamplingParams.GREEDY, ExtraKeys.NONE);
        e.submit(r);
        e.runToCompletion();
        e.drainTransfers();
        return r;
    }

    private OffloadSetup eightChunks(boolean disk) {
        return new OffloadSetup(0, 8, "lru", OffloadConfig.DEFAULT, disk
                ? new OffloadSetup.DiskSetup(dir, 1L << 30, DiskWritePolicy.THROUGH, DiskFsync.NONE, 1, null) : null);
    }

    @Test
    void theRepeatHitsTheEightChunkPrefixFromTheHostTier() {
        try (Engine e = engine(eightChunks(false))) {
            assertThat(run(e).outputIds()).containsExactly(expected);
            Request again = run(e);
            assertThat(again.outputIds()).containsExactly(expected);
            assertThat(again.externalHitTokens()).isEqualTo(Map.of("host", 128));
            // 7 blocks beyond the host tier's 8 chunks, once per request
            assertThat(e.offload().stats().blocksNotStored()).containsEntry(OffloadStats.LONGER_THAN_HOST, 14L);
            assertThat(e.offload().stats().loadFailures()).isZero();
        }
    }

    @Test
    void afterARestartTheEightChunkPrefixComesFromTheDisk() {
        try (Engine e = engine(eightChunks(true))) {
            assertThat(run(e).outputIds()).containsExactly(expected);
            assertThat(e.offload().stats().blocksStored()).containsEntry("disk", 8L);
        }
        try (Engine e = engine(eightChunks(true))) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            Request r = run(e);
            assertThat(r.outputIds()).containsExactly(expected);
            assertThat(r.externalHitTokens()).isEqualTo(Map.of("disk", 128));
        }
    }
}
