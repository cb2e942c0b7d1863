package io.kvtier.offload.transfer;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.remote.LettuceRemoteStore;
import io.kvtier.tier.remote.OwnRedis;
import io.kvtier.tier.remote.RedisServers;
import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteSettings;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.codec.ByteArrayCodec;
import java.lang.foreign.MemorySegment;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The remote data path against a real Redis (standalone and Cluster): a host slot written as a
 * value and read back into another slot byte for byte; probes; and every kind of bad value (a
 * flipped byte, a truncated value, another key's bytes, a missing key) cut at that chunk, the bad
 * value deleted; an oversize value refused before it is sent. The reads and loads run both ways
 * a value may be checked: where it arrives, and in its slot by the job's thread
 * ({@link RemoteCopier#CHECK_ON_TAKER}).
 */
class RemoteCopierTest {

    private static final int BLOCKS = 2;
    private static final long BYTES_PER_BLOCK = 4096;
    private static final int TOKENS = 32;
    private static final BlockKey NS = new BlockKey(7, 7, 7, 7);
    private static final RemoteCopier.Claim ALWAYS = RemoteCopier.FREE;

    private final HostSlab slab = new HostSlab(16, BLOCKS * BYTES_PER_BLOCK, TOKENS);
    private final String tenant = "test" + Long.toHexString(new Random().nextLong() & 0xffffffL);
    private final RemoteKeys keys = new RemoteKeys(tenant, NS);
    private LettuceRemoteStore store;
    private long nextJob = 1;

    @AfterEach
    void close() {
        if (store != null) {
            store.close();
        }
        slab.close();
    }

    private RemoteCopier copier(RemoteSettings s) {
        return copier(s, RemoteCopier.CHECK_ON_TAKER);
    }

    /** A copier on a real store; {@code checkOnTaker}: values checked in their slots by the job's thread. */
    private RemoteCopier copier(RemoteSettings s, boolean checkOnTaker) {
        // A generous deadline: what is asserted here must not depend on the machine's load.
        store = LettuceRemoteStore.open(s.withTimeout(java.time.Duration.ofSeconds(5)), line -> { });
        return new RemoteCopier(slab, store, keys, BYTES_PER_BLOCK, RemoteCopier.READ_WINDOW_BYTES, ReadWindow.FIRST_GETS,
                checkOnTaker);
    }

    private static BlockKey key(long i) {
        return new BlockKey(i, i * 31, i * 17, 99);
    }

    private static int[] tokens(long i) {
        int[] t = new int[TOKENS];
        Arrays.fill(t, (int) i);
        return t;
    }

    /** Fills host slot {@code slot} with chunk {@code i} (random payload, valid header). */
    private ChunkCopy fill(int slot, long i) {
        MemorySegment payload = slab.payloadOf(slot, BLOCKS * BYTES_PER_BLOCK);
        byte[] bytes = new byte[(int) payload.byteSize()];
        new Random(i).nextBytes(bytes);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, payload, 0, bytes.length);
        BlockKey parent = i == 0 ? NS : key(i - 1);
        ChunkHeader.of(NS, key(i), parent, tokens(i), payload.byteSize(), ChunkHeader.crc32c(payload))
                .writeTo(slab.headerOf(slot), 0);
        return copy(slot, i);
    }

    private static ChunkCopy copy(int slot, long i) {
        return new ChunkCopy(new int[] {-1, -1}, slot, NS, key(i), i == 0 ? NS : key(i - 1), tokens(i));
    }

    private TransferResult run(RemoteCopier c, RemoteJob.Kind kind, List<ChunkCopy> chunks) {
        return c.run(new RemoteJob(nextJob++, kind, chunks, System.nanoTime() + 5_000_000_000L), ALWAYS);
    }

    private byte[] payload(int slot) {
        return slab.payloadOf(slot, BLOCKS * BYTES_PER_BLOCK).toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
    }

    private void roundTrip(RemoteCopier c, int n) {
        List<ChunkCopy> writes = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            writes.add(fill(i % 8, i));
        }
        // Write in batches of 8 slots (the slab's first half), read into the second half.
        for (int from = 0; from < n; from += 8) {
            List<ChunkCopy> batch = new ArrayList<>();
            for (int i = from; i < Math.min(n, from + 8); i++) {
                batch.add(fill(i - from, i));
            }
            TransferResult w = run(c, RemoteJob.Kind.WRITE, batch);
            assertThat(w.success()).as("write: %s", w.error()).isTrue();
        }
        TransferResult p = run(c, RemoteJob.Kind.PROBE, writes);
        assertThat(p.success()).as("probe: %s", p.error()).isTrue();
        for (int i = 0; i < n; i++) {
            fill(0, i);
            TransferResult r = run(c, RemoteJob.Kind.READ, List.of(copy(8, i)));
            assertThat(r.success()).as("chunk %d: %s", i, r.error()).isTrue();
            assertThat(payload(8)).as("chunk %d", i).isEqualTo(payload(0));
            assertThat(ChunkHeader.readFrom(slab.headerOf(8), 0)).isEqualTo(ChunkHeader.readFrom(slab.headerOf(0), 0));
        }
    }

    @ParameterizedTest(name = "checkOnTaker={0}")
    @ValueSource(booleans = {false, true})
    void aChunkRoundTripsThroughStandaloneRedis(boolean checkOnTaker) {
        roundTrip(copier(RemoteSettings.of(List.of(RedisServers.standalone()), false, tenant, null), checkOnTaker), 4);
    }

    @Test
    void chunksRoundTripThroughTheClusterAcrossShards() {
        roundTrip(copier(RemoteSettings.of(RedisServers.cluster(), true, tenant, null)), 24);
    }

    @Test
    void aChunkRoundTripsThroughValkey() {
        roundTrip(copier(RemoteSettings.of(List.of(RedisServers.valkey()), false, tenant, null)), 4);
    }

    /**
     * Whether {@code key} is gone within 10 s: the copier sends its DEL without waiting for the
     * answer, on its own connection, so the deletion may land just after the job completes.
     */
    private static boolean deleted(StatefulRedisConnection<byte[], byte[]> raw, byte[] key) {
        long end = System.nanoTime() + 10_000_000_000L;
        while (raw.sync().exists(key) != 0) {
            if (System.nanoTime() - end > 0) {
                return false;
            }
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    @ParameterizedTest(name = "checkOnTaker={0}")
    @ValueSource(booleans = {false, true})
    void badValuesCutTheReadAtThatChunkAndAreDeleted(boolean checkOnTaker) {
        String url = RedisServers.standalone();
        RemoteCopier c = copier(RemoteSettings.of(List.of(url), false, tenant, null), checkOnTaker);
        List<ChunkCopy> chain = List.of(fill(0, 0), fill(1, 1), fill(2, 2), fill(3, 3));
        assertThat(run(c, RemoteJob.Kind.WRITE, chain).success()).isTrue();
        RedisClient client = RedisClient.create(url);
        try (StatefulRedisConnection<byte[], byte[]> raw = client.connect(ByteArrayCodec.INSTANCE)) {
            byte[] k1 = keys.of(key(1)).getBytes(), k2 = keys.of(key(2)).getBytes(), k3 = keys.of(key(3)).getBytes();
            // Chunk 1: one payload byte flipped in place.
            byte[] old = raw.sync().getrange(k1, 5000, 5000);
            raw.sync().setrange(k1, 5000, new byte[] {(byte) (old[0] ^ 1)});
            List<ChunkCopy> reads = List.of(copy(8, 0), copy(9, 1), copy(10, 2), copy(11, 3));
            TransferResult r = run(c, RemoteJob.Kind.READ, reads);
            assertThat(r.firstFailedChunk()).isEqualTo(1);
            assertThat(r.error()).startsWith("verify: ").contains("payload checksum mismatch");
            assertThat(deleted(raw, k1)).as("the bad value is deleted").isTrue();
            // A job cut at a bad chunk may still have GETs of its later chunks in flight, and a late one
            // that finds the bad value this test plants next deletes it (rightly: it is bad) before the
            // next job reads it, which then says "miss" (twice in CI under load, chunk 3). A job on the
            // same connection that completes is a barrier: the copier's earlier commands are done.
            settle(c);
            // Chunk 2: truncated.
            byte[] whole = raw.sync().get(k2);
            raw.sync().set(k2, Arrays.copyOf(whole, whole.length / 2));
            r = run(c, RemoteJob.Kind.READ, reads.subList(2, 3));
            assertThat(r.firstFailedChunk()).isZero();
            assertThat(r.error()).startsWith("verify: ").contains("truncated");
            assertThat(deleted(raw, k2)).isTrue();
            settle(c);
            // Chunk 3 holds chunk 0's bytes.
            raw.sync().set(k3, raw.sync().get(keys.of(key(0)).getBytes()));
            r = run(c, RemoteJob.Kind.READ, reads.subList(3, 4));
            assertThat(r.error()).as(() -> "chunk 3 read; the server now: " + serverState(raw, k3))
                    .startsWith("verify: ").contains("differs from the expected");
            assertThat(deleted(raw, k3)).isTrue();
            // Chunk 0 is still good; chunk 1 is now a miss.
            r = run(c, RemoteJob.Kind.READ, reads.subList(0, 2));
            assertThat(r.firstFailedChunk()).isEqualTo(1);
            assertThat(r.error()).startsWith("miss: ");
            assertThat(payload(8)).isEqualTo(payload(0));
            r = run(c, RemoteJob.Kind.PROBE, reads);
            assertThat(r.firstFailedChunk()).isEqualTo(1);
        } finally {
            client.shutdown();
        }
    }

    /** Reads chunk 0 (good) with {@code c}: its completion follows every command {@code c} sent before. */
    private void settle(RemoteCopier c) {
        TransferResult r = run(c, RemoteJob.Kind.READ, List.of(copy(12, 0)));
        assertThat(r.success()).as("settling read of chunk 0: %s", r.error()).isTrue();
    }

    /** What the server says of {@code key} and of its evictions and expiries (for a failure's message). */
    private static String serverState(StatefulRedisConnection<byte[], byte[]> raw, byte[] key) {
        String stats = raw.sync().info("stats") + raw.sync().info("memory");
        StringBuilder out = new StringBuilder("exists=" + raw.sync().exists(key) + " pttl=" + raw.sync().pttl(key));
        for (String line : stats.split("\r?\n")) {
            if (line.startsWith("evicted_keys:") || line.startsWith("expired_keys:") || line.startsWith("used_memory:")
                    || line.startsWith("maxmemory:")) {
                out.append(' ').append(line.strip());
            }
        }
        return out.toString();
    }

    /**
     * A load through the store: the chunk already in its host slot and the chunks read from the
     * store reach their device blocks (a block marked -1 is left alone), up to the first bad value;
     * nothing of the bad chunk reaches the device, and the bad value is deleted.
     */
    @ParameterizedTest(name = "checkOnTaker={0}")
    @ValueSource(booleans = {false, true})
    void aLoadCopiesEachChunkIntoTheDeviceUpToTheFirstBadValue(boolean checkOnTaker) {
        String url = RedisServers.standalone();
        RemoteCopier c = copier(RemoteSettings.of(List.of(url), false, tenant, null), checkOnTaker);
        assertThat(run(c, RemoteJob.Kind.WRITE, List.of(fill(0, 0), fill(1, 1), fill(2, 2), fill(3, 3))).success()).isTrue();
        long chunkBytes = BLOCKS * BYTES_PER_BLOCK;
        try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared()) {
            MemorySegment device = arena.allocate(8 * BYTES_PER_BLOCK);
            ChunkCopier toDevice = new ChunkCopier(device, BYTES_PER_BLOCK, slab);
            List<ChunkCopy> load = new ArrayList<>();
            // Chunk 0 is in host slot 0, its first block already on the device; chunks 1-3 come from the store.
            load.add(new ChunkCopy(new int[] {-1, 1}, 0, NS, key(0), NS, tokens(0)));
            for (int i = 1; i < 4; i++) {
                load.add(new ChunkCopy(new int[] {2 * i, 2 * i + 1}, 8 + i, NS, key(i), key(i - 1), tokens(i)));
            }
            RedisClient client = RedisClient.create(url);
            try (StatefulRedisConnection<byte[], byte[]> raw = client.connect(ByteArrayCodec.INSTANCE)) {
                byte[] k2 = keys.of(key(2)).getBytes();
                byte[] old = raw.sync().getrange(k2, 5000, 5000);
                raw.sync().setrange(k2, 5000, new byte[] {(byte) (old[0] ^ 1)});
                TransferResult r = c.run(new RemoteJob(nextJob++, RemoteJob.Kind.LOAD, load, System.nanoTime() + 5_000_000_000L,
                                new boolean[] {true, false, false, false}),
                        ALWAYS, toDevice);
                assertThat(r.firstFailedChunk()).isEqualTo(2);
                assertThat(r.error()).startsWith("verify: ").contains("payload checksum mismatch");
                assertThat(deleted(raw, k2)).as("the bad value is deleted").isTrue();
            } finally {
                client.shutdown();
            }
            byte[] dev = device.toArray(java.lang.foreign.ValueLayout.JAVA_BYTE);
            byte[] chunk0 = payload(0);
            assertThat(Arrays.copyOfRange(dev, 0, (int) BYTES_PER_BLOCK)).as("block 0 (-1: not copied)")
                    .containsOnly(0);
            assertThat(Arrays.copyOfRange(dev, (int) BYTES_PER_BLOCK, (int) chunkBytes))
                    .isEqualTo(Arrays.copyOfRange(chunk0, (int) BYTES_PER_BLOCK, (int) chunkBytes));
            fill(1, 1);
            assertThat(Arrays.copyOfRange(dev, (int) chunkBytes, (int) (2 * chunkBytes))).as("chunk 1, read from the store")
                    .isEqualTo(payload(1));
            assertThat(payload(9)).as("chunk 1 in its host slot").isEqualTo(payload(1));
            // Chunk 3's GET was in flight with chunk 2's: whether its good value reached the device is
            // timing; the scheduler recomputes from chunk 2 over it either way.
            assertThat(Arrays.copyOfRange(dev, (int) (2 * chunkBytes), (int) (3 * chunkBytes))).as("chunk 2").containsOnly(0);
        }
    }

    @Test
    void aReadWhoseServerIsKilledUnderItFailsAsUnavailable(@TempDir Path dir) throws Exception {
        try (OwnRedis redis = OwnRedis.start(dir)) {
            RemoteCopier c = copier(RemoteSettings.of(List.of(redis.url()), false, tenant, null));
            List<ChunkCopy> chain = List.of(fill(0, 0), fill(1, 1));
            assertThat(run(c, RemoteJob.Kind.WRITE, chain).success()).isTrue();
            redis.freeze(); // the GETs are sent and never answered, until the kill closes the socket
            Thread killer = Thread.ofPlatform().start(() -> {
                try {
                    Thread.sleep(300);
                    redis.kill();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            TransferResult r = run(c, RemoteJob.Kind.READ, List.of(copy(8, 0), copy(9, 1)));
            killer.join();
            assertThat(r.firstFailedChunk()).isZero();
            assertThat(r.error()).startsWith("unavailable: ");
            assertThat(run(c, RemoteJob.Kind.WRITE, chain).error()).startsWith("unavailable: ");
        }
    }

    /**
     * Writes chunks 0-7 from slots 0-7 (all but {@code missing}; -1: all), then starts a thread
     * reading all eight into slots 8-15; its result lands in {@code result[0]}.
     */
    private Thread startRead(RemoteCopier c, int missing, TransferResult[] result) {
        List<ChunkCopy> chain = new ArrayList<>();
        List<ChunkCopy> reads = new ArrayList<>();
        for (int i = 0; i < 8; i++) {
            if (i != missing) {
                chain.add(fill(i, i));
            }
            reads.add(copy(8 + i, i));
        }
        assertThat(run(c, RemoteJob.Kind.WRITE, chain).success()).isTrue();
        return Thread.ofPlatform().start(() -> result[0] = run(c, RemoteJob.Kind.READ, reads));
    }

    /**
     * A read keeps only its window of GETs in flight (3 values here) and sends the next as each
     * answer is taken, so no GET's timeout covers more than the window's bytes ahead of it; the
     * chunks still land byte for byte.
     */
    @Test
    void aReadKeepsItsWindowOfGetsInFlight() throws Exception {
        FakeHeldStore fake = new FakeHeldStore();
        long value = ChunkHeader.encodedSize(TOKENS) + BLOCKS * BYTES_PER_BLOCK;
        RemoteCopier c = new RemoteCopier(slab, fake, keys, BYTES_PER_BLOCK, 3 * value + value / 2, 3, false);
        TransferResult[] result = new TransferResult[1];
        Thread reader = startRead(c, -1, result);
        assertThat(fake.awaitGets(3)).isTrue();
        Thread.sleep(50); // time for a copier that sends more than its window to do so
        assertThat(fake.getsSent()).as("GETs sent before any answer").isEqualTo(3);
        answerAll(fake, reader, result, new int[] {4, 5, 6, 7, 8, 8, 8, 8}); // min(8, answered + 3)
    }

    /**
     * A window of fewer bytes than two values still keeps two GETs in flight
     * ({@link RemoteCopier#MIN_WINDOW_VALUES}): the server copies the next value while the client
     * checks the one before (the default window, 2 MiB, holds under two values of a 110M-shape
     * chunk). GETs sent after k answers: min(8, k + 2).
     */
    @Test
    void aWindowBelowTwoValuesKeepsTwoGetsInFlight() throws Exception {
        FakeHeldStore fake = new FakeHeldStore();
        long value = ChunkHeader.encodedSize(TOKENS) + BLOCKS * BYTES_PER_BLOCK;
        RemoteCopier c = new RemoteCopier(slab, fake, keys, BYTES_PER_BLOCK, value + value / 2, 2, false);
        TransferResult[] result = new TransferResult[1];
        Thread reader = startRead(c, -1, result);
        assertThat(fake.awaitGets(2)).isTrue();
        Thread.sleep(50); // time for a copier that sends more than two to do so
        assertThat(fake.getsSent()).as("GETs sent before any answer").isEqualTo(2);
        answerAll(fake, reader, result, new int[] {3, 4, 5, 6, 7, 8, 8, 8});
    }

    /**
     * Answers the eight GETs of {@link #startRead} one by one, asserting after each how many GETs
     * the read has sent ({@code expected[k-1]} after k answers), then that all eight chunks landed.
     */
    private void answerAll(FakeHeldStore fake, Thread reader, TransferResult[] result, int[] expected) throws Exception {
        for (int answered = 1; answered <= 8; answered++) {
            fake.answerNext();
            assertThat(fake.awaitGets(expected[answered - 1])).isTrue();
            assertThat(fake.getsSent()).as("GETs sent after %d answers", answered).isEqualTo(expected[answered - 1]);
        }
        reader.join(10_000);
        assertThat(result[0].success()).as("read: %s", result[0].error()).isTrue();
        for (int i = 0; i < 8; i++) {
            assertThat(payload(8 + i)).as("chunk %d", i).isEqualTo(payload(i));
        }
    }

    /**
     * A read starts with its first GETs only (1 here) and each answer sends up to two more, so the
     * window (4 values) opens one value per answer: the server copies one value before it writes
     * the first, not the whole window. GETs sent after k answers: min(8, 1 + 2k, k + 4).
     */
    @Test
    void aReadOpensItsWindowOneValuePerAnswer() throws Exception {
        FakeHeldStore fake = new FakeHeldStore();
        long value = ChunkHeader.encodedSize(TOKENS) + BLOCKS * BYTES_PER_BLOCK;
        RemoteCopier c = new RemoteCopier(slab, fake, keys, BYTES_PER_BLOCK, 4 * value, 1, false);
        TransferResult[] result = new TransferResult[1];
        Thread reader = startRead(c, -1, result);
        assertThat(fake.awaitGets(1)).isTrue();
        Thread.sleep(50); // time for a copier that sends more than its first GETs to do so
        assertThat(fake.getsSent()).as("GETs sent before any answer").isEqualTo(1);
        answerAll(fake, reader, result, new int[] {3, 5, 7, 8, 8, 8, 8, 8});
    }

    /**
     * A read sends its first bytes of GETs at once (5 values' worth here, against 1 first GET),
     * then opens the window one value per answer as before: small values are bound by each
     * GET's round trip, so a job of 8 values of 256 KiB no longer waits for answers before its
     * GETs are out. GETs sent after k answers: min(8, 5 + 2k, k + 6).
     */
    @Test
    void aReadSendsItsFirstBytesOfGetsAtOnce() throws Exception {
        FakeHeldStore fake = new FakeHeldStore();
        long value = ChunkHeader.encodedSize(TOKENS) + BLOCKS * BYTES_PER_BLOCK;
        RemoteCopier c = new RemoteCopier(slab, fake, keys, BYTES_PER_BLOCK, 6 * value, 1, 5 * value + value / 2, false);
        TransferResult[] result = new TransferResult[1];
        Thread reader = startRead(c, -1, result);
        assertThat(fake.awaitGets(5)).isTrue();
        Thread.sleep(50); // time for a copier that sends more than its first bytes to do so
        assertThat(fake.getsSent()).as("GETs sent before any answer").isEqualTo(5);
        answerAll(fake, reader, result, new int[] {7, 8, 8, 8, 8, 8, 8, 8});
    }

    /**
     * A chunk missing from the store cuts the read there, and no GET is sent after its answer:
     * chunks 0-5 were asked for when chunk 2's nil came (2 first, two more per answer), 6 and 7
     * never are, and the job fails at chunk 2 as a miss with chunks 0 and 1 whole in their slots.
     */
    @Test
    void aMissingChunkStopsTheGetsAfterIt() throws Exception {
        FakeHeldStore fake = new FakeHeldStore();
        long value = ChunkHeader.encodedSize(TOKENS) + BLOCKS * BYTES_PER_BLOCK;
        RemoteCopier c = new RemoteCopier(slab, fake, keys, BYTES_PER_BLOCK, 8 * value, 2, false);
        TransferResult[] result = new TransferResult[1];
        Thread reader = startRead(c, 2, result);
        assertThat(fake.awaitGets(2)).isTrue();
        fake.answerNext();
        assertThat(fake.awaitGets(4)).isTrue();
        fake.answerNext();
        assertThat(fake.awaitGets(6)).isTrue();
        for (int answered = 3; answered <= 6; answered++) { // chunk 2's nil, then the three after it
            fake.answerNext();
        }
        reader.join(10_000);
        assertThat(fake.getsSent()).as("GETs sent in all").isEqualTo(6);
        assertThat(result[0].firstFailedChunk()).isEqualTo(2);
        assertThat(result[0].error()).startsWith("miss: ");
        assertThat(payload(8)).isEqualTo(payload(0));
        assertThat(payload(9)).isEqualTo(payload(1));
    }

    /**
     * A value that arrives after its job expired is not written into the slot (the scheduler may
     * have given it to another chunk): the sink's claim is refused, the job reports nothing.
     */
    @ParameterizedTest(name = "checkOnTaker={0}")
    @ValueSource(booleans = {false, true})
    void aValueArrivingAfterItsJobExpiredNeverWritesTheSlot(boolean checkOnTaker) throws Exception {
        FakeHeldStore fake = new FakeHeldStore();
        RemoteCopier c = new RemoteCopier(slab, fake, keys, BYTES_PER_BLOCK, RemoteCopier.READ_WINDOW_BYTES,
                ReadWindow.FIRST_GETS, checkOnTaker);
        assertThat(run(c, RemoteJob.Kind.WRITE, List.of(fill(0, 0))).success()).isTrue();
        MemorySegment.copy(MemorySegment.ofArray(new byte[(int) (BLOCKS * BYTES_PER_BLOCK)]), 0,
                slab.payloadOf(8, BLOCKS * BYTES_PER_BLOCK), 0, BLOCKS * BYTES_PER_BLOCK);
        java.util.concurrent.atomic.AtomicBoolean expired = new java.util.concurrent.atomic.AtomicBoolean();
        RemoteCopier.Claim claim = new RemoteCopier.Claim() {
            @Override
            public boolean enter() {
                return !expired.get();
            }

            @Override
            public void exit() {
            }

            @Override
            public boolean ended() {
                return expired.get();
            }
        };
        TransferResult[] result = {TransferResult.ok(0, 0, 0)};
        Thread reader = Thread.ofPlatform().start(() ->
                result[0] = c.run(new RemoteJob(nextJob++, RemoteJob.Kind.READ, List.of(copy(8, 0)),
                        System.nanoTime() + 5_000_000_000L), claim));
        assertThat(fake.awaitGets(1)).isTrue();
        expired.set(true); // the engine thread gave up on the job; the value comes after
        fake.answerNext();
        reader.join(10_000);
        assertThat(result[0]).as("an expired job reports nothing").isNull();
        assertThat(payload(8)).as("the slot was not written").containsOnly((byte) 0);
    }

    /**
     * A write's SETs go out in batches ({@link SetBatch#BYTES}): with batches of two
     * values, a slot that does not hold its chunk (chunk 3) fails the job at that chunk while the
     * others, before and after it and across batches, are stored byte for byte, each with the TTL.
     */
    @ParameterizedTest(name = "batch bytes {0}")
    @ValueSource(longs = {0, 20_000, SetBatch.BYTES})
    void aWriteInBatchesStoresEveryGoodChunkAndFailsAtTheFirstBadOne(long batchBytes) {
        RemoteCopier c = copier(RemoteSettings.of(List.of(RedisServers.standalone()), false, tenant, null)
                .withTtl(java.time.Duration.ofMinutes(5))).setBatchBytes(batchBytes);
        List<ChunkCopy> writes = new ArrayList<>();
        for (int i = 0; i < 6; i++) {
            writes.add(fill(i, i));
        }
        fill(3, 30);   // slot 3 holds another chunk now
        TransferResult w = run(c, RemoteJob.Kind.WRITE, writes);
        assertThat(w.firstFailedChunk()).isEqualTo(3);
        assertThat(w.error()).startsWith("error: host slot 3 does not hold chunk " + key(3).shortHex());
        fill(3, 3);
        try (RedisClient client = RedisClient.create(RedisServers.standalone());
             StatefulRedisConnection<byte[], byte[]> conn = client.connect(ByteArrayCodec.INSTANCE)) {
            for (int i = 0; i < 6; i++) {
                byte[] stored = conn.sync().get(keys.of(key(i)).getBytes(java.nio.charset.StandardCharsets.UTF_8));
                if (i == 3) {
                    assertThat(stored).as("chunk 3 was not sent").isNull();
                    continue;
                }
                long header = ChunkHeader.encodedSize(TOKENS);
                assertThat(stored).as("chunk %d", i).hasSize((int) (header + BLOCKS * BYTES_PER_BLOCK));
                assertThat(Arrays.copyOfRange(stored, (int) header, stored.length)).as("chunk %d", i).isEqualTo(payload(i));
                assertThat(conn.sync().pttl(keys.of(key(i)).getBytes(java.nio.charset.StandardCharsets.UTF_8)))
                        .as("chunk %d's TTL, ms", i).isBetween(1L, 300_000L);
            }
        }
    }

    /** trial10: a limit below the chunk size showed only in the counters at the end; now one line says so, once. */
    @Test
    void anOversizeValueIsRefusedBeforeItIsSentAndSaidOnce() {
        RemoteCopier c = copier(RemoteSettings.of(List.of(RedisServers.standalone()), false, tenant, null)
                .withMaxValueBytes(4096));
        List<String> warnings = new java.util.concurrent.CopyOnWriteArrayList<>();
        c.warnOversize(warnings::add);
        long value = ChunkHeader.encodedSize(TOKENS) + BLOCKS * BYTES_PER_BLOCK;
        TransferResult r = run(c, RemoteJob.Kind.WRITE, List.of(fill(0, 0), fill(1, 1)));
        assertThat(r.firstFailedChunk()).isZero();
        assertThat(r.error()).startsWith("oversize: value of " + value);
        assertThat(run(c, RemoteJob.Kind.WRITE, List.of(fill(2, 2))).firstFailedChunk()).isZero();
        assertThat(warnings).containsExactly("remote tier: a chunk's value is " + value + " bytes, above the store's limit of "
                + "4096 bytes (--remote-max-value, or the server's proto-max-bulk-len less 64 KiB): no chunk is written to the "
                + "store (counted in store_failures as oversize)");
        assertThat(run(c, RemoteJob.Kind.PROBE, List.of(copy(0, 0))).error()).startsWith("miss: ");
    }
}
