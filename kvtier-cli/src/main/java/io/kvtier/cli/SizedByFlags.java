package io.kvtier.cli;

/**
 * A command whose memory is sized by flags of its own rather than the engine's pools and tiers
 * ({@link Main#memoryAdvice}'s default list): "not enough memory" names those flags, so the advice
 * points at what actually grew ({@code bench scheduler --prompt-tokens 10000000} said "lower
 * --max-running", a flag left at its default).
 */
interface SizedByFlags {

    /** What to lower, as the end of "not enough memory (...); lower ...", e.g. {@code --prompt-tokens or --steps}. */
    String memoryAdvice();
}
