package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockPool;
import io.kvtier.kv.ExtraKeys;
import io.kvtier.kv.Namespace;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/** Builds engines on the {@link FingerprintModelRunner} for tests. */
public final class FingerprintEngines {

    public static final int VOCAB = 97;
    public static final int MAX_POSITIONS = 4096;

    private FingerprintEngines() {
    }

    /** An engine on the fingerprint model; stop token 0 (so some requests stop early). */
    public static Engine engine(EngineConfig config) {
        BlockPool pool = new BlockPool(config.deviceBlocks(), FingerprintModelRunner.layout(config.blockSize()));
        FingerprintModelRunner runner = new FingerprintModelRunner(pool, VOCAB, MAX_POSITIONS);
        BlockHasher hasher = BlockHasher.sha256(Namespace.of("fingerprint", pool.layout()));
        return new Engine(config, pool, runner, hasher);
    }

    public static EngineConfig config(int blockSize, int deviceBlocks) {
        return EngineConfig.of(blockSize, deviceBlocks).withStopToken(0);
    }

    private static final java.util.Map<String, int[]> REFERENCES = new java.util.concurrent.ConcurrentHashMap<>();

    /** The output of one request run alone with every cache disabled (memoized: it is deterministic). */
    public static int[] reference(int[] prompt, int maxTokens) {
        return REFERENCES.computeIfAbsent(java.util.Arrays.toString(prompt) + "/" + maxTokens, k -> {
            try (Engine e = engine(config(4, 4096).withPrefixCaching(false))) {
                e.submit(new Request(0, prompt, maxTokens, SamplingParams.GREEDY, ExtraKeys.NONE));
                return e.runToCompletion().getFirst().outputIds();
            }
        }).clone();
    }

    /**
     * Checks finished requests against their references: a completed one equals it, an aborted
     * one is a prefix of it.
     *
     * @return how many were aborted
     */
    public static int assertMatchReferences(List<Request> requests) {
        int aborted = 0;
        for (Request r : requests) {
            org.assertj.core.api.Assertions.assertThat(r.isFinished()).as("request %d finished", r.id()).isTrue();
            int[] ref = reference(r.promptIds(), r.maxTokens());
            if (r.finishReason() == FinishReason.ABORT) {
                aborted++;
                org.assertj.core.api.Assertions.assertThat(java.util.Arrays.copyOf(ref, Math.min(ref.length, r.numOutputTokens())))
                        .as("aborted request %d", r.id()).containsExactly(r.outputIds());
            } else {
                org.assertj.core.api.Assertions.assertThat(r.outputIds()).as("request %d", r.id()).containsExactly(ref);
            }
        }
        return aborted;
    }

    /** Submits all prompts at once and returns the finished requests in id order. */
    public static List<Request> runAll(Engine e, List<int[]> prompts, int maxTokens) {
        for (int i = 0; i < prompts.size(); i++) {
            e.submit(new Request(i, prompts.get(i), maxTokens, SamplingParams.GREEDY, ExtraKeys.NONE));
        }
        List<Request> done = new ArrayList<>(e.runToCompletion());
        done.sort(Comparator.comparingLong(Request::id));
        return done;
    }

    /**
     * {@code len} consecutive tokens starting at {@code from} or the first start after it whose
     * reference output does not stop before {@code maxTokens} tokens (the fingerprint model stops
     * on token 0 about once in 97 tokens).
     */
    public static int[] nonStopping(int from, int len, int maxTokens) {
        for (int start = from; start < from + 500; start++) {
            int[] p = range(1 + (start - 1) % 90, 1 + (start - 1) % 90 + len - 1);
            if (reference(p, maxTokens).length == maxTokens) {
                return p;
            }
        }
        throw new IllegalStateException("no non-stopping prompt near " + from);
    }

    /**
     * Runs {@code step} (one engine step and the fixture's checks) until {@code engine} has no work,
     * waiting for the transfers whenever a step ran nothing, then drains them; returns the requests
     * in the order they finished.
     */
    static List<Request> runChecked(Engine engine, java.util.function.Supplier<List<Request>> step) {
        List<Request> done = new ArrayList<>();
        int idle = 0;
        while (engine.hasWork()) {
            long steps = engine.stats().steps();
            List<Request> d = step.get();
            done.addAll(d);
            if (d.isEmpty() && engine.stats().steps() == steps) {
                org.assertj.core.api.Assertions.assertThat(++idle).as("engine stalled").isLessThan(10_000);
                engine.drainTransfers();
            } else {
                idle = 0;
            }
        }
        engine.drainTransfers();
        return done;
    }

    /** One-hot logits of {@code token} over {@code vocab} tokens: a fake model's output. */
    static float[] oneHot(int vocab, int token) {
        float[] logits = new float[vocab];
        logits[token] = 1f;
        return logits;
    }

    /** Tokens from..to, inclusive. */
    public static int[] range(int from, int to) {
        int[] t = new int[to - from + 1];
        for (int i = 0; i < t.length; i++) {
            t[i] = from + i;
        }
        return t;
    }

    /** {@code n} tokens drawn from {@code rnd}, never the stop token 0. */
    public static int[] randomTokens(java.util.SplittableRandom rnd, int n) {
        int[] t = new int[n];
        for (int i = 0; i < n; i++) {
            t[i] = 1 + rnd.nextInt(VOCAB - 1);
        }
        return t;
    }

    /** {@code a} followed by {@code b}. */
    public static int[] concat(int[] a, int[] b) {
        int[] out = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, out, a.length, b.length);
        return out;
    }
}
