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
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Chunks of 256 KiB, which a plain-TCP standalone store SETs straight from their host slots
 * ({@link io.kvtier.tier.remote.RemoteStore#setFrom}), on the real test server: each slot is
 * checked in place before its first byte goes (a payload that fails its CRC32C, or a slot holding
 * another chunk, is not sent and fails the job at that chunk while the good ones land byte for
 * byte), and a job that ends between two chunks stops there with nothing of the next one stored.
 */
class RemoteCopierDirectSetTest {

    private static final long PAYLOAD = 256 << 10;
    private static final int TOKENS = 16;
    private static final BlockKey NS = new BlockKey(8, 8, 8, 8);

    private final HostSlab slab = new HostSlab(8, PAYLOAD, TOKENS);
    private final String tenant = "direct" + Long.toHexString(new Random().nextLong() & 0xffffffL);
    private final RemoteKeys keys = new RemoteKeys(tenant, NS);
    private final LettuceRemoteStore store = LettuceRemoteStore.open(RemoteSettings.of(List.of(RedisServers.standalone()), false,
            tenant, null).withTimeout(java.time.Duration.ofSeconds(5)), line -> { });
    private final RemoteCopier copier = new RemoteCopier(slab, store, keys, PAYLOAD);

    @AfterEach
    void close() {
        store.close();
        slab.close();
    }

    private static BlockKey key(long i) {
        return new BlockKey(i, i * 7, 3, 5);
    }

    private static int[] tokens(long i) {
        int[] t = new int[TOKENS];
        Arrays.fill(t, (int) i);
        return t;
    }

    /** Fills slot {@code slot} with chunk {@code i}: random payload, valid header. */
    private ChunkCopy fill(int slot, long i) {
        byte[] bytes = new byte[(int) PAYLOAD];
        new Random(i).nextBytes(bytes);
        MemorySegment payload = slab.payloadOf(slot, PAYLOAD);
        MemorySegment.copy(MemorySegment.ofArray(bytes), 0, payload, 0, PAYLOAD);
        ChunkHeader.of(NS, key(i), NS, tokens(i), PAYLOAD, ChunkHeader.crc32c(payload)).writeTo(slab.headerOf(slot), 0);
        return new ChunkCopy(new int[] {-1}, slot, NS, key(i), NS, tokens(i));
    }

    /** The slot's value as the store should hold it: header, then payload. */
    private byte[] value(int slot) {
        long header = ChunkHeader.encodedSize(TOKENS);
        byte[] v = new byte[(int) (header + PAYLOAD)];
        MemorySegment.copy(slab.headerOf(slot), ValueLayout.JAVA_BYTE, 0, v, 0, (int) header);
        MemorySegment.copy(slab.payloadOf(slot, PAYLOAD), ValueLayout.JAVA_BYTE, 0, v, (int) header, (int) PAYLOAD);
        return v;
    }

    private byte[] stored(long i) {
        try (RedisClient client = RedisClient.create(RedisServers.standalone());
             StatefulRedisConnection<byte[], byte[]> conn = client.connect(ByteArrayCodec.INSTANCE)) {
            return conn.sync().get(keys.of(key(i)).getBytes(StandardCharsets.UTF_8));
        }
    }

    @Test
    void eachSlotIsCheckedInPlaceAndOnlyGoodChunksAreSentByteForByte() {
        assertThat(store.setsFromMemory(ChunkHeader.encodedSize(TOKENS) + PAYLOAD)).as("this size is set from memory").isTrue();
        List<ChunkCopy> writes = new ArrayList<>();
        byte[][] expected = new byte[6][];
        for (int i = 0; i < 6; i++) {
            writes.add(fill(i, i));
            expected[i] = value(i);
        }
        MemorySegment bad = slab.payloadOf(2, PAYLOAD);
        bad.set(ValueLayout.JAVA_BYTE, 100_000, (byte) ~bad.get(ValueLayout.JAVA_BYTE, 100_000)); // fails its CRC32C
        fill(4, 40); // slot 4 holds another chunk now
        TransferResult w = copier.runForBench(new RemoteJob(1, RemoteJob.Kind.WRITE, writes, System.nanoTime() + 5_000_000_000L));
        assertThat(w.firstFailedChunk()).isEqualTo(2);
        assertThat(w.error()).isEqualTo("error: host slot 2 does not hold chunk " + key(2).shortHex());
        for (int i : new int[] {0, 1, 3, 5}) {
            assertThat(stored(i)).as("chunk %d", i).isEqualTo(expected[i]);
        }
        assertThat(stored(2)).as("a payload failing its check is not sent").isNull();
        assertThat(stored(4)).as("a slot holding another chunk is not sent").isNull();
        for (int i = 0; i < 6; i++) {
            store.delete(keys.of(key(i)));
        }
    }

    @Test
    void aJobThatEndsBetweenTwoChunksStopsThereWithNothingOfTheNextStored() throws InterruptedException {
        List<ChunkCopy> writes = List.of(fill(0, 10), fill(1, 11), fill(2, 12));
        AtomicInteger enters = new AtomicInteger();
        RemoteCopier.Claim endsAfterTwo = new RemoteCopier.Claim() { // chunk 10's check and write, then the deadline
            @Override
            public boolean enter() {
                return enters.incrementAndGet() <= 2;
            }

            @Override
            public void exit() {
            }

            @Override
            public boolean ended() {
                return enters.get() > 2;
            }
        };
        TransferResult w = copier.run(new RemoteJob(2, RemoteJob.Kind.WRITE, writes, System.nanoTime() + 5_000_000_000L), endsAfterTwo);
        assertThat(w).as("an ended job reports nothing: the engine did at its deadline").isNull();
        assertThat(enters.get()).isEqualTo(3);
        byte[] first = stored(10);
        int waited = 0;
        while (first == null && waited++ < 100) { // its SET was written whole; the answer was not awaited
            Thread.sleep(10);
            first = stored(10);
        }
        assertThat(first).isEqualTo(value(0));
        assertThat(stored(11)).isNull();
        assertThat(stored(12)).isNull();
        for (int i = 10; i < 13; i++) {
            store.delete(keys.of(key(i)));
        }
    }
}
