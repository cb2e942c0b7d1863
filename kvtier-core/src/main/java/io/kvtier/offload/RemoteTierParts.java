package io.kvtier.offload;

import io.kvtier.tier.remote.RemoteKeys;
import io.kvtier.tier.remote.RemoteStore;
import java.time.Duration;

/**
 * What the offload scheduler needs to put a remote tier (Redis / Valkey) behind the host tier.
 *
 * @param store            the store (the transfer engine's remote threads use the same one), or
 *                         null for a simulated store (the replay's transfer engine moves no bytes)
 * @param keys             the store's names of chunks (the same the transfer engine's remote
 *                         copier uses, so that a node's breaker is asked about the node that
 *                         will serve the command), or null with a null store
 * @param policy           when chunks are written to the store
 * @param admitAfter       write a chunk only from its N-th use (1 = always)
 * @param maxBytesInFlight bytes of values being written at once; a write that would exceed it is
 *                         dropped and counted, never waited for
 * @param timeout          deadline of a remote operation (a job's deadline is twice that: it may
 *                         queue behind another)
 * @param hintTtl          how long the answer of a probe is trusted before the key is probed again
 */
public record RemoteTierParts(RemoteStore store, RemoteKeys keys, DiskWritePolicy policy, int admitAfter, long maxBytesInFlight,
                              Duration timeout, Duration hintTtl) {

    public RemoteTierParts {
        if (store != null && keys == null) {
            throw new IllegalArgumentException("a remote store needs its key names");
        }
        if (admitAfter < 1) {
            throw new IllegalArgumentException("remote admit-after must be at least 1, got " + admitAfter);
        }
        if (maxBytesInFlight <= 0) {
            throw new IllegalArgumentException("remote bytes in flight must be positive, got " + maxBytesInFlight);
        }
        if (timeout.isNegative() || timeout.isZero() || hintTtl.isNegative()) {
            throw new IllegalArgumentException("remote timeout must be positive and the hint TTL not negative");
        }
    }
}
