package io.kvtier.offload.transfer;

import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Byte arrays for the values of remote stores, reused. A new array per SET (header and payload of
 * a chunk, 256 KiB and more) made the store side allocation-bound: in a one-connection loop of 8
 * pipelined SETs of 256 KiB a fresh array per value cost about half the throughput of a reused
 * one (fourteenth session, {@code bench offload --remote-url}). An array comes back only from a
 * SET the store answered (the client has encoded and sent it and holds it no more), never from a
 * failed, timed-out or cancelled one, whose command the client may still hold and encode later.
 */
final class ValueArrays {

    private final ConcurrentLinkedQueue<byte[]> free = new ConcurrentLinkedQueue<>();
    private final AtomicLong pooled = new AtomicLong();
    private final long maxBytes;

    /** A pool that keeps at most {@code maxBytes} of arrays. */
    ValueArrays(long maxBytes) {
        this.maxBytes = maxBytes;
    }

    /** An array of exactly {@code length} bytes, its content undefined: a pooled one, or a new one. */
    byte[] take(int length) {
        byte[] a;
        while ((a = free.poll()) != null) {
            pooled.addAndGet(-a.length);
            if (a.length == length) {
                return a;
            }
        }
        return new byte[length];
    }

    /** Gives back {@code a}, which nobody reads or writes any more; kept if the pool has room. */
    void give(byte[] a) {
        if (pooled.addAndGet(a.length) <= maxBytes) {
            free.offer(a);
        } else {
            pooled.addAndGet(-a.length);
        }
    }

    /** Bytes of arrays kept now. */
    long pooledBytes() {
        return pooled.get();
    }
}
