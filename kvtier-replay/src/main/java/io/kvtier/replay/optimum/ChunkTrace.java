package io.kvtier.replay.optimum;

import io.kvtier.replay.trace.Trace;
import io.kvtier.replay.trace.TraceRequest;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A trace reduced to what cache analysis needs: for each request, in trace order, its prompt
 * length and the dense ids of its full 512-token blocks (chunks), flattened into one array.
 *
 * <p>Chunk ids stand for block keys. Block keys are chained (a key hashes its parent key), so a
 * chunk id is interned from (parent chunk id, hash id), not from the hash id alone: two chunks
 * get the same id exactly when the engine would give them the same key, even in a trace that
 * broke the "equal ids mean equal prefixes" promise. (The shipped traces keep it: every hash id
 * has a single parent, so chunk ids and hash ids correspond one to one.) A consequence used by
 * the optimum: a chunk has one parent, and every request that uses a chunk also uses its
 * parent, earlier in the same request.
 *
 * <p>Memory: two ints per request plus one per full block (276,491 for the conversation trace).
 */
public final class ChunkTrace {

    /** Tokens per chunk: one trace block. */
    public static final int CHUNK_TOKENS = TraceRequest.BLOCK_TOKENS;

    private final String source;
    private final int[] inputLength;
    private final int[] start;
    private final int[] chunks;
    private final int distinct;
    private final long promptTokens;

    private ChunkTrace(String source, int[] inputLength, int[] start, int[] chunks, int distinct) {
        this.source = source;
        this.inputLength = inputLength;
        this.start = start;
        this.chunks = chunks;
        this.distinct = distinct;
        long sum = 0;
        for (int len : inputLength) {
            sum += len;
        }
        this.promptTokens = sum;
    }

    /** Chunk sequence of a trace. */
    public static ChunkTrace of(Trace trace) {
        return of(trace.source(), trace.requests());
    }

    /** Chunk sequence of {@code requests} in list order; {@code source} names it in reports. */
    public static ChunkTrace of(String source, List<TraceRequest> requests) {
        int n = requests.size();
        int[] inputLength = new int[n];
        int[] start = new int[n + 1];
        long total = 0;
        for (int r = 0; r < n; r++) {
            TraceRequest req = requests.get(r);
            inputLength[r] = req.inputLength();
            start[r] = (int) total;
            total += req.fullBlocks();
            if (total > Integer.MAX_VALUE - 8) {
                throw new IllegalArgumentException("trace too large: more than 2^31 full blocks");
            }
        }
        start[n] = (int) total;
        int[] chunks = new int[(int) total];
        // (parent chunk id + 1) << 32 | hash id  ->  chunk id; parent -1 is the namespace seed.
        Map<Long, Integer> ids = new HashMap<>(Math.max(16, (int) (total / 2)));
        int pos = 0;
        for (TraceRequest req : requests) {
            int parent = -1;
            for (int b = 0, full = req.fullBlocks(); b < full; b++) {
                long k = ((long) (parent + 1) << 32) | (req.hashId(b) & 0xFFFFFFFFL);
                Integer id = ids.get(k);
                if (id == null) {
                    id = ids.size();
                    ids.put(k, id);
                }
                chunks[pos++] = id;
                parent = id;
            }
        }
        return new ChunkTrace(source, inputLength, start, chunks, ids.size());
    }

    /** Name of the trace, for reports. */
    public String source() {
        return source;
    }

    /** Number of requests. */
    public int requests() {
        return inputLength.length;
    }

    /** Prompt tokens over all requests. */
    public long promptTokens() {
        return promptTokens;
    }

    /** Full-block references over all requests (each request's full blocks, summed). */
    public int references() {
        return chunks.length;
    }

    /** Distinct chunks; chunk ids are {@code 0 .. distinctChunks() - 1}. */
    public int distinctChunks() {
        return distinct;
    }

    /** Prompt length of request {@code r}, in tokens. */
    public int inputLength(int r) {
        return inputLength[r];
    }

    /** Number of full blocks (chunks) of request {@code r}. */
    public int fullChunks(int r) {
        return start[r + 1] - start[r];
    }

    /** Chunks of request {@code r} that may hit under {@code rule}. */
    public int hittableChunks(int r, HitRule rule) {
        return rule.hittableChunks(inputLength[r], CHUNK_TOKENS);
    }

    /** Id of chunk {@code i} (0-based) of request {@code r}. */
    public int chunk(int r, int i) {
        return chunks[start[r] + i];
    }

    /** Position of the first chunk of request {@code r} in the flat reference sequence. */
    int start(int r) {
        return start[r];
    }

    /** The flat reference sequence; shared, callers must not modify it. */
    int[] flatChunks() {
        return chunks;
    }
}
