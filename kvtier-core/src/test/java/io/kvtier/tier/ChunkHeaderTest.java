package io.kvtier.tier;

import static io.kvtier.tier.Keys.k;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvtier.kv.BlockKey;
import io.kvtier.kv.Namespace;
import io.kvtier.tier.ChunkHeader.Verification;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ChunkHeaderTest {

    private static final BlockKey NS = new BlockKey(11, 12, 13, 14);
    private static final int[] TOKENS = {7, 8, 9, 10};

    private final Arena arena = Arena.ofConfined();
    private final MemorySegment payload = arena.allocate(1000);
    private final MemorySegment buf = arena.allocate(ChunkHeader.encodedSize(TOKENS.length) + 16);

    @AfterEach
    void close() {
        arena.close();
    }

    private ChunkHeader header() {
        Random rnd = new Random(42);
        for (long i = 0; i < payload.byteSize(); i++) {
            payload.set(ValueLayout.JAVA_BYTE, i, (byte) rnd.nextInt());
        }
        return ChunkHeader.of(NS, k(2), k(1), TOKENS, payload.byteSize(), ChunkHeader.crc32c(payload));
    }

    private Verification verify() {
        return ChunkHeader.verifyAt(buf, 0, NS, k(2), k(1), TOKENS, payload);
    }

    @Test
    void roundTripAndDocumentedLayout() {
        ChunkHeader h = header();
        h.writeTo(buf, 0);
        assertThat(ChunkHeader.readFrom(buf, 0)).isEqualTo(h);
        assertThat(h.encodedSize()).isEqualTo(128 + 16);
        assertThat(new String(buf.asSlice(0, 4).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII)).isEqualTo("KVTC");
        ValueLayout.OfInt le = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
        assertThat(buf.get(le, 4)).isEqualTo(Namespace.FORMAT_VERSION);
        assertThat(buf.asSlice(40, 32).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(k(2).toBytes());
        assertThat(buf.asSlice(72, 32).toArray(ValueLayout.JAVA_BYTE)).isEqualTo(k(1).toBytes());
        assertThat(buf.get(le, 104)).isEqualTo(4);
        assertThat(buf.get(ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN), 112)).isEqualTo(1000);
        assertThat(buf.get(le, 128 + 12)).isEqualTo(10);
        CRC32C crc = new CRC32C();
        crc.update(payload.toArray(ValueLayout.JAVA_BYTE));
        assertThat(buf.get(le, 108)).isEqualTo((int) crc.getValue()); // in-place CRC equals the heap one
        assertThat(verify()).isEqualTo(new Verification.Ok());
        assertThat(h.verify(NS, k(2), k(1), TOKENS, payload).ok()).isTrue();
    }

    @Test
    void flippedPayloadByteIsCorrupt() {
        header().writeTo(buf, 0);
        payload.set(ValueLayout.JAVA_BYTE, 500, (byte) (payload.get(ValueLayout.JAVA_BYTE, 500) ^ 1));
        assertThat(verify()).isInstanceOfSatisfying(Verification.Corrupt.class,
                c -> assertThat(c.reason()).contains("payload checksum mismatch"));
    }

    @Test
    void shorterPayloadIsCorrupt() {
        header().writeTo(buf, 0);
        Verification v = ChunkHeader.verifyAt(buf, 0, NS, k(2), k(1), TOKENS, payload.asSlice(0, 999));
        assertThat(v).isInstanceOfSatisfying(Verification.Corrupt.class,
                c -> assertThat(c.reason()).contains("payload length 1000"));
    }

    @Test
    void o19_collidingKeyIsDetectedThroughTokenIds() {
        header().writeTo(buf, 0);
        Verification v = ChunkHeader.verifyAt(buf, 0, NS, k(2), k(1), new int[] {7, 8, 9, 11}, payload);
        assertThat(v).isInstanceOfSatisfying(Verification.Corrupt.class,
                c -> assertThat(c.reason()).contains("token id #3"));
        assertThat(header().verify(NS, k(2), k(1), new int[] {7, 8, 9}, payload).ok()).isFalse();
    }

    @Test
    void foreignNamespaceKeyOrParentIsCorrupt() {
        header().writeTo(buf, 0);
        assertThat(ChunkHeader.verifyAt(buf, 0, k(99), k(2), k(1), TOKENS, payload).toString()).contains("namespace");
        assertThat(ChunkHeader.verifyAt(buf, 0, NS, k(3), k(1), TOKENS, payload).toString()).contains("key");
        assertThat(ChunkHeader.verifyAt(buf, 0, NS, k(2), k(0), TOKENS, payload).toString()).contains("parent key");
    }

    @Test
    void truncatedOrDamagedHeaderIsCorruptNeverAnException() {
        header().writeTo(buf, 0);
        assertThat(ChunkHeader.verifyAt(buf.asSlice(0, 100), 0, NS, k(2), k(1), TOKENS, payload).toString())
                .contains("truncated");
        assertThat(ChunkHeader.verifyAt(buf.asSlice(0, 140), 0, NS, k(2), k(1), TOKENS, payload).toString())
                .contains("header says 4 tokens");
        assertThat(ChunkHeader.verifyAt(buf, buf.byteSize() + 5, NS, k(2), k(1), TOKENS, payload).ok()).isFalse();

        buf.set(ValueLayout.JAVA_BYTE, 130, (byte) 0x55); // inside the token ids
        assertThat(verify().toString()).contains("header checksum mismatch");

        header().writeTo(buf, 0);
        buf.set(ValueLayout.JAVA_INT_UNALIGNED, 104, -1); // token count
        assertThat(verify().ok()).isFalse();

        buf.fill((byte) 0); // a never-written slot
        assertThat(verify().toString()).contains("bad magic");
        assertThatThrownBy(() -> ChunkHeader.readFrom(buf, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bad magic");
    }

    @Test
    void everySingleBitFlipOfHeaderOrPayloadIsDetected() {
        long seed = System.nanoTime();
        Random rnd = new Random(seed);
        ChunkHeader h = header();
        for (int trial = 0; trial < 300; trial++) {
            h.writeTo(buf, 0);
            MemorySegment target = rnd.nextBoolean() ? buf.asSlice(0, h.encodedSize()) : payload;
            long at = rnd.nextLong(target.byteSize());
            int bit = 1 << rnd.nextInt(8);
            target.set(ValueLayout.JAVA_BYTE, at, (byte) (target.get(ValueLayout.JAVA_BYTE, at) ^ bit));
            assertThat(verify().ok()).as("seed %d, trial %d: flip at %d", seed, trial, at).isFalse();
            target.set(ValueLayout.JAVA_BYTE, at, (byte) (target.get(ValueLayout.JAVA_BYTE, at) ^ bit));
            assertThat(verify().ok()).as("seed %d, trial %d restored", seed, trial).isTrue();
        }
    }
}
