package io.kvtier.offload.transfer;

import io.kvtier.tier.remote.RemoteStore;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A fake {@link RemoteStore} in memory whose GETs are answered only when the test says so
 * ({@link #answerNext()}, in the order they were sent): a test sees how many reads a job has
 * sent before any answer came back. SET, TOUCH and DEL answer at once; SETs can be made to fail
 * ({@link #failSets}) or held until the test answers them ({@link #holdSets}), and the arrays they
 * were given are kept ({@link #setArrays}), their keys in the order sent ({@link #setKeys}).
 */
final class FakeHeldStore implements RemoteStore {

    private final Map<String, byte[]> values = new ConcurrentHashMap<>();
    private final List<String> gets = new ArrayList<>();
    private final List<CompletableFuture<byte[]>> held = new ArrayList<>();
    private int answered;

    @Override
    public synchronized CompletableFuture<byte[]> get(String key) {
        CompletableFuture<byte[]> f = new CompletableFuture<>();
        gets.add(key);
        held.add(f);
        notifyAll();
        return f;
    }

    /** The value stored under {@code key} now (null: none), without a GET. */
    byte[] stored(String key) {
        return values.get(key);
    }

    /** GETs sent so far. */
    synchronized int getsSent() {
        return gets.size();
    }

    /** Waits (up to 10 s) until {@code n} GETs were sent; false if they were not. */
    synchronized boolean awaitGets(int n) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (gets.size() < n && end - System.nanoTime() > 0) {
            wait(10);
        }
        return gets.size() >= n;
    }

    /** Answers the oldest unanswered GET with the value it asked for. */
    synchronized void answerNext() {
        held.get(answered).complete(values.get(gets.get(answered)));
        answered++;
    }

    /** The arrays given to SET, in order (the same instances). */
    final List<byte[]> setArrays = java.util.Collections.synchronizedList(new ArrayList<>());
    /** While true, every SET fails (its value is not stored). */
    volatile boolean failSets;

    /** While true, a SET is answered only by {@link #answerSet} (it stores its value then). */
    volatile boolean holdSets;
    /** Keys SET so far, in the order they were sent. */
    private final List<String> setKeys = new ArrayList<>();
    private final List<CompletableFuture<Void>> heldSets = new ArrayList<>();
    private final List<byte[]> heldValues = new ArrayList<>();

    @Override
    public CompletableFuture<Void> set(String key, byte[] value) {
        setArrays.add(value);
        synchronized (this) {
            setKeys.add(key);
            notifyAll();
            if (holdSets) {
                CompletableFuture<Void> f = new CompletableFuture<>();
                heldSets.add(f);
                heldValues.add(value.clone());
                return f;
            }
            heldSets.add(null);
            heldValues.add(null);
        }
        if (failSets) {
            return CompletableFuture.failedFuture(new IllegalStateException("error: SET refused by the test"));
        }
        values.put(key, value.clone());
        return CompletableFuture.completedFuture(null);
    }

    /** Keys SET so far, in the order sent. */
    synchronized List<String> setKeys() {
        return List.copyOf(setKeys);
    }

    /** Waits (up to 10 s) until {@code n} SETs were sent; false if they were not. */
    synchronized boolean awaitSets(int n) throws InterruptedException {
        long end = System.nanoTime() + 10_000_000_000L;
        while (setKeys.size() < n && end - System.nanoTime() > 0) {
            wait(10);
        }
        return setKeys.size() >= n;
    }

    /** Answers held SET number {@code i} (in the order sent): OK, storing its value, or refused. */
    void answerSet(int i, boolean ok) {
        CompletableFuture<Void> f;
        synchronized (this) {
            f = heldSets.get(i);
            if (ok) {
                values.put(setKeys.get(i), heldValues.get(i));
            }
        }
        if (ok) {
            f.complete(null);
        } else {
            f.completeExceptionally(new IllegalStateException("error: SET refused by the test"));
        }
    }

    @Override
    public CompletableFuture<Boolean> touch(String key) {
        return CompletableFuture.completedFuture(values.containsKey(key));
    }

    @Override
    public void delete(String key) {
        values.remove(key);
    }

    @Override
    public boolean allows(String key) {
        return true;
    }

    @Override
    public long maxValueBytes() {
        return Long.MAX_VALUE;
    }

    @Override
    public String breakerState() {
        return "closed";
    }

    @Override
    public long breakerOpens() {
        return 0;
    }

    @Override
    public String offReason() {
        return null;
    }

    @Override
    public void close() {
    }
}
