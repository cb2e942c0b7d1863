package io.kvtier.offload;

import io.kvtier.kv.BlockKey;
import io.kvtier.tier.AdmissionFilter;
import java.util.ArrayList;
import java.util.List;

/**
 * A tier fed from host slots and read back through them (disk, remote): when it is written (its
 * write policy and admission filter) is one rule for every such tier; how it is written is the
 * subclass's {@link #write}. Engine thread only.
 */
abstract sealed class TierBehindHost permits DiskChain, RemoteChain {

    private final DiskWritePolicy policy;
    private final AdmissionFilter admission;

    /**
     * @param admitAfter  write a chunk only from its N-th use (1: at once)
     * @param trackedKeys keys the admission filter remembers uses of
     */
    TierBehindHost(DiskWritePolicy policy, int admitAfter, int trackedKeys) {
        this.policy = policy;
        this.admission = new AdmissionFilter(admitAfter, trackedKeys);
    }

    /**
     * Starts a write of readable host entries the tier does not hold yet (an empty list: none).
     *
     * @return the id of the job started, or -1
     */
    abstract long write(List<BlockKey> candidates, long epoch);

    /**
     * A cache reset: forgets the tier's entries and progress; jobs in flight end as usual.
     *
     * @param epoch the scheduler's epoch after the reset
     */
    abstract void clear(long epoch);

    /** Throws IllegalStateException naming a broken invariant of the tier's bookkeeping. */
    abstract void checkInvariants();

    /** Releases the tier's store (after the transfer engine closed). */
    abstract void close();

    /** Whether the tier is written only with the host's would-be victims, just before they are evicted. */
    final boolean writeOnEvict() {
        return policy == DiskWritePolicy.ON_EVICT;
    }

    /** A host store completed: write-through policy writes the admitted chunks. */
    final void onHostStored(List<BlockKey> keys, long epoch) {
        if (policy != DiskWritePolicy.THROUGH) {
            return;
        }
        List<BlockKey> admitted = new ArrayList<>();
        for (BlockKey k : keys) {
            if (admission.use(k)) {
                admitted.add(k);
            }
        }
        write(admitted, epoch);
    }

    /** A host lookup hit these keys: with an admission threshold, a use may admit them now. */
    final void onHostHit(List<BlockKey> keys, long epoch) {
        if (admission.usesToAdmit() > 1) {
            onHostStored(keys, epoch);
        }
    }
}
