package io.kvtier.engine;

import io.kvtier.kv.KvLayout;
import io.kvtier.tier.ChunkHeader;
import io.kvtier.tier.HostSlab;
import io.kvtier.tier.disk.DiskCapacity;
import java.util.List;
import java.util.function.LongBinaryOperator;

/**
 * The host and disk tiers' byte budgets ({@code --host-cache-bytes}, {@code --disk-cache-bytes})
 * against a model's KV groups: the groups share a budget by bytes per block, and each group's
 * share must hold one chunk. A budget too small is refused before anything is built, in one
 * wording whatever the number of groups ({@link #tooSmall}), naming the flag and the least budget
 * that works. The remote tier's {@code --remote-max-in-flight} is no share: every group writes
 * within the whole of it, so it must hold the largest group's value (header and payload) alone.
 */
public final class TierBudgets {

    private TierBudgets() {
    }

    /**
     * Refuses {@code setup}'s byte budgets when a group's share cannot hold one chunk, and its
     * remote write budget when it cannot hold the largest group's value.
     *
     * @param layouts the model's KV groups' layouts (one for a model without sliding-window layers)
     * @throws IllegalArgumentException {@link #tooSmall}'s line
     */
    public static void check(OffloadSetup setup, List<KvLayout> layouts) {
        if (!setup.enabled()) {
            return;
        }
        int blocksPerChunk = setup.config().blocksPerChunk();
        if (setup.hostChunks() == 0) {
            long min = smallest(layouts, blocksPerChunk, (payload, tokens) -> HostSlab.slotBytesFor(payload, (int) tokens));
            if (setup.hostBytes() < min) {
                throw tooSmall("--host-cache-bytes", setup.hostBytes(), layouts.size(), min);
            }
        }
        if (setup.disk() != null) {
            long min = smallest(layouts, blocksPerChunk, (payload, tokens) -> DiskCapacity.allocatedBytes(payload, (int) tokens,
                    DiskCapacity.DEFAULT_ALLOCATION_UNIT));
            if (setup.disk().bytes() < min) {
                throw tooSmall("--disk-cache-bytes", setup.disk().bytes(), layouts.size(), min);
            }
        }
        if (setup.remote() != null) {
            // A write that would pass the budget is dropped, never waited for: below one value every
            // store was dropped (budget) and nothing but the summary's count said so (a new user's trial).
            long value = 0;
            for (KvLayout l : layouts) {
                value = Math.max(value, ChunkHeader.encodedSize(blocksPerChunk * l.blockSize()) + (long) blocksPerChunk * l.bytesPerBlock());
            }
            if (setup.remote().maxBytesInFlight() < value) {
                throw new IllegalArgumentException("--remote-max-in-flight " + setup.remote().maxBytesInFlight()
                        + " cannot hold one chunk's value of " + value + " bytes (header and payload"
                        + (layouts.size() == 1 ? "" : ", the largest of the model's " + layouts.size() + " KV groups")
                        + "), so every write to the remote tier would be dropped: give at least " + value);
            }
        }
    }

    /**
     * The one line for a budget that cannot hold one chunk (of each group): e.g. {@code
     * --host-cache-bytes 1 cannot hold one chunk of 20672 bytes: give at least 20672}, or for a
     * model of 2 groups {@code --host-cache-bytes 25727 cannot hold one chunk of each of the
     * model's 2 KV groups (they share it by bytes per block): give at least 25728}.
     *
     * @param min the least budget that holds one chunk (of each group), bytes
     */
    static IllegalArgumentException tooSmall(String flag, long given, int groups, long min) {
        return new IllegalArgumentException(flag + " " + given + " cannot hold one chunk of " + (groups == 1 ? min + " bytes"
                : "each of the model's " + groups + " KV groups (they share it by bytes per block)") + ": give at least " + min);
    }

    /** A group's part of {@code budget}: in proportion to its bytes per block, at least 1. */
    static long share(long budget, long bytesPerBlock, long totalBytesPerBlock) {
        return Math.max(1, (long) (budget * ((double) bytesPerBlock / totalBytesPerBlock)));
    }

    /** The smallest budget whose {@link #share} holds one chunk of every group ({@code chunkBytes(payload, tokens)}). */
    private static long smallest(List<KvLayout> layouts, int blocksPerChunk, LongBinaryOperator chunkBytes) {
        long total = 0;
        for (KvLayout l : layouts) {
            total += l.bytesPerBlock();
        }
        long min = 0;
        for (KvLayout l : layouts) {
            long chunk = chunkBytes.applyAsLong((long) blocksPerChunk * l.bytesPerBlock(), (long) blocksPerChunk * l.blockSize());
            long b = Math.ceilDiv(Math.multiplyExact(chunk, total), l.bytesPerBlock());
            while (share(b, l.bytesPerBlock(), total) < chunk) {
                b++; // the share's floating-point cut may round one byte under
            }
            min = Math.max(min, b);
        }
        return min;
    }
}
