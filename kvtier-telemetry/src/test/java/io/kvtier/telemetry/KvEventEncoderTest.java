package io.kvtier.telemetry;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.KvEvent;
import java.math.BigInteger;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The payload, decoded by msgpack-java's low-level unpacker ({@link EventWire}), has vLLM's shape:
 * a positional batch {@code [ts, events, dp_rank]}, each event a map whose first key is
 * {@code type}, fields in vLLM's order, block hashes as the key's last 8 bytes (uint64) or its 32
 * bytes.
 */
class KvEventEncoderTest {

    private static final BlockKey SEED = new BlockKey(1, 2, 3, 4);
    private static final BlockKey A = new BlockKey(10, 11, 12, 0x7FFF_0000_0000_0001L);
    private static final BlockKey B = new BlockKey(20, 21, 22, 0xFFFF_FFFF_FFFF_FFFEL); // above 2^63: uint64

    @Test
    @SuppressWarnings("unchecked")
    void aBatchIsAnArrayOfTimestampEventsAndRankWithEventsAsTaggedMaps() {
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 32, KvEventEncoder.HashFormat.INT, 0);
        byte[] payload = enc.encode(1789095808.5, List.of(
                new KvEvent.BlockStored(1, List.of(A, B), SEED, "device", List.of(5, 6, 7)),
                new KvEvent.BlockStored(2, List.of(B), A, "host"),
                new KvEvent.BlockRemoved(3, List.of(A), "disk"),
                new KvEvent.AllCleared(4, "host")));
        List<Object> batch = (List<Object>) EventWire.decode(payload);
        assertThat(batch).hasSize(3);
        assertThat(batch.get(0)).isEqualTo(1789095808.5);
        assertThat(batch.get(2)).isEqualTo(BigInteger.ZERO);
        List<Map<String, Object>> events = (List<Map<String, Object>>) batch.get(1);
        assertThat(events).hasSize(4);

        Map<String, Object> device = events.get(0);
        assertThat(device.keySet()).containsExactly("type", "block_hashes", "parent_block_hash", "token_ids", "block_size",
                "lora_id", "medium", "lora_name", "locality");
        assertThat(device.get("type")).isEqualTo("BlockStored");
        assertThat(device.get("block_hashes")).isEqualTo(List.of(BigInteger.valueOf(0x7FFF_0000_0000_0001L),
                new BigInteger("18446744073709551614")));
        assertThat(device.get("parent_block_hash")).as("a first block's parent").isNull();
        assertThat(device.get("token_ids")).isEqualTo(List.of(BigInteger.valueOf(5), BigInteger.valueOf(6), BigInteger.valueOf(7)));
        assertThat(device.get("block_size")).isEqualTo(BigInteger.valueOf(16));
        assertThat(device.get("medium")).isEqualTo("GPU");
        assertThat(device.get("lora_id")).isNull();
        assertThat(device.get("lora_name")).isNull();
        assertThat(device.get("locality")).isEqualTo("LOCAL");

        Map<String, Object> host = events.get(1);
        assertThat(host.get("parent_block_hash")).isEqualTo(BigInteger.valueOf(0x7FFF_0000_0000_0001L));
        assertThat(host.get("token_ids")).isEqualTo(List.of());
        assertThat(host.get("block_size")).as("a host chunk's tokens").isEqualTo(BigInteger.valueOf(32));
        assertThat(host.get("medium")).isEqualTo("CPU");

        assertThat(events.get(2)).containsExactly(Map.entry("type", "BlockRemoved"),
                Map.entry("block_hashes", List.of(BigInteger.valueOf(0x7FFF_0000_0000_0001L))),
                Map.entry("medium", "STORAGE"), Map.entry("locality", "LOCAL"));
        assertThat(events.get(3)).containsExactly(Map.entry("type", "AllBlocksCleared"));
    }

    /** A reset clears the host and disk tiers (an event each inside kvtier); the wire's event names no medium, so it is sent once. */
    @Test
    @SuppressWarnings("unchecked")
    void adjacentClearsOfSeveralTiersAreSentAsOneEvent() {
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 32, KvEventEncoder.HashFormat.INT, 0);
        List<Object> batch = (List<Object>) EventWire.decode(enc.encode(1.0, List.of(
                new KvEvent.AllCleared(1, "host"), new KvEvent.AllCleared(2, "disk"),
                new KvEvent.BlockStored(3, List.of(A), SEED, "host"),
                new KvEvent.AllCleared(4, "host"))));
        List<Map<String, Object>> events = (List<Map<String, Object>>) batch.get(1);
        assertThat(events).extracting(e -> e.get("type"))
                .containsExactly("AllBlocksCleared", "BlockStored", "AllBlocksCleared");
    }

    @Test
    @SuppressWarnings("unchecked")
    void bytesFormatSendsTheWhole32ByteKey() {
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 16, KvEventEncoder.HashFormat.BYTES, 3);
        List<Object> batch = (List<Object>) EventWire.decode(enc.encode(1.0, List.of(new KvEvent.BlockRemoved(1, List.of(B), "device"))));
        Map<String, Object> e = ((List<Map<String, Object>>) batch.get(1)).getFirst();
        assertThat(e.get("block_hashes")).isEqualTo(List.of(HexFormat.of().formatHex(B.toBytes())));
        assertThat(batch.get(2)).isEqualTo(BigInteger.valueOf(3));
    }
}
