package io.kvtier.tier.remote;

/**
 * A circuit breaker for one node of the remote store: after {@code failuresToOpen} consecutive
 * failed or timed-out operations it opens, and every operation on the node is refused at once
 * (a miss, a dropped store) for {@code openNanos}; then it lets operations through again
 * (half-open), and the first outcome closes it or opens it for another period. Its owner hears
 * of each opening and re-opening ({@code whenOpened}) to send a trial of its own when the period
 * ends: an idle engine sends no operation that would. The owner's own PING to the node, one at a
 * time ({@link #startPing}), also checks a closed breaker that has seen no success for a while:
 * a store that dies under an idle engine fails no operation, so nothing else would open it.
 * Thread-safe: the client's threads record outcomes, the transfer threads and the engine thread ask.
 */
public final class CircuitBreaker {

    /** What the breaker does with an operation now. */
    public enum State { CLOSED, OPEN, HALF_OPEN }

    private final int failuresToOpen;
    private final long openNanos;
    private final java.util.function.Consumer<CircuitBreaker> whenOpened;
    private int consecutiveFailures;
    private boolean open;
    private long openedAt;
    private long opens;
    /** Whether the owner's own PING to the node is out ({@link #startPing}, {@link #pingDone}). */
    private boolean pinging;
    private boolean succeeded;
    private long lastSuccess;

    /**
     * @param failuresToOpen consecutive failures that open the breaker (>= 1)
     * @param openNanos      how long it stays open before letting a trial through
     */
    public CircuitBreaker(int failuresToOpen, long openNanos) {
        this(failuresToOpen, openNanos, b -> { });
    }

    /**
     * @param whenOpened called with this breaker each time it opens or re-opens (a failed trial),
     *                   on the recording thread, outside the breaker's lock
     */
    public CircuitBreaker(int failuresToOpen, long openNanos, java.util.function.Consumer<CircuitBreaker> whenOpened) {
        if (failuresToOpen < 1 || openNanos < 0) {
            throw new IllegalArgumentException("breaker needs failuresToOpen >= 1 and openNanos >= 0, got "
                    + failuresToOpen + ", " + openNanos);
        }
        this.failuresToOpen = failuresToOpen;
        this.openNanos = openNanos;
        this.whenOpened = whenOpened;
    }

    /** The state at {@code now} ({@link System#nanoTime()}). */
    public synchronized State state(long now) {
        if (!open) {
            return State.CLOSED;
        }
        return now - openedAt >= openNanos ? State.HALF_OPEN : State.OPEN;
    }

    /** Nanoseconds from {@code now} until the breaker lets a trial through: 0 when closed or half-open. */
    public synchronized long untilTrial(long now) {
        return open ? Math.max(0, openedAt + openNanos - now) : 0;
    }

    /**
     * Whether an operation may be sent now: closed, or half-open with no PING of the owner's out
     * (that PING is the trial: to a frozen node every operation sent beside it would cost a timeout).
     */
    public synchronized boolean allows(long now) {
        State s = state(now);
        return s == State.CLOSED || s == State.HALF_OPEN && !pinging;
    }

    /** A successful operation at {@code now}: closes the breaker. */
    public synchronized void success(long now) {
        consecutiveFailures = 0;
        open = false;
        succeeded = true;
        lastSuccess = now;
    }

    /**
     * Claims the owner's PING to the node when one is due at {@code now}: half-open (the trial),
     * or closed with no success for {@code quietNanos} (never counts as long ago). False when not
     * due or one is out already; the owner records its outcome, then calls {@link #pingDone}.
     */
    public synchronized boolean startPing(long now, long quietNanos) {
        State s = state(now);
        boolean due = !pinging && (s == State.HALF_OPEN || s == State.CLOSED && untilQuietPing(now, quietNanos) == 0);
        pinging |= due;
        return due;
    }

    public synchronized void pingDone() {
        pinging = false;
    }

    /**
     * Nanoseconds from {@code now} until a closed breaker's PING is due ({@link #startPing}, 0 if
     * due now); {@code quietNanos} while open or a PING is out (an opening schedules its own trial).
     */
    public synchronized long untilQuietPing(long now, long quietNanos) {
        if (open || pinging) {
            return quietNanos;
        }
        return succeeded ? Math.max(0, lastSuccess + quietNanos - now) : 0;
    }

    /** A failed or timed-out operation at {@code now}; a failure while half-open re-opens at once. */
    public void failure(long now) {
        boolean opened;
        synchronized (this) {
            consecutiveFailures++;
            opened = open ? now - openedAt >= openNanos : consecutiveFailures >= failuresToOpen;
            if (opened) {
                if (!open) {
                    opens++;
                }
                open = true;
                openedAt = now;
            }
        }
        if (opened) {
            whenOpened.accept(this);
        }
    }

    /** Opens a closed breaker at {@code now} whatever its count of failures (counted in {@link #opens}); no-op if open. */
    public void trip(long now) {
        boolean opened;
        synchronized (this) {
            opened = !open;
            if (opened) {
                opens++;
                open = true;
                openedAt = now;
            }
        }
        if (opened) {
            whenOpened.accept(this);
        }
    }

    /** Times the breaker went from closed to open. */
    public synchronized long opens() {
        return opens;
    }

    /** The breakers of the nodes {@code isCurrent} accepts (those serving slots now). */
    static java.util.List<CircuitBreaker> current(java.util.Map<String, CircuitBreaker> breakers, java.util.function.Predicate<String> isCurrent) {
        return breakers.entrySet().stream().filter(e -> isCurrent.test(e.getKey())).map(java.util.Map.Entry::getValue).toList();
    }

    /**
     * The tier's breaker state from its nodes' breakers: {@code closed} when every node's is
     * closed, {@code partial} when some are, else {@code open} when every one is open and
     * {@code half_open} when the open period of some is over (a trial may go, none has succeeded
     * yet). Half-open is neither: not healthy between two failed trials, and not "down" while the
     * trial that closes it is out.
     */
    static String stateOf(java.util.Collection<CircuitBreaker> nodes, long now) {
        long closed = nodes.stream().filter(b -> b.state(now) == State.CLOSED).count();
        long open = nodes.stream().filter(b -> b.state(now) == State.OPEN).count();
        return closed == nodes.size() ? "closed" : closed > 0 ? "partial" : open == nodes.size() ? "open" : "half_open";
    }
}
