package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/** Answer of {@link TierIndex#prepareStore}: the slots a store may write, or why it may not. */
public sealed interface StorePlan {

    /**
     * The store may proceed: write chunk {@code toStore.get(i)} into slot {@code slots[i]},
     * then call {@link TierIndex#completeStore} with {@code toStore}. {@code evicted} were removed to
     * make room. {@code toStore} may be empty (everything was present or being stored).
     */
    record Accepted(List<BlockKey> toStore, int[] slots, List<BlockKey> evicted) implements StorePlan {
        public Accepted {
            toStore = List.copyOf(toStore);
            slots = slots.clone();
            evicted = List.copyOf(evicted);
            if (slots.length != toStore.size()) {
                throw new IllegalArgumentException(slots.length + " slots for " + toStore.size() + " keys");
            }
        }

        /** Slots, parallel to {@code toStore} (a copy). */
        @Override
        public int[] slots() {
            return slots.clone();
        }

        /** Slot of {@code toStore.get(i)}. */
        public int slot(int i) {
            return slots[i];
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Accepted a && toStore.equals(a.toStore) && Arrays.equals(slots, a.slots)
                    && evicted.equals(a.evicted);
        }

        @Override
        public int hashCode() {
            return Objects.hash(toStore, Arrays.hashCode(slots), evicted);
        }

        @Override
        public String toString() {
            return "Accepted[toStore=" + toStore.size() + " slots=" + Arrays.toString(slots)
                    + " evicted=" + evicted.size() + "]";
        }
    }

    /** Nothing was changed; the caller may retry in a later step. */
    record Refused(String reason) implements StorePlan {
    }
}
