package io.kvtier.replay.trace;

import java.util.List;

/**
 * The requests of one trace in file order (which is arrival order for the Mooncake traces:
 * their timestamps never decrease).
 *
 * @param source       where the requests came from (a file name), for messages and reports
 * @param requests     the requests, unmodifiable
 * @param fileRequests requests in the whole source: more than {@code requests.size()} when only
 *                     the first ones are replayed ({@link #firstRequests})
 */
public record Trace(String source, List<TraceRequest> requests, int fileRequests) {

    public Trace {
        requests = List.copyOf(requests);
        if (fileRequests < requests.size()) {
            throw new IllegalArgumentException("a trace of " + fileRequests + " requests cannot hold " + requests.size());
        }
    }

    /** All requests of {@code source}. */
    public Trace(String source, List<TraceRequest> requests) {
        this(source, requests, requests.size());
    }

    /** The first {@code n} requests (all if there are fewer), remembering how many the source has. */
    public Trace firstRequests(int n) {
        return n >= requests.size() ? this : new Trace(source, requests.subList(0, n), fileRequests);
    }

    /** Whether only the first requests of the source are here. */
    public boolean partial() {
        return requests.size() < fileRequests;
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
