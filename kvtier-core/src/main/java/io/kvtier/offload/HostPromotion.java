package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.offload.transfer.ChunkCopy;
import io.kvtier.tier.HostTier;
import io.kvtier.tier.StorePlan;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;

/**
 * The rule every promotion into the host tier follows, whichever tier behind it (disk, remote)
 * the chunks come from: reserve host slots for the longest prefix of the hit that the host tier
 * can hold beside the request's own host chunks (never evicting those), and read exactly that
 * prefix. The rest of the hit is recomputed (the scheduler counts it in
 * {@link OffloadStats#blocksNotStored()}). Engine thread only.
 */
final class HostPromotion {

    private HostPromotion() {
    }

    /** Host slots reserved for {@code keys[0, count)}: copies to read into them. */
    record Reserved(int count, List<ChunkCopy> copies) {
    }

    /**
     * Reserves host slots (state: being stored) for the longest prefix of {@code keys} that fits
     * beside {@code hostKeys}, evicting other host entries by the host's policy.
     *
     * @param hostKeys the request's chunks before {@code keys}, ready in the host (kept)
     * @param keys     chunk keys to promote, parents first; absent from the host
     * @param parents  parent key of each of {@code keys}
     * @param tokens   token ids of each of {@code keys}, for the chunk headers
     * @return the reservation (count >= 1), or null if nothing fits now (nothing changed)
     */
    static Reserved reserve(HostTier host, List<BlockKey> hostKeys, List<BlockKey> keys, List<BlockKey> parents,
                            List<int[]> tokens, BlockKey namespace, int blocksPerChunk) {
        HashSet<BlockKey> keep = new HashSet<>(hostKeys);
        int n = fitting(host, keep, keys);
        if (n == 0) {
            return null;
        }
        List<BlockKey> head = keys.subList(0, n);
        if (!(host.index().prepareStore(head, parents.subList(0, n), keep) instanceof StorePlan.Accepted a)) {
            return null;
        }
        if (!a.toStore().equals(head)) {
            // Not exactly these chunks (one appeared in the host meanwhile): not now.
            host.index().completeStore(a.toStore(), false);
            return null;
        }
        List<ChunkCopy> copies = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            copies.add(new ChunkCopy(noDevice(blocksPerChunk), a.slot(i), namespace, head.get(i), parents.get(i), tokens.get(i)));
        }
        return new Reserved(n, copies);
    }

    /** How many of {@code keys} {@link #reserve} would reserve now beside {@code hostKeys}; no side effects. */
    static int fitting(HostTier host, java.util.Collection<BlockKey> hostKeys, List<BlockKey> keys) {
        int n = Math.min(keys.size(), Math.max(0, host.capacity() - hostKeys.size()));
        return host.index().fittingPrefix(keys.subList(0, n), hostKeys instanceof java.util.Set<BlockKey> s ? s
                : new HashSet<>(hostKeys));
    }

    /** A chunk copy's device blocks when it touches no device block (host slot to/from a tier behind it). */
    static int[] noDevice(int blocksPerChunk) {
        int[] b = new int[blocksPerChunk];
        Arrays.fill(b, -1);
        return b;
    }
}
