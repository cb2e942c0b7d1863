package io.kvtier.engine;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.engine.ReferenceRecords.Record;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.Namespace;
import io.kvtier.model.Kernels;
import io.kvtier.model.Model;
import io.kvtier.model.Models;
import io.kvtier.model.DigestCache;
import io.kvtier.model.gguf.LlamaCppReference;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.offload.OffloadConfig;
import io.kvtier.tier.disk.DiskFsync;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * GGUF models through the engine, with offloading off, on the host tier and on the disk tier
 * across a restart: {@code stories260K.gguf} reproduces every record of
 * {@code stories260K_greedy.jsonl} token for token (to its full length), and the quantized
 * {@code llama-spm512-q4_k.gguf} reproduces llama.cpp's 32 greedy tokens of its three prompts
 * (the {@code .deqf32} reference), and so does {@code gemma3-spm515-f32.gguf} (sliding-window
 * layers; the plain reference); outputs are identical in every setting, and the second pass
 * really loads KV from the tier. A GGUF model's KV namespace covers its tensor data: a copy with
 * one weight changed (a "fine-tune" of the same shape) gets no hits from the first one's disk tier.
 */
class GgufEngineTest {

    @TempDir
    Path tmp;

    /** A model and its prompts with the exact outputs they must produce. */
    record Case(String name, Path model, List<int[]> prompts, List<int[]> expected, List<Integer> maxTokens,
                int stopToken) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Case> cases() {
        List<int[]> sp = new ArrayList<>(), se = new ArrayList<>();
        List<Integer> sm = new ArrayList<>();
        for (Record r : ReferenceRecords.load()) {
            sp.add(r.promptIds());
            se.add(r.expectedOutput());
            sm.add(r.maxTokens());
        }
        Path gguf = ReferenceRecords.shared().resolve("models/gguf");
        return Stream.of(new Case("stories260K.gguf", gguf.resolve("stories260K.gguf"), sp, se, sm, 1),
                llamaCppCase("llama-spm512-q4_k", "deqf32.ref"), llamaCppCase("gemma3-spm515-f32", "ref"));
    }

    /** A gguf-ref model's prompts with llama.cpp's 32 greedy tokens from its {@code <name>.<reference>.jsonl}. */
    private static Case llamaCppCase(String name, String reference) {
        List<int[]> prompts = new ArrayList<>(), expected = new ArrayList<>();
        List<Integer> max = new ArrayList<>();
        for (LlamaCppReference r : LlamaCppReference.load(LlamaCppReference.folder().resolve(name + "." + reference + ".jsonl"))) {
            prompts.add(r.promptIds());
            expected.add(r.generatedIds());
            max.add(32);
        }
        return new Case(name + ".gguf", LlamaCppReference.folder().resolve(name + ".gguf"), prompts, expected, max, -1);
    }

    private Engine engine(Path model, OffloadSetup setup, int stopToken) {
        Model m = Models.load(model, new DigestCache(tmp.resolve("digests")));
        return LlamaRunner.engine(m, EngineConfig.of(16, 40).withStopToken(stopToken), Kernels.best(), 2, setup);
    }

    /** Runs every prompt one after another, the device prefix cache dropped between them; checks outputs. */
    private static List<Request> pass(Engine e, Case c) {
        List<Request> done = new ArrayList<>();
        for (int i = 0; i < c.prompts().size(); i++) {
            e.resetDevicePrefixCache();
            Request r = new Request(i, c.prompts().get(i), c.maxTokens().get(i), SamplingParams.GREEDY, ExtraKeys.NONE);
            e.submit(r);
            e.runToCompletion();
            e.drainTransfers();
            assertThat(r.outputIds()).as("%s prompt %d", c, i).containsExactly(c.expected().get(i));
            done.add(r);
        }
        return done;
    }

    private static long hits(List<Request> done, String tier) {
        return done.stream().mapToLong(r -> r.externalHitTokens().getOrDefault(tier, 0)).sum();
    }

    private OffloadSetup disk(Path dir) {
        return new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT,
                new OffloadSetup.DiskSetup(dir, 1L << 30, DiskWritePolicy.THROUGH, DiskFsync.NONE, 1, null));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void offloadingOffHostAndDiskGiveTheReferenceOutputs(Case c) {
        try (Engine e = engine(c.model(), OffloadSetup.OFF, c.stopToken())) {
            pass(e, c);
        }
        try (Engine e = engine(c.model(), new OffloadSetup(16L << 20, 0, "lru", OffloadConfig.DEFAULT), c.stopToken())) {
            long first = hits(pass(e, c), "host");     // shared prefixes between prompts may hit already
            assertThat(hits(pass(e, c), "host")).as("second pass loads every prompt's blocks from the host tier")
                    .isGreaterThan(first);
            e.offload().checkInvariants();
            assertThat(e.offload().stats().loadFailures()).isZero();
        }
        Path dir = tmp.resolve("disk");
        try (Engine e = engine(c.model(), disk(dir), c.stopToken())) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            pass(e, c);
        }
        try (Engine e = engine(c.model(), disk(dir), c.stopToken())) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            assertThat(hits(pass(e, c), "disk")).as("a restarted engine loads from the disk tier").isPositive();
            assertThat(e.offload().stats().loadFailures()).isZero();
        }
    }

    /** Two GGUF files of the same shape with one weight different never share KV. */
    @Test
    void aFineTuneOfTheSameShapeGetsNoHitsFromTheOther() throws IOException {
        Case q = cases().toList().get(1);
        Path tuned = tmp.resolve("tuned.gguf");
        Files.copy(q.model(), tuned);
        try (RandomAccessFile f = new RandomAccessFile(tuned.toFile(), "rw")) {
            f.seek(f.length() - 1);           // the last byte of the data section: a quant of the last matrix
            int b = f.read();
            f.seek(f.length() - 1);
            f.write(b ^ 0x01);
        }
        DigestCache digests = new DigestCache(tmp.resolve("digests"));
        try (Model a = Models.load(q.model(), digests); Model b = Models.load(tuned, digests)) {
            assertThat(a.config()).isEqualTo(b.config());
            assertThat(a.modelId()).isNotEqualTo(b.modelId());
            assertThat(Namespace.of(a.modelId(), a.config().kvLayout(16)))
                    .isNotEqualTo(Namespace.of(b.modelId(), b.config().kvLayout(16)));
        }
        Path dir = tmp.resolve("disk");
        try (Engine e = engine(q.model(), disk(dir), -1)) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            pass(e, q);
            assertThat(e.offload().stats().blocksStored().get("disk")).isPositive();
        }
        try (Engine e = engine(tuned, disk(dir), -1)) {
            e.offload().awaitDiskScan(Duration.ofSeconds(30));
            for (int i = 0; i < q.prompts().size(); i++) {
                Request r = new Request(i, q.prompts().get(i), 4, SamplingParams.GREEDY, ExtraKeys.NONE);
                e.submit(r);
                e.runToCompletion();
                assertThat(r.externalHitTokens()).as("prompt %d on the tuned copy", i).isEmpty();
            }
        }
    }

    /** The tensor-data digest is computed once per file version, then read from the cache. */
    @Test
    void theDigestIsCachedByPathSizeAndModificationTime() throws IOException {
        Path copy = tmp.resolve("m.gguf");
        Files.copy(cases().toList().get(1).model(), copy);
        Path dir = tmp.resolve("cache");
        String first;
        DigestCache one = new DigestCache(dir);
        try (Model m = Models.load(copy, one)) {
            first = m.modelId();
        }
        assertThat(one.computed()).isEqualTo(1);
        DigestCache two = new DigestCache(dir);
        try (Model m = Models.load(copy, two)) {
            assertThat(m.modelId()).isEqualTo(first);
        }
        assertThat(two.computed()).as("second start reads the cache").isZero();
        Files.setLastModifiedTime(copy, java.nio.file.attribute.FileTime.fromMillis(12345));
        DigestCache three = new DigestCache(dir);
        try (Model m = Models.load(copy, three)) {
            assertThat(m.modelId()).isEqualTo(first);
        }
        assertThat(three.computed()).as("a new mtime is hashed again").isEqualTo(1);
    }
}
