package io.kvtier.offload;

import java.time.Duration;

/**
 * Offloading knobs.
 *
 * @param blocksPerChunk    device blocks per stored chunk (default 1); a chunk is keyed by its last block's key
 * @param offloadPromptOnly store only blocks that hold at least one prompt token (default true);
 *                          false stores blocks completed during decode too
 * @param jobDeadline       a transfer not completed by then fails (the transfer engine
 *                          guarantees it touches none of the job's memory after that)
 * @param hostAdmitAfter    store a chunk in the host tier only from its N-th use on (1 = always)
 * @param storePolicy       when chunks are stored: at commit (eager, default) or near device eviction (lazy)
 * @param loadPolicy        which hits are loaded ({@code --load-policy}): every one ({@code always}, default),
 *                          those estimated faster to load than to recompute ({@code faster}; {@link LoadCosts}),
 *                          or none ({@code never})
 */
public record OffloadConfig(int blocksPerChunk, boolean offloadPromptOnly, Duration jobDeadline, int hostAdmitAfter,
                            StorePolicy storePolicy, LoadPolicy loadPolicy) {

    public static final OffloadConfig DEFAULT = new OffloadConfig(1, true, Duration.ofSeconds(10), 1, StorePolicy.EAGER, LoadPolicy.ALWAYS);

    /** Eager stores, every hit loaded. */
    public OffloadConfig(int blocksPerChunk, boolean offloadPromptOnly, Duration jobDeadline, int hostAdmitAfter) {
        this(blocksPerChunk, offloadPromptOnly, jobDeadline, hostAdmitAfter, StorePolicy.EAGER, LoadPolicy.ALWAYS);
    }

    public OffloadConfig {
        if (blocksPerChunk < 1) {
            throw new IllegalArgumentException("blocks per chunk must be at least 1, got " + blocksPerChunk);
        }
        if (jobDeadline.isNegative() || jobDeadline.isZero()) {
            throw new IllegalArgumentException("job deadline must be positive, got " + jobDeadline);
        }
        if (hostAdmitAfter < 1) {
            throw new IllegalArgumentException("host admission needs at least 1 use, got " + hostAdmitAfter);
        }
        java.util.Objects.requireNonNull(storePolicy, "storePolicy");
        java.util.Objects.requireNonNull(loadPolicy, "loadPolicy");
    }

    public OffloadConfig withBlocksPerChunk(int n) {
        return new OffloadConfig(n, offloadPromptOnly, jobDeadline, hostAdmitAfter, storePolicy, loadPolicy);
    }

    public OffloadConfig withOffloadPromptOnly(boolean on) {
        return new OffloadConfig(blocksPerChunk, on, jobDeadline, hostAdmitAfter, storePolicy, loadPolicy);
    }

    public OffloadConfig withHostAdmitAfter(int uses) {
        return new OffloadConfig(blocksPerChunk, offloadPromptOnly, jobDeadline, uses, storePolicy, loadPolicy);
    }

    public OffloadConfig withJobDeadline(Duration d) {
        return new OffloadConfig(blocksPerChunk, offloadPromptOnly, d, hostAdmitAfter, storePolicy, loadPolicy);
    }

    public OffloadConfig withStorePolicy(StorePolicy p) {
        return new OffloadConfig(blocksPerChunk, offloadPromptOnly, jobDeadline, hostAdmitAfter, p, loadPolicy);
    }

    public OffloadConfig withLoadPolicy(LoadPolicy p) {
        return new OffloadConfig(blocksPerChunk, offloadPromptOnly, jobDeadline, hostAdmitAfter, storePolicy, p);
    }
}
