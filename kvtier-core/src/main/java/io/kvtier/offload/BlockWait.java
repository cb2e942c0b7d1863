package io.kvtier.offload;

/**
 * Load or recompute's answer for a hit whose load was chosen but whose device blocks are short at
 * admission ({@link OffloadScheduler#whenBlocksShort}).
 */
public enum BlockWait {
    /** Neither load nor recompute now: the requests behind it are admitted; ask again next step. */
    WAIT,
    /** Admit it as a miss now: recompute the hit (its first step needs fewer blocks than the load). */
    RECOMPUTE,
    /** Hold the line until the blocks come free (the behaviour without the estimate). */
    STALL
}
