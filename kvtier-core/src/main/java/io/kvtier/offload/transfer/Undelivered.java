package io.kvtier.offload.transfer;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * Results of finished jobs not yet handed to the engine thread, in completion order. Engine
 * thread only; shared by the transfer engines so that "every result is returned exactly once, by
 * one poll or await" is written once.
 */
final class Undelivered {

    private final ArrayDeque<TransferResult> results = new ArrayDeque<>();

    void add(TransferResult r) {
        results.add(r);
    }

    /** Every result, removed. */
    List<TransferResult> drain() {
        if (results.isEmpty()) {
            return List.of(); // polled at every step: nothing allocated when nothing finished
        }
        List<TransferResult> out = List.copyOf(results);
        results.clear();
        return out;
    }

    /** The results of the {@code wanted} jobs, removed; the others stay. */
    List<TransferResult> take(Set<Long> wanted) {
        List<TransferResult> out = new ArrayList<>();
        for (Iterator<TransferResult> it = results.iterator(); it.hasNext(); ) {
            TransferResult r = it.next();
            if (wanted.contains(r.jobId())) {
                out.add(r);
                it.remove();
            }
        }
        return out;
    }

    /** Whether a result of one of the {@code wanted} jobs is here. */
    boolean containsAny(Set<Long> wanted) {
        for (TransferResult r : results) {
            if (wanted.contains(r.jobId())) {
                return true;
            }
        }
        return false;
    }

    int size() {
        return results.size();
    }

    void clear() {
        results.clear();
    }
}
