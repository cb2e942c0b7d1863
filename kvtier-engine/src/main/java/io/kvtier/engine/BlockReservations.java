package io.kvtier.engine;

import io.kvtier.kv.KvCacheManager;
import io.kvtier.offload.Contention;
import io.kvtier.offload.Lookup;
import io.kvtier.offload.OffloadScheduler;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;

/**
 * The device blocks a waiting hit is owed ({@code --load-policy faster}). A hit whose load lacks
 * device blocks that stores in flight free soon waits, and the requests behind it are admitted
 * ({@link OffloadScheduler#whenBlocksShort}). Those passers must not take the blocks it waits for:
 * measured without this (docs/store-and-load-policy.md, sixth session), a request 14 blocks short,
 * which the stores freed in 0.27 s, was 37 short 1.4 s later and then held the line.
 *
 * <p>So a passer is admitted only if every request waiting in this admission pass would still
 * wait with the passer's blocks added to what it is short ({@link OffloadScheduler#waitStillPays}:
 * the stores in flight still free them, sooner than recomputing would cost); otherwise the line
 * is held behind the waiting request. A passer is charged its whole prompt, not only its first
 * step: its later chunks take free blocks too. At the next step the waiting request is asked
 * again with what it is short plus the prompt blocks its passers still have to allocate.
 * Running requests' decode growth is not charged (it is not admission). Engine thread only.
 */
final class BlockReservations {

    /** A request passed while it waits: since when (offload clock, ns), and who passed it. */
    private static final class Waiter {
        final long sinceNanos;
        final List<Request> passers = new ArrayList<>();

        Waiter(long sinceNanos) {
            this.sinceNanos = sinceNanos;
        }
    }

    /** A wait answered in the current admission pass, with what it is short so far in this pass. */
    private record Held(Waiter waiter, int hitBlocks, Lookup.Hit hit, Contention contention, int[] missing) {
    }

    /** Whether a waiting hit would still wait with {@code missing} blocks short ({@link OffloadScheduler#waitStillPays}). */
    @FunctionalInterface
    interface WaitQuery {
        boolean stillPays(int deviceHitBlocks, Lookup.Hit hit, int missing, long waitedNanos, Contention c);
    }

    private final KvCacheManager kv;
    private final LongSupplier clock;
    private final WaitQuery query;
    private final Map<Long, Waiter> waiters = new HashMap<>();
    private final List<Held> pass = new ArrayList<>();

    /** For the engine: the offload scheduler's clock and wait estimate. */
    BlockReservations(KvCacheManager kv, OffloadScheduler offload) {
        this(kv, offload::clockNanos, offload::waitStillPays);
    }

    /** Without offloading: no hit ever waits, so every request passes uncharged. */
    static BlockReservations none(KvCacheManager kv) {
        return new BlockReservations(kv, () -> 0, (deviceHitBlocks, hit, missing, waitedNanos, c) -> false);
    }

    /**
     * @param clock the clock waits are measured on, ns
     * @param query whether a wait still pays with more blocks short
     */
    BlockReservations(KvCacheManager kv, LongSupplier clock, WaitQuery query) {
        this.kv = kv;
        this.clock = clock;
        this.query = query;
    }

    /** A new admission pass: the waits of the previous one are asked again. */
    void startPass() {
        pass.clear();
    }

    /** How long (offload clock, ns) the request has been passed, 0 if it is not waiting. */
    long waitedNanos(long requestId) {
        Waiter w = waiters.get(requestId);
        return w == null ? 0 : clock.getAsLong() - w.sinceNanos;
    }

    /**
     * Device blocks the request is short beyond {@code shortNow} (group 0's shortfall at admission):
     * the prompt blocks its passers have still to allocate, which will come from the same free blocks.
     */
    int owedToPassers(long requestId) {
        Waiter w = waiters.get(requestId);
        if (w == null) {
            return 0;
        }
        int owed = 0;
        for (Request q : w.passers) {
            owed += kv.hasTable(q.id()) ? kv.blocksNeeded(q.id(), q.promptLength()) : 0;
        }
        return owed;
    }

    /** The request waits in this pass, {@code missing} blocks short (counting {@link #owedToPassers}). */
    void hold(Request r, int hitBlocks, Lookup.Hit hit, int missing, Contention c) {
        Waiter w = waiters.computeIfAbsent(r.id(), id -> new Waiter(clock.getAsLong()));
        pass.add(new Held(w, hitBlocks, hit, c, new int[] {missing}));
    }

    /**
     * Whether request {@code r}, admitted with a device hit of {@code hitBlocks}, may pass the
     * requests waiting in this pass: each would still wait with {@code r}'s input blocks added.
     * Ask before admitting it (its cached hit blocks still count as free).
     *
     * @return the blocks {@code r} is charged (for {@link #passed}), or -1 if it may not pass
     */
    int mayPass(Request r, int hitBlocks) {
        if (pass.isEmpty()) {
            return 0;
        }
        int take = inputTake(r, hitBlocks);
        for (Held h : pass) {
            long waited = clock.getAsLong() - h.waiter().sinceNanos;
            if (!query.stillPays(h.hitBlocks(), h.hit(), h.missing()[0] + take, waited, h.contention())) {
                return -1;
            }
        }
        return take;
    }

    /** Request {@code r} passed the waiting ones, charged {@code take} blocks ({@link #mayPass}): they are owed them. */
    void passed(Request r, int take) {
        for (Held h : pass) {
            h.missing()[0] += take;
            h.waiter().passers.add(r);
        }
    }

    /** Free blocks {@code r}'s whole input (its prompt, and any tokens it decoded before a preemption) takes ({@link KvCacheManager#blocksTaken}). */
    private int inputTake(Request r, int hitBlocks) {
        return kv.blocksTaken(r.blockKeys(), hitBlocks, r.numTokens());
    }

    /** The request was admitted, finished or aborted: it no longer waits. */
    void forget(long requestId) {
        waiters.remove(requestId);
    }
}
