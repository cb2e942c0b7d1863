package io.kvtier.tier.disk;

import io.kvtier.tier.ChunkHeader;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One chunk file's payload, read and checksummed in pieces of {@code pieceBytes} by whoever is
 * free: the reading thread and the {@link ReadHelper}. Each piece is claimed once (one atomic
 * counter), read with a positional read into its place in the destination and checksummed by
 * the thread that read it, while its bytes are still in that core's cache; the piece CRCs are
 * combined with {@link Crc32cCombine} at the end. If the helper is busy or asleep the reader
 * simply does every piece itself: the result never depends on who ran what.
 *
 * <p>Protocol: the reader owns piece 0 (it reads it together with the header, see {@link
 * #firstPiece}) and calls {@link #pieceDone}; then exactly one of {@link #finish} or {@link
 * #cancel}. Both return only when no other thread touches the channel or the destination any
 * more, so the caller may close the one and reuse the other afterwards.
 */
final class PieceRead {

    /** How long the reader spins for a helper's piece before it naps (a page-cache piece takes a few µs). */
    private static final long SPIN_NANOS = 200_000;
    private static final long NAP_NANOS = 20_000;

    private final FileChannel channel;
    private final long payloadOffset;
    private final MemorySegment payload;
    private final long pieceBytes;
    private final int pieces;
    private final int[] crcs;
    /** Index of the next piece to claim; piece 0 is the reader's. */
    private final AtomicInteger claimed = new AtomicInteger(1);
    /** Pieces whose CRC is in {@link #crcs} (or that failed). */
    private final AtomicInteger finished = new AtomicInteger();
    /** The first read error of any piece, or null. */
    private volatile String failure;

    /**
     * @param channel       the chunk file, open for reading; positional reads only
     * @param payloadOffset file offset of the payload's first byte (the header's size)
     * @param payload       where the payload goes; its size is the payload length
     * @param pieceBytes    bytes per piece (the last may be shorter), > 0
     */
    PieceRead(FileChannel channel, long payloadOffset, MemorySegment payload, long pieceBytes) {
        if (pieceBytes <= 0) {
            throw new IllegalArgumentException("piece bytes must be positive, got " + pieceBytes);
        }
        long n = Math.max(1, (payload.byteSize() + pieceBytes - 1) / pieceBytes);
        if (n > Integer.MAX_VALUE) {
            throw new IllegalArgumentException(payload.byteSize() + " bytes is too many pieces of " + pieceBytes);
        }
        this.channel = channel;
        this.payloadOffset = payloadOffset;
        this.payload = payload;
        this.pieceBytes = pieceBytes;
        this.pieces = (int) n;
        this.crcs = new int[pieces];
    }

    /** How many pieces; more than one means a helper can share the work. */
    int pieces() {
        return pieces;
    }

    /** Piece 0, the reader's: the destination slice it reads along with the header. */
    MemorySegment firstPiece() {
        return piece(0);
    }

    /** Reader: piece 0's bytes are in place; checksums them. */
    void pieceDone() {
        crcs[0] = ChunkHeader.crc32c(firstPiece());
        finished.incrementAndGet();
    }

    /**
     * Claims the next piece, reads it into place and checksums it. A read error is kept for
     * {@link #finish}, not thrown (an {@link Error} is thrown, after the piece is marked failed).
     *
     * @return whether a piece was claimed
     */
    boolean runOne() {
        int i;
        do {
            i = claimed.get();
            if (i >= pieces) {
                return false;
            }
        } while (!claimed.compareAndSet(i, i + 1));
        MemorySegment slice = piece(i);
        String problem = "piece " + i + " was not read";
        try {
            DiskStore.readFully(channel, slice, payloadOffset + i * pieceBytes);
            crcs[i] = ChunkHeader.crc32c(slice);
            problem = null;
        } catch (IOException | RuntimeException e) {
            problem = DiskStore.describe(e);
        } finally { // even after an Error, so that the reader never waits for this piece in vain
            if (problem != null && failure == null) {
                failure = problem;
            }
            finished.incrementAndGet(); // publishes crcs[i] and failure
        }
        return true;
    }

    /**
     * Reader, after {@link #pieceDone}: reads the pieces nobody claimed, waits for those the
     * helper is running, and combines.
     *
     * @return the payload's CRC32C
     * @throws IOException with the first piece's read error (an early end of file included)
     */
    int finish() throws IOException {
        while (runOne()) {
            // the reader takes what is left
        }
        awaitFinished(pieces);
        if (failure != null) {
            throw new IOException(failure);
        }
        int shift = Crc32cCombine.shift(pieceBytes);
        int crc = crcs[0];
        for (int i = 1; i < pieces; i++) {
            long len = piece(i).byteSize();
            crc = Crc32cCombine.append(len == pieceBytes ? shift : Crc32cCombine.shift(len), crc, crcs[i]);
        }
        return crc;
    }

    /**
     * Reader, when it gives up (bad header, read error): no piece starts any more; waits for
     * those already running.
     *
     * @param firstDone whether {@link #pieceDone} was called
     */
    void cancel(boolean firstDone) {
        int started = Math.min(pieces, claimed.getAndSet(Integer.MAX_VALUE));
        awaitFinished(started - (firstDone ? 0 : 1));
    }

    private void awaitFinished(int count) {
        // From the page cache a piece takes microseconds: spin. From a real disk (or with the
        // helper preempted) it may take milliseconds: then sleep in short naps, not burn a core.
        long start = 0;
        while (finished.get() < count) {
            long now = System.nanoTime();
            if (start == 0) {
                start = now;
            }
            if (now - start < SPIN_NANOS) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(NAP_NANOS);
            }
        }
    }

    private MemorySegment piece(int i) {
        long at = i * pieceBytes;
        return payload.asSlice(at, Math.min(pieceBytes, payload.byteSize() - at));
    }
}
