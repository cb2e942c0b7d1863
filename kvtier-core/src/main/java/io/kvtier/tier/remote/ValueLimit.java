package io.kvtier.tier.remote;

import io.lettuce.core.api.StatefulConnection;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * The largest value a store is sent: the settings' limit, lowered to the server's
 * {@code proto-max-bulk-len} less 64 KiB (the command around the value) when CONFIG GET is
 * allowed. Read at connection and again after a refusal, since the server's may be lowered
 * while the tier runs; a larger value fails at once rather than costing a round trip.
 */
final class ValueLimit {

    private final long configured;
    private volatile long bytes;

    ValueLimit(long configured) {
        this.configured = configured;
        this.bytes = configured;
    }

    /** The limit now, in bytes. */
    long bytes() {
        return bytes;
    }

    /** Reads the server's limit on {@code conn} in the background (null: nothing to ask). */
    @SuppressWarnings("unchecked")
    void read(StatefulConnection<String, byte[]> conn) {
        if (conn == null) {
            return;
        }
        CompletionStage<Map<String, String>> cfg = conn instanceof StatefulRedisClusterConnection<String, byte[]> c
                ? c.async().configGet("proto-max-bulk-len")
                : ((StatefulRedisConnection<String, byte[]>) conn).async().configGet("proto-max-bulk-len");
        cfg.whenComplete((m, err) -> {
            if (err == null && m != null && m.get("proto-max-bulk-len") != null) {
                try {
                    long limit = Long.parseLong(m.get("proto-max-bulk-len")) - (64 << 10);
                    bytes = Math.min(configured, limit);
                } catch (NumberFormatException ignored) {
                    // keep the configured limit
                }
            } // CONFIG may be forbidden by the ACL: the configured limit stands
        });
    }

    /** The failure of a value of {@code valueBytes} above the limit: it is not sent. */
    <T> CompletableFuture<T> tooLarge(long valueBytes) {
        return CompletableFuture.failedFuture(new RemoteFailure(RemoteFailure.Cause.ERROR, "value of " + valueBytes
                + " bytes exceeds the remote limit of " + bytes + " bytes; not sent"));
    }
}
