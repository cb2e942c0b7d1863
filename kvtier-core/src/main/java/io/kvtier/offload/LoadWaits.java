package io.kvtier.offload;

import java.util.HashSet;
import java.util.Set;

/**
 * Which requests' load-or-recompute decision and wait for device blocks were counted: a request
 * that is not admitted is decided again at every step, and each of its decisions would otherwise
 * be counted again. Forgotten when the request finishes. Engine thread only.
 */
final class LoadWaits {

    private final Set<Long> decided = new HashSet<>();
    private final Set<Long> waited = new HashSet<>();

    /** True the first time the request is decided. */
    boolean firstDecision(long requestId) {
        return decided.add(requestId);
    }

    /** True the first time the request waits for device blocks. */
    boolean firstWait(long requestId) {
        return waited.add(requestId);
    }

    void forget(long requestId) {
        decided.remove(requestId);
        waited.remove(requestId);
    }
}
