package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.List;
import java.util.Objects;

/**
 * A change of the resident set of one tier: the set of keys a lookup can hit. Numbered by the
 * {@link KvEvents} that emitted it ({@code seq} starts at 1 and grows by one per event).
 */
public sealed interface KvEvent {

    /** Sequence number within the emitting {@link KvEvents}. */
    long seq();

    /** Name of the tier whose resident set changed ({@code "host"}, {@code "disk"}, ...). */
    String tier();

    /**
     * Keys became readable: a store completed, or (tier {@code device}) full blocks entered the
     * device prefix cache. {@code keys} is a chain in prefix order whose first key's parent is
     * {@code parent} and each further key's parent is the key before it. {@code tokenIds} are the
     * tokens of those keys' blocks in order, when the emitter knows them (the device does; offload
     * tiers keep no token ids in their bookkeeping and emit an empty list).
     */
    record BlockStored(long seq, List<BlockKey> keys, BlockKey parent, String tier, List<Integer> tokenIds) implements KvEvent {
        public BlockStored {
            keys = List.copyOf(keys);
            Objects.requireNonNull(parent, "parent");
            Objects.requireNonNull(tier, "tier");
            tokenIds = List.copyOf(tokenIds);
        }

        /** A store of an offload tier, without token ids. */
        public BlockStored(long seq, List<BlockKey> keys, BlockKey parent, String tier) {
            this(seq, keys, parent, tier, List.of());
        }
    }

    /** Keys stopped being readable: evicted, or removed (found corrupt on load). */
    record BlockRemoved(long seq, List<BlockKey> keys, String tier) implements KvEvent {
        public BlockRemoved {
            keys = List.copyOf(keys);
            Objects.requireNonNull(tier, "tier");
        }
    }

    /** Every key of the tier stopped being readable. */
    record AllCleared(long seq, String tier) implements KvEvent {
        public AllCleared {
            Objects.requireNonNull(tier, "tier");
        }
    }
}
