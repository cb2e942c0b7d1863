package io.kvtier.kv;

import io.kvtier.memory.ReservedMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * The device tier: a fixed number of KV blocks in one off-heap slab, with reference counts and
 * the device prefix cache. Block {@code b} occupies bytes
 * {@code [b * layout.bytesPerBlock(), (b+1) * layout.bytesPerBlock())} of {@link #slab()}, laid
 * out as {@link KvLayout} says, so one block moves in one memory copy.
 *
 * <p>Block ownership lives here only. A block with reference count 0 sits in the free queue
 * and may be handed out by {@link #allocate()}; a block that a request or a pending transfer
 * uses has a count above 0 and can never be handed out (ARCHITECTURE §3.2). Full blocks that
 * are cached keep their key while free and are evicted lazily, in LRU order, when the allocator
 * reaches them; blocks that hold no cached key are reused first.
 *
 * <p>The slab is reserved, not touched ({@link ReservedMemory}): a block's pages become resident
 * when its KV is first written, so a pool sized for many contexts costs only what a run uses. The
 * free queue starts in block order and hands out never-used blocks in that order, after the
 * plain free blocks it reuses first, so a run touches the low blocks of the slab and its
 * resident size follows the blocks in use plus those the prefix cache keeps.
 *
 * <p>Engine thread only; the slab itself is shared (transfer threads copy its bytes).
 */
public final class BlockPool implements AutoCloseable {

    private static final int NONE = -1;

    private final KvLayout layout;
    private final int numBlocks;
    private final Arena arena;
    private final MemorySegment slab;
    private final int[] refCount;
    private final BlockKey[] keyOf;
    private final Map<BlockKey, Integer> cached = new HashMap<>();
    // Free queue: a doubly linked list over block ids; head is reused first.
    private final int[] prev;
    private final int[] next;
    private final boolean[] inFreeQueue;
    private java.util.function.Consumer<java.util.List<BlockKey>> evictions = keys -> { };
    // Listeners added by alsoOnEvictions: kept when onEvictions sets the first one.
    private java.util.function.Consumer<java.util.List<BlockKey>> moreEvictions = keys -> { };
    private int head = NONE;
    private int tail = NONE;
    private int freeCount;
    /** Whether {@link #allocate} has handed out a block yet: {@link #prefault} only before. */
    private boolean handedOut;

    /**
     * Reserves the slab: {@code numBlocks * layout.bytesPerBlock()} bytes, zeroed, resident only
     * where written.
     *
     * @throws IllegalArgumentException if numBlocks is not positive
     * @throws OutOfMemoryError         if the system refuses the reservation
     */
    public BlockPool(int numBlocks, KvLayout layout) {
        if (numBlocks <= 0) {
            throw new IllegalArgumentException("device pool needs at least one block, got " + numBlocks);
        }
        this.layout = layout;
        this.numBlocks = numBlocks;
        this.arena = Arena.ofShared();
        this.slab = ReservedMemory.reserve(arena, Math.multiplyExact(numBlocks, layout.bytesPerBlock()));
        this.refCount = new int[numBlocks];
        this.keyOf = new BlockKey[numBlocks];
        this.prev = new int[numBlocks];
        this.next = new int[numBlocks];
        this.inFreeQueue = new boolean[numBlocks];
        for (int b = 0; b < numBlocks; b++) {
            appendTail(b);
        }
    }

    public KvLayout layout() {
        return layout;
    }

    public int numBlocks() {
        return numBlocks;
    }

    /** The whole slab, {@code numBlocks * bytesPerBlock} bytes. */
    public MemorySegment slab() {
        return slab;
    }

    /**
     * Makes blocks {@code 0..blocks-1} resident now ({@link ReservedMemory#prefault}): the free
     * queue hands out never-used blocks in block order, so these are the blocks a new pool's first
     * requests write, and their steps no longer take a page fault per page of each new block.
     * For a pool sized to a job (generate); a larger {@code blocks} stops at the pool's size.
     *
     * @throws IllegalStateException once a block has been handed out (its KV would be overwritten)
     */
    public void prefault(int blocks) {
        if (handedOut) {
            throw new IllegalStateException("prefault after blocks were handed out would overwrite their KV");
        }
        ReservedMemory.prefault(slab, (long) Math.min(Math.max(blocks, 0), numBlocks) * layout.bytesPerBlock());
    }

    /** Bytes of the slab now resident in memory (written at least once); see {@link ReservedMemory#residentBytes}. */
    public long residentBytes() {
        return ReservedMemory.residentBytes(slab);
    }

    /** The bytes of one block. */
    public MemorySegment block(int blockId) {
        return slab.asSlice(blockId * layout.bytesPerBlock(), layout.bytesPerBlock());
    }

    /**
     * Sets who hears of keys leaving the prefix cache: one key when {@link #allocate()} reuses a
     * cached free block, every key at {@link #resetPrefixCache()}. Called on the engine thread,
     * inside those calls. Keys enter the cache only through {@link #cache}, whose caller knows them.
     */
    public void onEvictions(java.util.function.Consumer<java.util.List<BlockKey>> listener) {
        this.evictions = java.util.Objects.requireNonNull(listener, "listener");
    }

    /**
     * Adds a listener of keys leaving the prefix cache, called after the one set by
     * {@link #onEvictions} (same calls, same thread).
     */
    public void alsoOnEvictions(java.util.function.Consumer<java.util.List<BlockKey>> listener) {
        moreEvictions = moreEvictions.andThen(java.util.Objects.requireNonNull(listener, "listener"));
    }

    /**
     * The first {@code horizon} blocks of the free queue, head first: the blocks {@link #allocate()}
     * hands out next (their cached keys are evicted then). No side effects.
     *
     * @return at most {@code horizon} block ids, fewer if fewer blocks are free
     */
    public int[] nearEviction(int horizon) {
        int[] out = new int[Math.max(0, Math.min(horizon, freeCount))];
        int n = 0;
        for (int b = head; b != NONE && n < out.length; b = next[b]) {
            out[n++] = b;
        }
        return out;
    }

    /** Blocks with reference count 0 (allocatable; some may still hold a cached key). */
    public int freeCount() {
        return freeCount;
    }

    /** Blocks registered in the device prefix cache (in use or free). */
    public int cachedCount() {
        return cached.size();
    }

    /** Blocks that are free and hold no cached key. */
    public int emptyCount() {
        int n = 0;
        for (int b = 0; b < numBlocks; b++) {
            if (refCount[b] == 0 && keyOf[b] == null) {
                n++;
            }
        }
        return n;
    }

    public int refCount(int blockId) {
        return refCount[blockId];
    }

    /** The key a block is cached under, or null. */
    public BlockKey keyOf(int blockId) {
        return keyOf[blockId];
    }

    /** The device block cached under {@code key}, or -1. Does not change recency or counts. */
    public int lookup(BlockKey key) {
        Integer b = cached.get(key);
        return b == null ? NONE : b;
    }

    /**
     * Takes the block at the head of the free queue with reference count 1. A cached key it
     * still held is evicted from the prefix cache now (lazy eviction).
     *
     * @throws IllegalStateException if no block is free; callers check {@link #freeCount()}
     */
    public int allocate() {
        if (head == NONE) {
            throw new IllegalStateException("device pool exhausted: all " + numBlocks + " blocks in use");
        }
        int b = head;
        handedOut = true;
        unlink(b);
        if (keyOf[b] != null) {
            BlockKey evicted = keyOf[b];
            cached.remove(evicted);
            keyOf[b] = null;
            evicted(java.util.List.of(evicted));
        }
        refCount[b] = 1;
        return b;
    }

    /** Adds a reference; a block taken from the free queue this way keeps its cached key (a hit). */
    public void retain(int blockId) {
        if (refCount[blockId]++ == 0) {
            unlink(blockId);
        }
    }

    /**
     * Drops a reference. At 0 the block enters the free queue: at the tail (evicted last) if it
     * holds a cached key, at the head (reused first) if it holds nothing worth keeping.
     *
     * @throws IllegalStateException on a release without a matching reference (a bug)
     */
    public void release(int blockId) {
        if (refCount[blockId] <= 0) {
            throw new IllegalStateException("block " + blockId + " released with reference count " + refCount[blockId]);
        }
        if (--refCount[blockId] == 0) {
            if (keyOf[blockId] != null) {
                appendTail(blockId);
            } else {
                pushHead(blockId);
            }
        }
    }

    /**
     * Registers a full block whose KV is written under its key. If another block is already
     * cached under the key, the first one stays the cached copy and this one stays plain.
     *
     * @return true if the block is now cached under key
     */
    public boolean cache(int blockId, BlockKey key) {
        if (keyOf[blockId] != null) {
            return keyOf[blockId].equals(key);
        }
        if (cached.putIfAbsent(key, blockId) != null) {
            return false;
        }
        keyOf[blockId] = key;
        return true;
    }

    /** Drops every cached key (the device prefix cache is emptied); blocks in use stay in use. */
    public void resetPrefixCache() {
        java.util.List<BlockKey> dropped = java.util.List.copyOf(cached.keySet());
        cached.clear();
        Arrays.fill(keyOf, null);
        if (!dropped.isEmpty()) {
            evicted(dropped);
        }
    }

    /**
     * Checks the pool's invariants; throws IllegalStateException naming the first broken one.
     * Callable from tests after every step.
     */
    public void checkInvariants() {
        int queued = 0;
        for (int b = head, last = NONE; b != NONE; last = b, b = next[b]) {
            if (prev[b] != last) {
                throw new IllegalStateException("free queue link broken at block " + b);
            }
            if (refCount[b] != 0) {
                throw new IllegalStateException("block " + b + " in free queue with reference count " + refCount[b]);
            }
            if (++queued > numBlocks) {
                throw new IllegalStateException("free queue has a cycle");
            }
        }
        int zero = 0;
        for (int b = 0; b < numBlocks; b++) {
            if (refCount[b] < 0) {
                throw new IllegalStateException("block " + b + " has negative reference count");
            }
            if ((refCount[b] == 0) != inFreeQueue[b]) {
                throw new IllegalStateException("block " + b + " refCount " + refCount[b] + " but inFreeQueue " + inFreeQueue[b]);
            }
            if (refCount[b] == 0) {
                zero++;
            }
            if (keyOf[b] != null && !Integer.valueOf(b).equals(cached.get(keyOf[b]))) {
                throw new IllegalStateException("block " + b + " has key " + keyOf[b].shortHex() + " not mapped to it");
            }
        }
        if (zero != queued || zero != freeCount) {
            throw new IllegalStateException("free count " + freeCount + ", queued " + queued + ", refCount 0: " + zero);
        }
        for (Map.Entry<BlockKey, Integer> e : cached.entrySet()) {
            if (!e.getKey().equals(keyOf[e.getValue()])) {
                throw new IllegalStateException("cache maps " + e.getKey().shortHex() + " to block " + e.getValue() + " which holds another key");
            }
        }
    }

    @Override
    public void close() {
        arena.close();
    }

    private void evicted(java.util.List<BlockKey> keys) {
        evictions.accept(keys);
        moreEvictions.accept(keys);
    }

    private void appendTail(int b) {
        prev[b] = tail;
        next[b] = NONE;
        if (tail != NONE) {
            next[tail] = b;
        } else {
            head = b;
        }
        tail = b;
        inFreeQueue[b] = true;
        freeCount++;
    }

    private void pushHead(int b) {
        prev[b] = NONE;
        next[b] = head;
        if (head != NONE) {
            prev[head] = b;
        } else {
            tail = b;
        }
        head = b;
        inFreeQueue[b] = true;
        freeCount++;
    }

    private void unlink(int b) {
        if (!inFreeQueue[b]) {
            throw new IllegalStateException("block " + b + " is not in the free queue");
        }
        if (prev[b] != NONE) {
            next[prev[b]] = next[b];
        } else {
            head = next[b];
        }
        if (next[b] != NONE) {
            prev[next[b]] = prev[b];
        } else {
            tail = prev[b];
        }
        prev[b] = next[b] = NONE;
        inFreeQueue[b] = false;
        freeCount--;
    }
}
