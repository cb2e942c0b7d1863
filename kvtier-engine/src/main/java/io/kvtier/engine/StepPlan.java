package io.kvtier.engine;

import java.util.List;

/**
 * What one step computes: for each scheduled request, how many of its tokens, from which
 * position. Produced by {@link Scheduler#schedule()}, consumed by the engine's execute and commit.
 */
public record StepPlan(List<Item> items, int preemptions) {

    /** {@code numTokens} tokens of {@code request} from position {@code startPos}. */
    public record Item(Request request, int startPos, int numTokens) {
        /** Whether this chunk reaches the request's last known token (so a token is sampled). */
        public boolean samples() {
            return startPos + numTokens == request.numTokens();
        }
    }

    public boolean isEmpty() {
        return items.isEmpty();
    }

    public int totalTokens() {
        int n = 0;
        for (Item i : items) {
            n += i.numTokens();
        }
        return n;
    }
}
