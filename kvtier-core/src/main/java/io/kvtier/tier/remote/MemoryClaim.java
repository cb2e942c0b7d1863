package io.kvtier.tier.remote;

/**
 * The right to read memory that may be given to another use between two reads of it, never during
 * one: a transfer job's host slot, which the scheduler may reuse once the job has passed its
 * deadline. A reader takes the claim for each copy out of the memory (for a socket write, each
 * kernel copy) and gives it back at once; it never holds it while it waits.
 */
public interface MemoryClaim {

    /** A claim nothing contends for: always granted (memory the caller owns outright). */
    MemoryClaim OWNED = new MemoryClaim() {
        @Override
        public boolean enter() {
            return true;
        }

        @Override
        public void exit() {
        }
    };

    /** Takes the claim; false if the memory is the caller's no more (touch nothing, now or later). */
    boolean enter();

    /** Gives back the claim taken by {@link #enter()}. */
    void exit();
}
