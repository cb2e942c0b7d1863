package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Admits a chunk to a tier only from its N-th use on (a use = one request whose prefix contains
 * the chunk, offered for storing). Uses of chunks not yet admitted are remembered in a bounded
 * ghost list (LRU, {@code ghostCapacity} keys), so one-off prefixes never displace reused ones.
 * N = 1 admits everything and remembers nothing. Engine thread only.
 */
public final class AdmissionFilter {

    private final int usesToAdmit;
    private final Map<BlockKey, Integer> ghosts;

    /**
     * @param usesToAdmit   uses needed before a chunk is stored (>= 1)
     * @param ghostCapacity keys remembered while not admitted (>= 1)
     */
    public AdmissionFilter(int usesToAdmit, int ghostCapacity) {
        if (usesToAdmit < 1 || ghostCapacity < 1) {
            throw new IllegalArgumentException("admission needs usesToAdmit >= 1 and ghostCapacity >= 1, got "
                    + usesToAdmit + ", " + ghostCapacity);
        }
        this.usesToAdmit = usesToAdmit;
        this.ghosts = new LinkedHashMap<>(16, 0.75f, true) {
            @Override
            protected boolean removeEldestEntry(Map.Entry<BlockKey, Integer> eldest) {
                return size() > ghostCapacity;
            }
        };
    }

    /** Admits everything. */
    public static AdmissionFilter admitAll() {
        return new AdmissionFilter(1, 1);
    }

    public int usesToAdmit() {
        return usesToAdmit;
    }

    /** Records one use of {@code key}; true if the chunk may be stored now. */
    public boolean use(BlockKey key) {
        if (usesToAdmit == 1) {
            return true;
        }
        int n = ghosts.merge(key, 1, Integer::sum);
        if (n >= usesToAdmit) {
            ghosts.remove(key);
            return true;
        }
        return false;
    }

    /** Keys remembered as ghosts. */
    public int ghostCount() {
        return ghosts.size();
    }
}
