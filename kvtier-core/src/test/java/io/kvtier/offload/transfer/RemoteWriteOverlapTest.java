package io.kvtier.offload.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.RedisServers;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Remote write jobs overlap in the transfer engine ({@link AsyncTransferEngine#REMOTE_WRITE_WORKERS}):
 * the next job's SETs go out while the job before awaits its answers, yet every SET goes out in
 * submission order, and each job's result is its own answers' (ok only once all answered OK,
 * failed at its first refused chunk, failed at its deadline while the other job goes on).
 */
class RemoteWriteOverlapTest {

    private static final Duration WAIT = Duration.ofSeconds(10);

    /** SETs answered only when a test says so, on an engine with the default write workers. */
    private final FakeHeldStore store = new FakeHeldStore();
    private final RemoteKeys keys = new RemoteKeys("overlap", TransferFixture.NAMESPACE);
    private final TransferFixture fx = new TransferFixture(32, 9, 2, 7);
    private final AsyncTransferEngine engine = new AsyncTransferEngine(fx.copier, null,
            new RemoteCopier(fx.slab, store, keys, fx.bytesPerBlock()));

    {
        store.holdSets = true;
    }

    @AfterEach
    void close() {
        engine.close();
        fx.close();
    }

    /** Host slots 0..n-1 holding chunks 0..n-1 (stored from the fixture's device blocks). */
    private static List<ChunkCopy> written(TransferFixture fx, int n) {
        List<ChunkCopy> out = new ArrayList<>();
        for (ChunkCopy c : fx.chain(n, 0, 0)) {
            fx.copier.store(c);
            out.add(new ChunkCopy(new int[] {-1, -1}, c.slot(), c.namespace(), c.key(), c.parent(), c.tokensShared()));
        }
        return out;
    }

    private static RemoteJob write(long id, List<ChunkCopy> chunks, long deadline) {
        return new RemoteJob(id, RemoteJob.Kind.WRITE, chunks, deadline);
    }

    @Test
    void theNextJobSendsWhileTheOneBeforeAwaitsItsAnswersInSubmissionOrderEachWithItsOwnResult()
            throws InterruptedException {
        assertThat(AsyncTransferEngine.REMOTE_WRITE_WORKERS).as("the default").isEqualTo(2);
        List<ChunkCopy> c = written(fx, 9);
        long far = engine.nanoTime() + WAIT.toNanos();
        engine.submit(write(1, c.subList(0, 3), far));
        engine.submit(write(2, c.subList(3, 6), far));
        engine.submit(write(3, c.subList(6, 9), far));

        assertThat(store.awaitSets(6)).as("job 2's SETs sent while job 1's are unanswered").isTrue();
        assertThat(store.setKeys()).as("two workers: job 3 waits for one").hasSize(6);
        assertThat(engine.poll()).as("nothing counted before its SET answered").isEmpty();

        for (int i = 3; i < 6; i++) {
            store.answerSet(i, true);
        }
        assertThat(engine.await(List.of(2L), WAIT)).singleElement().satisfies(r -> {
            assertThat(r.success()).as("job 2 once its own answers came, job 1's still held").isTrue();
            assertThat(r.bytes()).isEqualTo(3 * 2 * fx.bytesPerBlock());
        });
        assertThat(store.awaitSets(9)).as("job 2's worker took job 3").isTrue();
        assertThat(engine.poll()).as("job 1 still awaits its answers, job 3 too").isEmpty();

        store.answerSet(0, true);
        store.answerSet(1, false);
        store.answerSet(2, true);
        List<TransferResult> one = engine.await(List.of(1L), WAIT);
        assertThat(one).hasSize(1);
        assertThat(one.getFirst().success()).isFalse();
        assertThat(one.getFirst().firstFailedChunk()).as("failed at its first refused chunk").isEqualTo(1);
        assertThat(one.getFirst().bytes()).isEqualTo(2 * fx.bytesPerBlock());
        assertThat(one.getFirst().error()).isEqualTo("error: SET refused by the test");

        for (int i = 6; i < 9; i++) {
            store.answerSet(i, true);
        }
        assertThat(engine.await(List.of(3L), WAIT)).singleElement().satisfies(r -> assertThat(r.success()).isTrue());
        assertThat(store.setKeys()).as("every SET in submission order").isEqualTo(
                c.stream().map(x -> keys.of(x.key())).toList());
        for (int i = 0; i < 9; i++) {
            assertThat(store.stored(keys.of(c.get(i).key()))).as("chunk %d", i).isEqualTo(i == 1 ? null : value(fx.slab, c.get(i)));
        }
    }

    @Test
    void aJobPastItsDeadlineFailsThereWhileTheJobAfterItCompletes() throws InterruptedException {
        List<ChunkCopy> c = written(fx, 4);
        engine.submit(write(1, c.subList(0, 2), engine.nanoTime() + 200_000_000L)); // never answered
        engine.submit(write(2, c.subList(2, 4), engine.nanoTime() + WAIT.toNanos()));
        assertThat(store.awaitSets(4)).isTrue();
        store.answerSet(2, true);
        store.answerSet(3, true);
        assertThat(engine.await(List.of(2L), WAIT)).singleElement().satisfies(r -> assertThat(r.success()).isTrue());
        List<TransferResult> one = engine.await(List.of(1L), WAIT);
        assertThat(one).singleElement().satisfies(r -> {
            assertThat(r.success()).isFalse();
            assertThat(r.firstFailedChunk()).isZero();
            // The engine's deadline or the worker's own wait for the answer, whichever comes first.
            assertThat(r.error()).isIn(TransferResult.DEADLINE_EXCEEDED, RemoteCopier.TIMEOUT + ": no answer by the job's deadline");
        });
        assertThat(engine.inFlight()).isZero();
    }

    /** Chunk {@code c}'s value as its slot holds it: header, then payload. */
    private static byte[] value(HostSlab slab, ChunkCopy c) {
        long header = ChunkHeader.encodedSize(c.tokensShared().length);
        long payload = slab.payloadBytesPerChunk();
        byte[] v = new byte[(int) (header + payload)];
        MemorySegment.copy(slab.headerOf(c.slot()), ValueLayout.JAVA_BYTE, 0, v, 0, (int) header);
        MemorySegment.copy(slab.payloadOf(c.slot(), payload), ValueLayout.JAVA_BYTE, 0, v, (int) header, (int) payload);
        return v;
    }

    /**
     * On the real server, values of 256 KiB (SET straight from the slot) and 16 KiB (Lettuce's
     * batches): four jobs submitted at once all write the same 8 keys, each job from slots of its
     * own with payloads of its own; all end ok and the store holds the last job's values byte for
     * byte, as it would only if every job's SETs reached the server after the job's before.
     */
    @ParameterizedTest(name = "payload={0}")
    @ValueSource(longs = {256 << 10, 16 << 10})
    void jobsSubmittedAtOnceOnARealServerLandInSubmissionOrder(long payload) {
        int jobs = 4;
        int perJob = 8;
        int tokens = 16;
        BlockKey ns = new BlockKey(9, 9, 9, new Random().nextLong());
        String tenant = "overlap" + Long.toHexString(new Random().nextLong() & 0xffffffL);
        RemoteKeys keys = new RemoteKeys(tenant, ns);
        try (Arena device = Arena.ofShared();
             HostSlab slab = new HostSlab(jobs * perJob, payload, tokens);
             LettuceRemoteStore store = LettuceRemoteStore.open(RemoteSettings.of(List.of(RedisServers.standalone()), false,
                     tenant, null).withTimeout(WAIT), line -> { });
             AsyncTransferEngine engine = new AsyncTransferEngine(new ChunkCopier(device.allocate(payload), payload, slab), null,
                     new RemoteCopier(slab, store, keys, payload))) {
            assertThat(store.setsFromMemory(ChunkHeader.encodedSize(tokens) + payload)).isEqualTo(payload >= 128 << 10);
            Random rnd = new Random(payload);
            List<List<ChunkCopy>> writes = new ArrayList<>();
            for (int j = 0; j < jobs; j++) {
                List<ChunkCopy> job = new ArrayList<>();
                for (int i = 0; i < perJob; i++) {
                    int slot = j * perJob + i;
                    byte[] bytes = new byte[(int) payload];
                    rnd.nextBytes(bytes);
                    MemorySegment p = slab.payloadOf(slot, payload);
                    MemorySegment.copy(MemorySegment.ofArray(bytes), 0, p, 0, payload);
                    int[] t = new int[tokens];
                    Arrays.fill(t, slot);
                    BlockKey key = new BlockKey(i, 0, 1, 2);
                    ChunkHeader.of(ns, key, ns, t, payload, ChunkHeader.crc32c(p)).writeTo(slab.headerOf(slot), 0);
                    job.add(new ChunkCopy(new int[] {-1}, slot, ns, key, ns, t));
                }
                writes.add(job);
                engine.submit(write(j + 1, job, engine.nanoTime() + WAIT.toNanos()));
            }
            List<TransferResult> results = engine.await(IntStream.rangeClosed(1, jobs).mapToObj(j -> (long) j).toList(), WAIT);
            assertThat(results).hasSize(jobs).allSatisfy(r -> {
                assertThat(r.success()).as("job %d: %s", r.jobId(), r.error()).isTrue();
                assertThat(r.bytes()).isEqualTo(perJob * payload);
            });
            try (RedisClient client = RedisClient.create(RedisServers.standalone());
                 StatefulRedisConnection<byte[], byte[]> conn = client.connect(ByteArrayCodec.INSTANCE)) {
                for (ChunkCopy c : writes.getLast()) {
                    byte[] stored = conn.sync().get(keys.of(c.key()).getBytes(StandardCharsets.UTF_8));
                    assertThat(stored).as("chunk %s holds the last job's value", c.key().shortHex()).isEqualTo(value(slab, c));
                    conn.sync().del(keys.of(c.key()).getBytes(StandardCharsets.UTF_8));
                }
            }
        }
    }
}
