package io.kvtier.cli;

/**
 * Where a {@code generate} run's time went, in seconds.
 *
 * @param startup    process start to the first request submitted: JVM start, model, tokenizer,
 *                   tiers (and the disk scan wait), tokenizing
 * @param tokenize   tokenizing the prompts (part of {@code startup})
 * @param firstToken process start to the first generated token (0 if none)
 * @param total      process start to the end of the run (what the user waited for)
 * @param wall       first request submitted to the end of the run (the engine's time; tokens/s
 *                   are over this)
 */
record RunTimes(double startup, double tokenize, double firstToken, double total, double wall) {
}
