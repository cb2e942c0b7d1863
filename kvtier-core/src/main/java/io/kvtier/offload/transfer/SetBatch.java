package io.kvtier.offload.transfer;

import io.kvtier.tier.remote.RemoteStore;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

/**
 * The SETs of a remote write job ({@link RemoteCopier}) not yet sent: each holds a place in the
 * job's answers, and they go out together ({@link RemoteStore#setAll}) once another value of the
 * last one's size would pass the batch's bytes. A value's array goes back to its
 * {@link ValueArrays} once its SET is answered, or at once if the job ends before it is sent.
 */
final class SetBatch {

    /**
     * Bytes of SET values sent as one batch, at least one value. Batched, Lettuce writes the SETs
     * at once (one buffer, one flush): 8 SETs of 256 KiB through a plain Lettuce connection went
     * 1,760-1,790 MB/s one by one, 2,230-2,410 MB/s as one batch (redis-benchmark -P 8: 3,780).
     * Larger batches made the server slow: 8 values of 1 MiB in one batch stored 208-231 MB/s
     * against 620-1,230 one by one (redis-benchmark, which writes its 8 at once, 230-270).
     */
    static final long BYTES = 1L << 20;

    private final RemoteStore store;
    /** Where a value's array goes once the client holds it no more. */
    private final ValueArrays arrays;
    private final long batchBytes;
    private final List<CompletableFuture<?>> answers;
    private final List<String> keys = new ArrayList<>();
    private final List<byte[]> values = new ArrayList<>();
    private final List<Integer> places = new ArrayList<>();
    private long bytes;

    /**
     * @param batchBytes bytes of values sent as one batch ({@link #BYTES}; 0: one by one)
     * @param answers    the job's answers, in chunk order: a SET's place is filled once it is sent
     */
    SetBatch(RemoteStore store, ValueArrays arrays, long batchBytes, List<CompletableFuture<?>> answers) {
        this.store = store;
        this.arrays = arrays;
        this.batchBytes = batchBytes;
        this.answers = answers;
    }

    void add(String key, byte[] value) {
        places.add(answers.size());
        answers.add(null);   // the SET's answer, once sent
        keys.add(key);
        values.add(value);
        bytes += value.length;
        if (bytes + value.length > batchBytes) {   // another value of this size would not fit
            send();
        }
    }

    void send() {
        if (keys.isEmpty()) {
            return;
        }
        List<CompletableFuture<Void>> sets = store.setAll(List.copyOf(keys), List.copyOf(values));
        for (int i = 0; i < sets.size(); i++) {
            byte[] value = values.get(i);
            sets.get(i).thenRun(() -> arrays.give(value));   // once answered: the client holds it no more
            answers.set(places.get(i), sets.get(i));
        }
        keys.clear();
        values.clear();
        places.clear();
        bytes = 0;
    }

    /** The job ended: the values not sent go back (nobody else holds them). */
    void drop() {
        values.forEach(arrays::give);
        values.clear();
    }
}
