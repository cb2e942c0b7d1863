package io.kvtier.tier;

import io.kvtier.kv.BlockKey;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * Numbers and delivers {@link KvEvent}s of one or more tiers. Each event goes to every listener,
 * in registration order, and (unless created {@link #discarding()}) into a buffer that
 * {@link #drain()} empties. Engine thread only; not thread-safe.
 */
public final class KvEvents {

    /** Tier name of events about the device prefix cache. */
    public static final String DEVICE = "device";

    private final boolean buffering;
    private final List<KvEvent> buffer = new ArrayList<>();
    private final List<Consumer<? super KvEvent>> listeners = new ArrayList<>();
    private long lastSeq;

    private KvEvents(boolean buffering) {
        this.buffering = buffering;
    }

    /** Events buffered until {@link #drain()}ed (and passed to listeners). */
    public static KvEvents buffered() {
        return new KvEvents(true);
    }

    /** Events passed to listeners only; {@link #drain()} always returns an empty list. */
    public static KvEvents discarding() {
        return new KvEvents(false);
    }

    /** Adds a listener called synchronously for each event, on the emitting thread. */
    public void addListener(Consumer<? super KvEvent> listener) {
        listeners.add(listener);
    }

    /** Events since the last drain, oldest first; empties the buffer. */
    public List<KvEvent> drain() {
        List<KvEvent> out = List.copyOf(buffer);
        buffer.clear();
        return out;
    }

    /** Sequence number of the last emitted event (0 before the first). */
    public long lastSeq() {
        return lastSeq;
    }

    void stored(List<BlockKey> keys, BlockKey parent, String tier) {
        if (heard()) {
            emit(new KvEvent.BlockStored(++lastSeq, keys, parent, tier));
        } else {
            lastSeq++;
        }
    }

    /**
     * Full blocks entered the device prefix cache ({@value #DEVICE}): a chain of keys, the parent
     * of the first, and the blocks' token ids in order. Called by the engine, which knows tokens.
     */
    public void deviceStored(List<BlockKey> keys, BlockKey parent, List<Integer> tokenIds) {
        emit(new KvEvent.BlockStored(++lastSeq, keys, parent, DEVICE, tokenIds));
    }

    /** Keys left the device prefix cache (a cached free block was reused, or the cache was reset). */
    public void deviceRemoved(List<BlockKey> keys) {
        removed(keys, DEVICE);
    }

    void removed(List<BlockKey> keys, String tier) {
        if (heard()) {
            emit(new KvEvent.BlockRemoved(++lastSeq, keys, tier));
        } else {
            lastSeq++;
        }
    }

    /**
     * Whether an event would reach anyone (a buffer or a listener). When not, the tiers' events are
     * only numbered: each would copy its key list, once per stored or evicted chunk run (issue 16).
     */
    private boolean heard() {
        return buffering || !listeners.isEmpty();
    }

    void cleared(String tier) {
        emit(new KvEvent.AllCleared(++lastSeq, tier));
    }

    private void emit(KvEvent e) {
        if (buffering) {
            buffer.add(e);
        }
        for (Consumer<? super KvEvent> l : listeners) {
            l.accept(e);
        }
    }
}
