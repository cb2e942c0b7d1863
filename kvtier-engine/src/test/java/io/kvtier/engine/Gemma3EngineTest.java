package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.ExtraKeys;
import io.kvtier.model.Kernels;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.model.gguf.LlamaCppReference;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The gemma3 fixture of {@code models/gguf-ref/} (sliding window 16, five local layers to one
 * global) through the engine's batching, prefix cache and preemption: every run must give
 * llama.cpp's 32 greedy tokens of each of its three prompts (the 422-token one spans 26 windows).
 * The offload tiers are covered by {@link GgufEngineTest}'s gemma3 case.
 */
class Gemma3EngineTest {

    static final Path MODEL = LlamaCppReference.folder().resolve("gemma3-spm515-f32.gguf");
    static final List<LlamaCppReference> REFS =
            LlamaCppReference.load(LlamaCppReference.folder().resolve("gemma3-spm515-f32.ref.jsonl"));

    @TempDir
    Path tmp;

    private Engine engine(EngineConfig config) {
        return LlamaRunner.engine(Models.load(MODEL, new DigestCache(tmp)), config.withStopToken(-1), Kernels.best(), 2);
    }

    private static List<Request> submitAll(Engine e) {
        List<Request> rs = new ArrayList<>();
        for (int i = 0; i < REFS.size(); i++) {
            Request r = new Request(i, REFS.get(i).promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(r);
            rs.add(r);
        }
        e.runToCompletion();
        for (int i = 0; i < rs.size(); i++) {
            assertThat(rs.get(i).outputIds()).as("prompt %s", REFS.get(i).promptKind())
                    .containsExactly(REFS.get(i).generatedIds());
        }
        return rs;
    }

    @Test
    void allPromptsAtOnceGiveLlamaCppsTokens() {
        assertThat(REFS).hasSize(3);
        assertThat(REFS.get(2).promptIds()).hasSize(422);
        try (Engine e = engine(EngineConfig.of(16, 256))) {
            submitAll(e);
            assertThat(e.stats().preemptions()).isZero();
        }
    }

    @ParameterizedTest(name = "block size {0}, {1} device blocks, prefill chunk {2}")
    @CsvSource({"16, 36, 512", "8, 70, 64", "32, 15, 16"})
    void aTinyDevicePoolPreemptsAndRecomputes(int blockSize, int blocks, int chunk) {
        try (Engine e = engine(EngineConfig.of(blockSize, blocks).withMaxBatchTokens(chunk))) {
            submitAll(e);
            assertThat(e.stats().preemptions()).as("preemptions").isPositive();
        }
    }

    /**
     * The long prompt, then the long prompt followed by its first 10 greedy tokens (432 tokens):
     * the second request hits 26 of the first one's blocks on the device (a 27th would cover its
     * last prompt token, which is never a hit) and must continue with llama.cpp's tokens 10..31.
     */
    @Test
    void aDevicePrefixHitContinuesWithLlamaCppsTokens() {
        LlamaCppReference ref = REFS.get(2);
        try (Engine e = engine(EngineConfig.of(16, 128))) {
            Request first = new Request(0, ref.promptIds(), 32, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(first);
            e.runToCompletion();
            assertThat(first.outputIds()).containsExactly(ref.generatedIds());
            int[] longer = Arrays.copyOf(ref.promptIds(), ref.promptIds().length + 10);
            System.arraycopy(ref.generatedIds(), 0, longer, ref.promptIds().length, 10);
            Request second = new Request(1, longer, 22, SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(second);
            e.runToCompletion();
            assertThat(second.deviceHitTokens()).as("device hit").isEqualTo(26 * 16);
            assertThat(second.outputIds()).containsExactly(Arrays.copyOfRange(ref.generatedIds(), 10, 32));
        }
    }
}
