package io.kvtier.tier.disk;

import io.kvtier.kv.BlockKey;
import java.lang.foreign.Arena;
import java.nio.file.Path;

/**
 * Run in a child JVM by {@link DiskConcurrencyTest}: opens a store on {@code args[0]} with the
 * test namespace, writes chunk 1 if it is the owner, prints its role, and holds the store (and
 * so the lock) until its standard input closes.
 */
public final class LockHolderMain {

    private LockHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        BlockKey ns = Chunks.NS;
        try (DiskStore store = DiskStore.open(Path.of(args[0]), ns, DiskFsync.NONE); Arena arena = Arena.ofConfined()) {
            if (store.writable()) {
                Chunks.write(store, 1, Chunks.payload(arena, DiskConcurrencyTest.CHILD_PAYLOAD, 1));
            }
            System.out.println(store.role());
            System.out.flush();
            while (System.in.read() >= 0) {
                // hold the lock until the parent closes our input
            }
        }
    }
}
