package io.kvtier.engine;

import io.kvtier.kv.BlockHasher;
import io.kvtier.kv.BlockKey;
import io.kvtier.kv.ExtraKeys;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

/**
 * One generation request and its progress. Mutable; owned by the engine thread.
 *
 * <p>Tokens are the prompt followed by the generated tokens. {@link #numComputed()} counts the
 * leading positions whose KV is written on the device ({@code kvWritten}); the token sampled last
 * never has KV. {@link #blockKeys()} holds the chained key of every full block of known tokens.
 */
public final class Request implements io.kvtier.offload.SequenceView {

    /** Lifecycle: waiting for admission, loading (parked until its load job ends), running, finished. */
    public enum Status { WAITING, LOADING, RUNNING, FINISHED }

    private final long id;
    private final int[] promptIds;
    private final int maxTokens;
    private final SamplingParams sampling;
    private final ExtraKeys extraKeys;
    private final SplittableRandom rng;
    private final StopCondition stopCondition;
    private int[] tokens;
    private int numTokens;
    private int numComputed;
    private final List<BlockKey> blockKeys = new ArrayList<>();
    private Status status = Status.WAITING;
    private FinishReason finishReason;
    private int deviceHitTokens;
    private final java.util.Map<String, Integer> externalHitTokens = new java.util.TreeMap<>();
    private int preemptions;
    /** The first admission's part of {@link #externalHitTokens}, per tier. */
    private final java.util.Map<String, Integer> promptExternalHitTokens = new java.util.TreeMap<>();
    /** Order of arrival in the scheduler (prefill priority picks the latest as its victim). */
    private long arrival;
    /** Output tokens when last admitted: a request is preempted for a prefill only after it made progress. */
    private int outputsAtAdmission;
    /** Place in line for admission with prefill priority: its arrival, or a victim's preemption (it queues as if it arrived then). */
    private long queuedAt;
    /** Times preempted to make room for another request's prefill (bounded: each one is a stall between its tokens). */
    private int prefillPreemptions;

    /**
     * @param id        unique id, also the order of arrival
     * @param promptIds prompt token ids, BOS first; at least one token
     * @param maxTokens maximum new tokens (at least 1)
     */
    public Request(long id, int[] promptIds, int maxTokens, SamplingParams sampling, ExtraKeys extraKeys) {
        this(id, promptIds, maxTokens, sampling, extraKeys, StopCondition.NONE);
    }

    /**
     * @param id            unique id, also the order of arrival
     * @param promptIds     prompt token ids, BOS first where the model has one; at least one token
     * @param maxTokens     maximum new tokens (at least 1)
     * @param stopCondition checked after each generated token (engine thread); {@link StopCondition#NONE} for none
     */
    public Request(long id, int[] promptIds, int maxTokens, SamplingParams sampling, ExtraKeys extraKeys,
                   StopCondition stopCondition) {
        if (promptIds.length == 0) {
            throw new IllegalArgumentException("request " + id + ": empty prompt: a request needs at least one token");
        }
        if (maxTokens < 1) {
            throw new IllegalArgumentException("request " + id + ": max tokens must be at least 1, got " + maxTokens);
        }
        this.id = id;
        this.promptIds = promptIds.clone();
        this.maxTokens = maxTokens;
        this.sampling = sampling;
        this.extraKeys = extraKeys;
        this.stopCondition = java.util.Objects.requireNonNull(stopCondition, "stopCondition");
        this.rng = sampling.ownSeed() ? SamplingStreams.forSeed(sampling.seed()) : SamplingStreams.forRequest(sampling.seed(), id);
        this.tokens = Arrays.copyOf(promptIds, promptIds.length + Math.min(maxTokens, 1024));
        this.numTokens = promptIds.length;
    }

    public long id() {
        return id;
    }

    @Override
    public int promptLength() {
        return promptIds.length;
    }

    public int[] promptIds() {
        return promptIds.clone();
    }

    public int maxTokens() {
        return maxTokens;
    }

    public SamplingParams sampling() {
        return sampling;
    }

    /** The caller's stop condition ({@link StopCondition#NONE} without one). */
    public StopCondition stopCondition() {
        return stopCondition;
    }

    public ExtraKeys extraKeys() {
        return extraKeys;
    }

    SplittableRandom rng() {
        return rng;
    }

    /** Prompt plus generated tokens. */
    public int numTokens() {
        return numTokens;
    }

    public int tokenAt(int position) {
        return tokens[position];
    }

    /** Tokens at positions [from, to). */
    public int[] tokens(int from, int to) {
        return Arrays.copyOfRange(tokens, from, to);
    }

    /** Generated token ids so far (without a stop token). */
    public int[] outputIds() {
        return Arrays.copyOfRange(tokens, promptIds.length, numTokens);
    }

    public int numOutputTokens() {
        return numTokens - promptIds.length;
    }

    /** Leading positions whose KV is written on the device. */
    public int numComputed() {
        return numComputed;
    }

    void setNumComputed(int n) {
        numComputed = n;
    }

    /** Chained keys of the full blocks of known tokens (a live view; do not modify). */
    public List<BlockKey> blockKeys() {
        return blockKeys;
    }

    public Status status() {
        return status;
    }

    void setStatus(Status s) {
        status = s;
    }

    public FinishReason finishReason() {
        return finishReason;
    }

    public boolean isFinished() {
        return status == Status.FINISHED;
    }

    /** Prompt tokens found in the device prefix cache at the first admission (a re-admission hits its own blocks). */
    public int deviceHitTokens() {
        return deviceHitTokens;
    }

    void setDeviceHitTokens(int n) {
        deviceHitTokens = n;
    }

    /**
     * Prompt tokens loaded from each offload tier instead of computed (per tier name), over every
     * admission: a request preempted and admitted again counts its reloads too, so the requests'
     * figures sum to the run's {@code OffloadStats#externalHitTokens()}.
     */
    public java.util.Map<String, Integer> externalHitTokens() {
        return java.util.Collections.unmodifiableMap(externalHitTokens);
    }

    void addExternalHitTokens(String tier, int tokens) {
        // A tier whose hit was lost whole goes, as in the run's OffloadStats: the jsonl line and the
        // summary agree ({"remote":0} beside {} before).
        addOrDrop(externalHitTokens, tier, tokens);
        if (preemptions == 0) {
            addOrDrop(promptExternalHitTokens, tier, tokens);
        }
    }

    /** Adds {@code tokens} to {@code tier}'s count, dropping the tier when it comes to 0. */
    private static void addOrDrop(java.util.Map<String, Integer> byTier, String tier, int tokens) {
        byTier.merge(tier, tokens, (a, b) -> a + b == 0 ? null : a + b);
    }

    /**
     * Prompt tokens loaded from the offload tiers at the first admission (less what a failed load
     * did not bring): with {@link #deviceHitTokens()}, the prompt tokens a client is told were
     * cached, never more than the prompt. {@link #externalHitTokens()} also counts the loads of
     * re-admissions after preemptions, which may reload the same tokens and generated ones.
     */
    public int promptExternalHitTokens() {
        int sum = 0;
        for (int n : promptExternalHitTokens.values()) {
            sum += n;
        }
        return sum;
    }

    /**
     * {@link #promptExternalHitTokens()} per tier: the request's external prefix-cache hits, what
     * every report of hits (metrics, {@code generate}'s JSON and summary) counts.
     */
    public java.util.Map<String, Integer> promptExternalHitTokensByTier() {
        return java.util.Collections.unmodifiableMap(promptExternalHitTokens);
    }

    public int preemptions() {
        return preemptions;
    }

    void countPreemption() {
        preemptions++;
    }

    long arrival() {
        return arrival;
    }

    void setArrival(long n) {
        arrival = n;
        queuedAt = n;
    }

    long queuedAt() {
        return queuedAt;
    }

    void setQueuedAt(long n) {
        queuedAt = n;
    }

    int prefillPreemptions() {
        return prefillPreemptions;
    }

    void countPrefillPreemption() {
        prefillPreemptions++;
    }

    int outputsAtAdmission() {
        return outputsAtAdmission;
    }

    void noteAdmission() {
        outputsAtAdmission = numOutputTokens();
    }

    void append(int token) {
        if (numTokens == tokens.length) {
            tokens = Arrays.copyOf(tokens, tokens.length * 2);
        }
        tokens[numTokens++] = token;
    }

    void finish(FinishReason reason) {
        status = Status.FINISHED;
        finishReason = reason;
    }

    /** Appends the keys of every block that became full of known tokens. */
    void extendKeys(BlockHasher hasher, int blockSize) {
        while ((blockKeys.size() + 1) * blockSize <= numTokens) {
            int b = blockKeys.size();
            BlockKey parent = b == 0 ? hasher.namespaceSeed() : blockKeys.get(b - 1);
            blockKeys.add(hasher.hash(parent, tokens, b * blockSize, (b + 1) * blockSize, extraKeys));
        }
    }

    @Override
    public String toString() {
        return "Request[" + id + ", " + status + ", tokens " + numTokens + ", computed " + numComputed + "]";
    }
}
