package io.kvtier.offload;

/**
 * Answer of {@link OffloadScheduler#lookup}, {@link OffloadScheduler#decide} and {@link OffloadScheduler#promote}:
 * what the tiers beyond the device hit hold for a request.
 */
public sealed interface Lookup {
    /** Nothing to load beyond the device hit. */
    record Miss() implements Lookup {
    }

    /** Part of the hit is being stored or loaded for another request: ask again next step. */
    record Wait(String why) implements Lookup {
    }

    /** Blocks [deviceHitBlocks, deviceHitBlocks + blocks) can be loaded from {@code tier}. */
    record Hit(String tier, int blocks) implements Lookup {
    }

    /**
     * Beyond the device hit, {@code hostChunks} chunks are in the host tier and the next
     * {@code diskChunks} on disk, or (with no disk chunks) the next {@code remoteChunks} in the
     * remote tier: call {@link OffloadScheduler#promote} to bring those into the host first.
     */
    record Promote(int hostChunks, int diskChunks, int remoteChunks) implements Lookup {
        /** Host and disk chunks only. */
        public Promote(int hostChunks, int diskChunks) {
            this(hostChunks, diskChunks, 0);
        }
    }
}
