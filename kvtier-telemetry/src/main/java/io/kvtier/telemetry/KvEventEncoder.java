package io.kvtier.telemetry;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.KvEvent;
import io.kvtier.tier.KvEvents;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.List;
import java.util.Objects;
import org.msgpack.core.MessageBufferPacker;

/**
 * Encodes a batch of {@link KvEvent}s as vLLM's KV event payload (msgpack), byte for byte the shape
 * vLLM's {@code msgspec} encoder gives its {@code KVEventBatch} since vLLM PR 42892 (events as maps):
 *
 * <pre>
 * [ts (float64 seconds since the epoch), [event, ...], data_parallel_rank (int)]
 * BlockStored:      {"type": "BlockStored", "block_hashes": [h, ...], "parent_block_hash": h | nil,
 *                    "token_ids": [int, ...], "block_size": int, "lora_id": nil, "medium": str,
 *                    "lora_name": nil, "locality": "LOCAL"}
 * BlockRemoved:     {"type": "BlockRemoved", "block_hashes": [h, ...], "medium": str, "locality": "LOCAL"}
 * AllBlocksCleared: {"type": "AllBlocksCleared"}
 * </pre>
 *
 * The batch stays a positional array (vLLM's {@code EventBatch} is {@code array_like}); each event is
 * a map whose tag {@code type} comes first and whose fields follow in vLLM's declaration order,
 * defaults omitted as msgspec's {@code omit_defaults} does. {@code medium} is {@code GPU} for the
 * device prefix cache, {@code CPU} for the host tier, {@code STORAGE} for the disk tier.
 *
 * <p>Block hashes ({@code h}): a block key is 32 bytes of SHA-256. {@link HashFormat#INT} (vLLM's
 * default, {@code VLLM_KV_EVENTS_USE_INT_BLOCK_HASHES=1}) sends what vLLM's
 * {@code maybe_convert_block_hash} makes of its own 32-byte hashes: the key read as a big-endian
 * integer modulo 2^64, i.e. its last 8 bytes as an unsigned 64-bit integer (msgpack uint64);
 * {@link HashFormat#BYTES} sends the 32 bytes (msgpack bin). The parent of a sequence's first block
 * (the namespace seed) is sent as nil, as vLLM does for a first block.
 *
 * <p>Which keys: device events carry per-block keys and {@code block_size} = the block size; host and
 * disk events carry the keys lookups use there, the chunk keys (a chunk is keyed by its last block),
 * with {@code block_size} = tokens per chunk. Offload tiers keep no token ids, so their
 * {@code token_ids} is empty, as vLLM's offloading connector sends it.
 */
public final class KvEventEncoder {

    /** How a 32-byte block key is sent. */
    public enum HashFormat { INT, BYTES }

    private final BlockKey namespaceSeed;
    private final int blockSize;
    private final int chunkTokens;
    private final HashFormat hashFormat;
    private final int dataParallelRank;

    /**
     * @param namespaceSeed    the parent of every sequence's first block (sent as nil)
     * @param blockSize        tokens per device block
     * @param chunkTokens      tokens per offload-tier chunk (blocks per chunk times the block size)
     * @param hashFormat       how keys are sent
     * @param dataParallelRank the batch's third field (0 for one engine)
     */
    public KvEventEncoder(BlockKey namespaceSeed, int blockSize, int chunkTokens, HashFormat hashFormat, int dataParallelRank) {
        this.namespaceSeed = Objects.requireNonNull(namespaceSeed, "namespaceSeed");
        if (blockSize <= 0 || chunkTokens <= 0) {
            throw new IllegalArgumentException("block size and chunk tokens must be positive, got " + blockSize + ", " + chunkTokens);
        }
        this.blockSize = blockSize;
        this.chunkTokens = chunkTokens;
        this.hashFormat = Objects.requireNonNull(hashFormat, "hashFormat");
        this.dataParallelRank = dataParallelRank;
    }

    /** An encoder for {@code engine}'s events: its key chain's seed, block size and chunk size. */
    public static KvEventEncoder forEngine(io.kvtier.engine.Engine engine, HashFormat hashFormat) {
        int bs = engine.config().blockSize();
        int chunk = engine.offload() == null ? bs : engine.offload().config().blocksPerChunk() * bs;
        return new KvEventEncoder(engine.namespaceSeed(), bs, chunk, hashFormat, 0);
    }

    /** The value a key is sent as: a {@link BigInteger} in [0, 2^64) or the 32 bytes. */
    public Object wireHash(BlockKey key) {
        return switch (hashFormat) {
            case INT -> new BigInteger(1, java.nio.ByteBuffer.allocate(8).putLong(key.w3()).array());
            case BYTES -> key.toBytes();
        };
    }

    /**
     * One batch.
     *
     * @param epochSeconds the batch's time stamp, seconds since the Unix epoch
     * @param events       in emission order
     */
    public byte[] encode(double epochSeconds, List<KvEvent> events) {
        events = withoutRepeatedClears(events);
        try (MessageBufferPacker p = MsgPack.packer()) {
            p.packArrayHeader(3);
            p.packDouble(epochSeconds);
            p.packArrayHeader(events.size());
            for (KvEvent e : events) {
                switch (e) {
                    case KvEvent.BlockStored s -> stored(p, s);
                    case KvEvent.BlockRemoved r -> removed(p, r);
                    case KvEvent.AllCleared c -> {
                        p.packMapHeader(1);
                        p.packString("type").packString("AllBlocksCleared");
                    }
                }
            }
            p.packInt(dataParallelRank);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException("msgpack into memory failed", e); // a buffer packer does not do I/O
        }
    }

    /**
     * The events with each run of adjacent {@code AllCleared} cut to its first: one reset clears
     * every tier (one event per tier inside kvtier), but {@code AllBlocksCleared} names no medium,
     * so a second one in a row would say nothing a subscriber can use.
     */
    static List<KvEvent> withoutRepeatedClears(List<KvEvent> events) {
        List<KvEvent> out = new java.util.ArrayList<>(events.size());
        for (KvEvent e : events) {
            if (e instanceof KvEvent.AllCleared && !out.isEmpty() && out.getLast() instanceof KvEvent.AllCleared) {
                continue;
            }
            out.add(e);
        }
        return out;
    }

    private void stored(MessageBufferPacker p, KvEvent.BlockStored s) throws IOException {
        p.packMapHeader(9);
        p.packString("type").packString("BlockStored");
        p.packString("block_hashes");
        hashes(p, s.keys());
        p.packString("parent_block_hash");
        if (s.parent().equals(namespaceSeed)) {
            p.packNil();
        } else {
            hash(p, s.parent());
        }
        p.packString("token_ids").packArrayHeader(s.tokenIds().size());
        for (int t : s.tokenIds()) {
            p.packInt(t);
        }
        p.packString("block_size").packInt(KvEvents.DEVICE.equals(s.tier()) ? blockSize : chunkTokens);
        p.packString("lora_id").packNil();
        p.packString("medium").packString(Media.of(s.tier()));
        p.packString("lora_name").packNil();
        p.packString("locality").packString("LOCAL");
    }

    private void removed(MessageBufferPacker p, KvEvent.BlockRemoved r) throws IOException {
        p.packMapHeader(4);
        p.packString("type").packString("BlockRemoved");
        p.packString("block_hashes");
        hashes(p, r.keys());
        p.packString("medium").packString(Media.of(r.tier()));
        p.packString("locality").packString("LOCAL");
    }

    private void hashes(MessageBufferPacker p, List<BlockKey> keys) throws IOException {
        p.packArrayHeader(keys.size());
        for (BlockKey k : keys) {
            hash(p, k);
        }
    }

    private void hash(MessageBufferPacker p, BlockKey k) throws IOException {
        switch (hashFormat) {
            case INT -> p.packBigInteger((BigInteger) wireHash(k));
            case BYTES -> p.packBinaryHeader(BlockKey.BYTES).writePayload(k.toBytes());
        }
    }
}
