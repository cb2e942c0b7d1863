package io.kvtier.replay.trace;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.ExtraKeys;

/**
 * Token ids for trace requests, derived from their hash ids so that equal ids give equal blocks
 * (and so equal block keys): token {@code j} of block {@code i} of a request is a pure function
 * of {@code (hashIds[i], j)}. A partial last block holds the first {@code inputLength mod 512}
 * tokens of the full block with the same id, so a prompt that ends inside a block is a true
 * prefix of a longer prompt sharing that id.
 *
 * <p>The function is splitmix64 (Steele, Lea, Flood 2014) used as a counter-based generator:
 * the stream of an id is {@code mix(seed(id) + (j + 1) * GAMMA)}, so any single token costs a
 * few multiplications and nothing is ever stored. The conversation trace has about 145M prompt
 * tokens; callers materialize one request or one window at a time.
 *
 * <p>Tokens are uniform in {@code [0, vocabSize)} (multiply-shift reduction of the high 32
 * bits); they have no meaning and are only for the scheduler, the block hasher and the
 * simulated model runner.
 */
public final class TraceTokens {

    /** Vocabulary of Llama 2, the default: ids in [0, 32000). */
    public static final int DEFAULT_VOCAB = 32_000;

    /** Tokens per block: the trace's hash granularity. */
    public static final int BLOCK_TOKENS = TraceRequest.BLOCK_TOKENS;

    /** The default instance (vocabulary 32000). */
    public static final TraceTokens DEFAULT = new TraceTokens(DEFAULT_VOCAB);

    private static final long GAMMA = 0x9E3779B97F4A7C15L;
    // Keeps id 0 from seeding the stream with mix(0) = 0; any non-zero constant would do.
    private static final long ID_SALT = 0x6B76746965722D31L;

    private final int vocabSize;

    /** @param vocabSize tokens are drawn from {@code [0, vocabSize)}; must be >= 2 */
    public TraceTokens(int vocabSize) {
        if (vocabSize < 2) {
            throw new IllegalArgumentException("vocabSize must be >= 2, got " + vocabSize);
        }
        this.vocabSize = vocabSize;
    }

    /** Size of the vocabulary tokens are drawn from. */
    public int vocabSize() {
        return vocabSize;
    }

    /** Token at offset {@code j} (0..511) of the block whose hash id is {@code hashId}. */
    public int token(int hashId, int j) {
        long seed = mix(hashId * GAMMA ^ ID_SALT);
        long z = mix(seed + (j + 1L) * GAMMA);
        return (int) (((z >>> 32) * vocabSize) >>> 32);
    }

    /** Token at prompt position {@code position} (0-based, below {@code inputLength}) of a request. */
    public int tokenAt(TraceRequest request, int position) {
        if (position < 0 || position >= request.inputLength()) {
            throw new IndexOutOfBoundsException("position " + position + " outside prompt of " + request.inputLength());
        }
        return token(request.hashId(position / BLOCK_TOKENS), position % BLOCK_TOKENS);
    }

    /**
     * Writes the first {@code count} (at most 512) tokens of block {@code hashId} into
     * {@code dst[dstOffset ..]}.
     */
    public void fillBlock(int hashId, int count, int[] dst, int dstOffset) {
        if (count < 0 || count > BLOCK_TOKENS) {
            throw new IllegalArgumentException("count must be in [0, 512], got " + count);
        }
        long seed = mix(hashId * GAMMA ^ ID_SALT);
        long state = seed;
        for (int j = 0; j < count; j++) {
            state += GAMMA;
            long z = mix(state);
            dst[dstOffset + j] = (int) (((z >>> 32) * vocabSize) >>> 32);
        }
    }

    /**
     * Writes prompt tokens {@code [from, to)} of {@code request} into {@code dst[dstOffset ..]}:
     * a window, for chunked prefill without materializing the whole prompt.
     */
    public void promptTokens(TraceRequest request, int from, int to, int[] dst, int dstOffset) {
        if (from < 0 || to > request.inputLength() || from > to) {
            throw new IndexOutOfBoundsException("window [" + from + ", " + to + ") outside prompt of "
                    + request.inputLength());
        }
        int pos = from;
        while (pos < to) {
            int block = pos / BLOCK_TOKENS;
            int inBlock = pos % BLOCK_TOKENS;
            int n = Math.min(BLOCK_TOKENS - inBlock, to - pos);
            if (inBlock == 0) {
                fillBlock(request.hashId(block), n, dst, dstOffset + pos - from);
            } else {
                for (int j = 0; j < n; j++) {
                    dst[dstOffset + pos - from + j] = token(request.hashId(block), inBlock + j);
                }
            }
            pos += n;
        }
    }

    /** The whole prompt of one request ({@code inputLength} ints; at most ~0.8 MB in the shipped traces). */
    public int[] promptTokens(TraceRequest request) {
        int[] out = new int[request.inputLength()];
        promptTokens(request, 0, out.length, out, 0);
        return out;
    }

    /**
     * Chained keys of the full 512-token blocks of {@code request}, as the engine computes them
     * with 512-token blocks: element {@code i} is the key of block {@code i} given blocks
     * {@code 0..i-1}. A partial last block has no key (it is never stored).
     */
    public BlockKey[] fullBlockKeys(TraceRequest request, BlockHasher hasher, ExtraKeys extra) {
        int full = request.fullBlocks();
        BlockKey[] keys = new BlockKey[full];
        int[] block = new int[BLOCK_TOKENS];
        BlockKey parent = hasher.namespaceSeed();
        for (int i = 0; i < full; i++) {
            fillBlock(request.hashId(i), BLOCK_TOKENS, block, 0);
            parent = hasher.hash(parent, block, 0, BLOCK_TOKENS, extra);
            keys[i] = parent;
        }
        return keys;
    }

    // splitmix64 finalizer (Stafford variant 13), a bijection on 64-bit values.
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
