package io.kvtier.tier;

/** Answer of {@link TierIndex#lookup}: how many leading chunks of a chain are readable. */
public sealed interface TierLookup {
    /** Leading chunks readable now (0 for a miss). */
    int readyChunks();

    /** The first {@code chunks} (> 0) keys are readable; the next one is absent (or there is none). */
    record Hit(int chunks) implements TierLookup {
        @Override
        public int readyChunks() {
            return chunks;
        }
    }

    /** The first {@code readyChunks} keys are readable and the next is being stored: ask again next step. */
    record Pending(int readyChunks) implements TierLookup {
    }

    /** The first key is absent. */
    record Miss() implements TierLookup {
        @Override
        public int readyChunks() {
            return 0;
        }
    }
}
