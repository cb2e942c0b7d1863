package io.kvtier.cli;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * One name per concept across every command: the flags that more than one command has, each
 * with its meaning, the classes allowed to declare it (a shared mixin, so one spelling has one
 * meaning, one parser and one check), and the other spellings it must never be given. The README's
 * vocabulary table says the same; {@code FlagVocabularyTest} walks every command against it.
 *
 * <p>Rules of the vocabulary, for every command:
 * <ul>
 *   <li>Sizes in bytes ({@code -bytes} flags): {@code K/M/G/T} and {@code Ki/Mi/Gi/Ti} are both
 *       powers of 1024, an optional {@code B} after them ({@code 256M} = {@code 256MiB}).</li>
 *   <li>Counts of tokens ({@code -tokens} flags): {@code k/M/G} are powers of 1000 ({@code 3M} =
 *       3,000,000), {@code Ki/Mi/Gi} powers of 1024.</li>
 *   <li>Times ({@link TimeFlag}): a number with {@code us}, {@code ms} or {@code s}; a plain number
 *       is the flag's own unit, the one it took before units were spelled.</li>
 *   <li>Zero is zero: a tier of size 0 is off, a wait of 0 is no wait; where zero makes no sense
 *       it is refused. A default is had by leaving a flag out, never by {@code 0}.</li>
 *   <li>A flag that only means something with another flag or mode is refused without it.</li>
 * </ul>
 */
public final class FlagVocabulary {

    private FlagVocabulary() {
    }

    /**
     * A concept and its one flag.
     *
     * @param flag        the canonical spelling
     * @param meaning     what it means, in every command that has it
     * @param declaredIn  the classes allowed to declare it (a mixin, or each command for concepts
     *                    whose values differ per command)
     * @param otherNames  spellings of the same concept that no command may show
     */
    public record Concept(String flag, String meaning, Set<Class<?>> declaredIn, List<String> otherNames) {
    }

    /** The concepts of the shared flags. */
    public static final List<Concept> CONCEPTS = List.of(
            new Concept("--model", "the model file (llama2.c checkpoint or GGUF)", Set.of(ModelOptions.class),
                    List.of("--checkpoint", "--model-file", "--model-path")),
            new Concept("--tokenizer", "the tokenizer file", Set.of(TokenizerOptions.class),
                    List.of("--tokenizer-file", "--tokenizer-path", "--vocab-file")),
            new Concept("--max-tokens", "most new tokens per request", Set.of(MaxTokensOptions.class),
                    List.of("--decode-tokens", "--outputs", "--max-new-tokens", "--output-tokens", "--n-predict")),
            new Concept("--temperature", "sampling temperature (0 = greedy)", Set.of(SamplingOptions.class), List.of("--temp")),
            new Concept("--top-p", "nucleus sampling threshold", Set.of(SamplingOptions.class), List.of("--topp", "--nucleus")),
            new Concept("--seed", "seed of the command's random numbers (sampling; weights in make-model)",
                    Set.of(SamplingOptions.class, MakeModelCommand.class), List.of("--random-seed", "--sampling-seed")),
            new Concept("--block-size", "token positions per KV block", Set.of(BatchOptions.class),
                    List.of("--block-tokens", "--page-size")),
            new Concept("--max-batch-tokens", "token budget of one engine step", Set.of(BatchOptions.class),
                    List.of("--max-num-batched-tokens", "--batch-tokens", "--step-tokens")),
            new Concept("--max-running", "most requests running at once (concurrency)", Set.of(BatchOptions.class),
                    List.of("--batch", "--running", "--max-num-seqs", "--concurrency", "--max-batch", "--parallel")),
            new Concept("--batch-invariant", "a request's tokens do not depend on its batch companions",
                    Set.of(InvarianceOptions.class), List.of("--deterministic", "--invariant")),
            new Concept("--device-blocks", "blocks in the device KV pool", Set.of(EngineOptions.class),
                    List.of("--gpu-blocks", "--num-blocks")),
            new Concept("--no-prefix-cache", "no reuse of device blocks between requests", Set.of(EngineOptions.class),
                    List.of("--disable-prefix-cache", "--no-prefix-caching")),
            new Concept("--threads", "compute threads of the forward pass", Set.of(ThreadsOptions.class),
                    List.of("--compute-threads", "--num-threads", "--jobs")),
            new Concept("--host-cache-bytes", "host tier size in bytes", Set.of(OffloadOptions.class),
                    List.of("--host-bytes", "--cpu-cache-bytes", "--host-memory")),
            new Concept("--host-cache-chunks", "host tier size in chunks", Set.of(OffloadOptions.class), List.of("--host-chunks")),
            new Concept("--host-cache-tokens", "host tier size in tokens (replay)", Set.of(ReplayCommand.class),
                    List.of("--host-tokens")),
            new Concept("--eviction", "the host tier's eviction (and admission) policy", Set.of(EvictionOptions.class),
                    List.of("--policy", "--eviction-policy", "--cache-policy")),
            new Concept("--store-policy", "when device blocks are stored in the host tier (eager / lazy)", Set.of(EvictionOptions.class),
                    List.of("--store-mode", "--offload-policy")),
            new Concept("--store-horizon", "lazy stores: blocks from the free queue's head that are stored", Set.of(EvictionOptions.class),
                    List.of("--lazy-horizon")),
            new Concept("--load-policy", "load every hit, or only where loading is faster than recomputing", Set.of(EvictionOptions.class),
                    List.of("--load-or-recompute")),
            new Concept("--disk-cache-dir", "the disk tier's directory", Set.of(DiskOptions.class, BenchOffloadCommand.class),
                    List.of("--disk-dir", "--cache-dir", "--disk-path")),
            new Concept("--disk-cache-bytes", "disk tier size in bytes", Set.of(DiskOptions.class), List.of("--disk-bytes")),
            new Concept("--disk-write-policy", "when the disk tier is written (through / on-evict)", Set.of(DiskOptions.class), List.of()),
            new Concept("--disk-fsync", "what is forced to disk before a file is published", Set.of(DiskOptions.class), List.of()),
            new Concept("--disk-admit-after", "write a chunk to disk only from its N-th use", Set.of(DiskOptions.class), List.of()),
            new Concept("--disk-scan-wait", "at start, how long to wait for the disk tier's scan", Set.of(DiskOptions.class), List.of()),
            new Concept("--blocks-per-chunk", "device blocks per stored chunk", Set.of(OffloadOptions.class), List.of()),
            new Concept("--prefill-priority", "a new request's prefill may preempt decodes whose KV the host tier holds",
                    Set.of(OffloadOptions.class), List.of("--preempt-for-prefill", "--prefill-first")),
            new Concept("--offload-decode", "store blocks completed during decode too", Set.of(OffloadOptions.class), List.of()),
            new Concept("--remote-url", "the remote tier's Redis/Valkey server (repeat for cluster seeds)",
                    Set.of(RemoteConnectionOptions.class), List.of("--redis-url", "--remote", "--redis")),
            new Concept("--remote-mode", "one remote server or a Cluster", Set.of(RemoteConnectionOptions.class), List.of()),
            new Concept("--remote-tenant", "key prefix of the engines that share remote chunks", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-password-file", "the file holding the remote user's password",
                    Set.of(RemoteConnectionOptions.class), List.of()),
            new Concept("--remote-ca-file", "PEM file of the CA that signed a rediss:// server's certificate",
                    Set.of(RemoteConnectionOptions.class),
                    List.of("--remote-ca-cert", "--tls-ca-cert-file", "--cacert")),
            new Concept("--remote-write-policy", "when the remote tier is written (through / on-evict)", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-admit-after", "write a chunk to the remote tier only from its N-th use", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-ttl", "expiry of chunks stored in the remote tier", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-timeout", "deadline of every remote operation", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-max-in-flight", "bytes being written to the remote tier at once", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-max-value", "largest value sent to the remote tier", Set.of(RemoteOptions.class), List.of()),
            new Concept("--remote-breaker-open", "how long a failing remote node is skipped", Set.of(RemoteOptions.class), List.of()),
            new Concept("--disk-cache-tokens", "disk tier size in tokens (replay)", Set.of(ReplayCommand.class),
                    List.of("--disk-tokens")),
            new Concept("--stats-json", "the run's summary record as JSON", Set.of(StatsOptions.class),
                    List.of("--json", "--summary-json", "--report-json")),
            new Concept("--stats-csv", "the run's summary record as CSV (the JSON's fields)", Set.of(StatsOptions.class),
                    List.of("--csv", "--summary-csv")),
            new Concept("--sweep-threads", "replays run at once in a sweep", Set.of(ReplayCommand.class), List.of()),
            new Concept("--repeats", "measured runs after a warm-up",
                    Set.of(BenchGenerateCommand.class, BenchOffloadCommand.class, BenchSchedulerCommand.class),
                    List.of("--runs", "--iterations")),
            new Concept("--prompt-tokens", "prompt length of a benchmark's requests, tokens",
                    Set.of(BenchOffloadCommand.class, BenchSchedulerCommand.class), List.of("--prompt-len", "--prompt-length")),
            new Concept("--served-model-name", "the model's name in the OpenAI API", Set.of(ServeOptions.class, BenchServeCommand.class),
                    List.of("--model-name")),
            new Concept("--api-key", "the API key clients send as 'Authorization: Bearer'", Set.of(ApiKeyOptions.class),
                    List.of("--key", "--token")),
            new Concept("--api-key-file", "a file holding the API key", Set.of(ApiKeyOptions.class), List.of("--key-file")),
            new Concept("--api-key-env", "an environment variable holding the API key", Set.of(ApiKeyOptions.class),
                    List.of("--key-env")),
            new Concept("--png", "a chart of the run as a PNG file", Set.of(ReplayCommand.class, BenchServeCommand.class),
                    List.of("--chart")),
            new Concept("--kv-events-endpoint", "the ZMQ PUB address of KV events (serve binds it, kv-events subscribes to it)",
                    Set.of(KvEventsOptions.class, KvEventsCommand.class), List.of("--events-endpoint", "--kv-events-address")),
            new Concept("--kv-events-replay-endpoint", "the ZMQ ROUTER address of KV event replays",
                    Set.of(KvEventsOptions.class, KvEventsCommand.class), List.of("--replay-endpoint")),
            new Concept("--kv-events-topic", "the topic frame of KV event batches", Set.of(KvEventsOptions.class, KvEventsCommand.class),
                    List.of("--events-topic")));

    /**
     * Former spellings kept as hidden aliases for one release, by command: each prints a note on
     * stderr naming its replacement.
     */
    public static final Map<String, Map<String, String>> FORMER_NAMES = Map.of(
            "replay", Map.of("--policy", "--eviction", "--json", "--stats-json", "--csv", "--stats-csv",
                    "--host-tokens", "--host-cache-tokens", "--disk-tokens", "--disk-cache-tokens",
                    "--sweep-host-tokens", "--sweep-host-cache-tokens", "--threads", "--sweep-threads",
                    "--outputs", "--max-tokens"),
            "bench generate", Map.of("--decode-tokens", "--max-tokens", "--batch", "--max-running"),
            "bench scheduler", Map.of("--running", "--max-running"),
            "bench offload", Map.of("--disk-dir", "--disk-cache-dir"));

    /** The flag that replaced {@code former} (the same in every command that had it). */
    static String canonicalFor(String former) {
        for (Map<String, String> byCommand : FORMER_NAMES.values()) {
            String now = byCommand.get(former);
            if (now != null) {
                return now;
            }
        }
        throw new IllegalArgumentException("no former flag " + former);
    }
}
