package io.kvtier.tier.remote;

import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * A key-value store shared by engines (Redis or Valkey), seen as asynchronous single-key
 * operations that each end by their deadline. A failed future carries a {@link RemoteFailure};
 * an absent key is a normal answer (null value, false). Thread-safe.
 */
public interface RemoteStore extends AutoCloseable {

    /** The value of {@code key}, or null if absent. */
    CompletableFuture<byte[]> get(String key);

    /**
     * Reads {@code key} and hands its value to {@code sink} where it arrives, without a copy on
     * the heap when the store allows: {@code sink} gets a buffer (null if the key is absent) that
     * is valid only during the call, may run on the client's I/O thread (quick, no blocking), and
     * its answer completes the future. This default copies through {@link #get}.
     */
    default <T> CompletableFuture<T> read(String key, java.util.function.Function<java.nio.ByteBuffer, T> sink) {
        return get(key).thenApply(v -> sink.apply(v == null ? null : java.nio.ByteBuffer.wrap(v)));
    }

    /** Sets {@code key} to {@code value} (with the store's TTL, if any). */
    CompletableFuture<Void> set(String key, byte[] value);

    /**
     * {@link #set} of each key to its value, sent together where the store allows (one write of
     * the batch to the connection): one answer per key, in order, each failing on its own. This
     * default sends them one by one.
     *
     * @throws IllegalArgumentException if the lists differ in size
     */
    default List<CompletableFuture<Void>> setAll(List<String> keys, List<byte[]> values) {
        if (keys.size() != values.size()) {
            throw new IllegalArgumentException(keys.size() + " keys, " + values.size() + " values");
        }
        List<CompletableFuture<Void>> answers = new java.util.ArrayList<>(keys.size());
        for (int i = 0; i < keys.size(); i++) {
            answers.add(set(keys.get(i), values.get(i)));
        }
        return answers;
    }

    /**
     * Whether {@link #setFrom} takes a value of {@code bytes} bytes (else the caller copies it and
     * calls {@link #setAll}). This default: never.
     */
    default boolean setsFromMemory(long bytes) {
        return false;
    }

    /**
     * Sets {@code key} to {@code header} followed by {@code payload}, read straight from that
     * memory into the connection, each read under {@code claim}, never held while the store is
     * slow (see {@link MemoryClaim}). Returns once the value is sent or failed; the answer fails
     * with a {@link java.util.concurrent.CancellationException} if the claim was refused before
     * the first byte, and as a timeout if after it (the store never completes that SET). Only
     * where {@link #setsFromMemory} said so.
     *
     * @throws UnsupportedOperationException this default
     */
    default CompletableFuture<Void> setFrom(String key, java.lang.foreign.MemorySegment header,
                                            java.lang.foreign.MemorySegment payload, MemoryClaim claim) {
        throw new UnsupportedOperationException("this store copies its values: setAll");
    }

    /** Whether {@code key} exists; refreshes its recency for the store's eviction. */
    CompletableFuture<Boolean> touch(String key);

    /** Deletes {@code key}, without waiting for the answer (a corrupt value). */
    void delete(String key);

    /** Whether an operation on {@code key} may be sent now (its node's breaker is not open, the tier is on). */
    boolean allows(String key);

    /** Largest value the store accepts; larger values are refused before they are sent. */
    long maxValueBytes();

    /**
     * {@code closed}, {@code partial} (some nodes refused), {@code open} (every node refused),
     * {@code half_open} (none serves; the open period of some is over and a trial may go), or {@code off}.
     */
    String breakerState();

    /**
     * Times the tier went from serving to refusing: a node's breaker opened, and (once) the store
     * could not be reached at start. At least 1 whenever {@link #breakerState()} is {@code open},
     * {@code half_open} or {@code partial}; turning off is no opening ({@link #offReason()}).
     */
    long breakerOpens();

    /** Null while the tier is on; else the one line saying why it turned itself off (bad credentials, ACL). */
    String offReason();

    @Override
    void close();
}
