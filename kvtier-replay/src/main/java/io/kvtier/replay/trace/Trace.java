package io.kvtier.replay.trace;

import java.util.List;

/**
 * The requests of one trace in file order (which is arrival order for the Mooncake traces:
 * their timestamps never decrease).
 *
 * @param source   where the requests came from (a file name), for messages and reports
 * @param requests the requests, unmodifiable
 */
public record Trace(String source, List<TraceRequest> requests) {

    public Trace {
        requests = List.copyOf(requests);
    }

    /** Number of requests. */
    public int size() {
        return requests.size();
    }

    /** Sum of the prompt lengths, in tokens. */
    public long promptTokens() {
        long sum = 0;
        for (TraceRequest r : requests) {
            sum += r.inputLength();
        }
        return sum;
    }

    /** Sum of the answer lengths, in tokens. */
    public long outputTokens() {
        long sum = 0;
        for (TraceRequest r : requests) {
            sum += r.outputLength();
        }
        return sum;
    }
}
