package io.kvtier.model;

import io.kvtier.kv.KvLayout;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * Measures the raw speed of {@link Transformer#forward} on a checkpoint, without scheduler or
 * tiers: single-sequence decode, batched decode ({@code batch} sequences, one token each per
 * forward) and chunked prefill, each after 2 s of warm-up; the best of a few runs is reported
 * because a shared machine's memory bandwidth varies from run to run. Decode feeds the greedy (argmax)
 * token back, so the work is that of real generation. Used by {@code ./kvtier bench}; run alone
 * with
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-core/target/classes io.kvtier.model.ForwardSpeed \
 *      ../shared/models/stories260K.bin [--random-15m /tmp/stories15M-random.bin] [--kernels scalar] [--threads 2]
 * </pre>
 */
public final class ForwardSpeed {

    /** Shape of llama2.c's stories15M (dim 288, 6 layers, 6 heads, vocab 32000, seq 256). */
    public static final ModelConfig STORIES_15M = new ModelConfig(288, 768, 6, 6, 6, 32000, 256, true);

    private static final int BLOCK_SIZE = 16;

    private ForwardSpeed() {
    }

    /**
     * What to measure.
     *
     * @param positions    positions each decode run and the prefill prompt cover (0..positions-1)
     * @param batch        sequences decoding together in the batched measurement
     * @param prefillChunk tokens per forward in the prefill measurement
     * @param rounds       timed runs of each measurement (the best is kept), after 2 s of warm-up
     */
    public record Options(int positions, int batch, int prefillChunk, int rounds) {
        public static Options defaults() {
            return new Options(256, 32, 64, 3);
        }
    }

    /**
     * Measured speeds, in tokens per second of wall-clock time.
     *
     * @param decodeTokensPerSecond      one sequence, one token per forward
     * @param batchDecodeTokensPerSecond {@code batch} sequences, {@code batch} tokens per forward
     * @param prefillTokensPerSecond     one prompt of {@code positions} tokens in chunks of {@code prefillChunk}
     */
    public record Result(String model, ModelConfig config, String kernels, int threads, Options options,
                         double decodeTokensPerSecond, double batchDecodeTokensPerSecond,
                         double prefillTokensPerSecond) {

        /** Multi-line report for a terminal. */
        public String summary() {
            return String.format(Locale.ROOT,
                    "%s (dim %d, %d layers, vocab %d), kernels %s, %d threads, positions 0..%d%n"
                            + "  decode, 1 sequence      : %,10.0f tok/s%n"
                            + "  decode, %2d sequences    : %,10.0f tok/s (%.1fx)%n"
                            + "  prefill, chunks of %-4d : %,10.0f tok/s%n",
                    model, config.dim(), config.layers(), config.vocabSize(), kernels, threads,
                    options.positions() - 1, decodeTokensPerSecond, options.batch(), batchDecodeTokensPerSecond,
                    batchDecodeTokensPerSecond / decodeTokensPerSecond, options.prefillChunk(), prefillTokensPerSecond);
        }
    }

    /**
     * Loads {@code model} and measures it with {@link Kernels#best()} on a fresh pool of one
     * thread per available processor (shut down afterwards).
     */
    public static Result measure(Path model, Options options) {
        ForkJoinPool pool = new ForkJoinPool(Runtime.getRuntime().availableProcessors());
        try {
            return measure(model, Kernels.best(), pool, options);
        } finally {
            pool.shutdownNow();
        }
    }

    /**
     * Loads {@code model}, measures, closes it.
     *
     * @throws ModelFormatException when the checkpoint cannot be loaded
     * @throws IllegalArgumentException when {@code positions} exceeds the model's seq_len
     */
    public static Result measure(Path model, Kernels kernels, ForkJoinPool pool, Options options) {
        try (Model checkpoint = Models.load(model);
             Transformer transformer = new Transformer(checkpoint, kernels, pool)) {
            return measure(model.getFileName().toString(), transformer, pool.getParallelism(), options);
        }
    }

    /** Measures on an existing transformer. */
    public static Result measure(String name, Transformer model, int threads, Options o) {
        if (o.positions() > model.config().seqLen()) {
            throw new IllegalArgumentException("positions " + o.positions() + " exceed seq_len " + model.config().seqLen());
        }
        KvLayout layout = model.config().kvLayout(BLOCK_SIZE);
        int blocksPerSeq = layout.blocksFor(o.positions());
        try (Arena arena = Arena.ofShared()) {
            MemorySegment slab = arena.allocate(layout.bytesPerBlock() * blocksPerSeq * o.batch(), 64);
            Run run = new Run(model, slab, layout, blocksPerSeq);
            double decode = best(o.rounds(), () -> run.decode(1, o.positions()));
            double batch = best(o.rounds(), () -> run.decode(o.batch(), o.positions()));
            double prefill = best(o.rounds(), () -> run.prefill(o.positions(), o.prefillChunk()));
            return new Result(name, model.config(), model.kernels().name(), threads, o, decode, batch, prefill);
        }
    }

    /** Warm-up per measurement: the JIT needs ~10^4 calls of each kernel before its code is final. */
    private static final long WARMUP_NANOS = 2_000_000_000L;

    /**
     * Runs {@code task} (which returns tokens processed) for at least {@link #WARMUP_NANOS} to warm
     * up, then {@code rounds} times; returns the best rate in tokens/s.
     */
    private static double best(int rounds, java.util.function.IntSupplier task) {
        long warmEnd = System.nanoTime() + WARMUP_NANOS;
        do {
            task.getAsInt();
        } while (System.nanoTime() < warmEnd);
        double best = 0;
        for (int i = 0; i < rounds; i++) {
            long t0 = System.nanoTime();
            int tokens = task.getAsInt();
            best = Math.max(best, tokens / ((System.nanoTime() - t0) / 1e9));
        }
        return best;
    }

    /** Generation over one slab; sequence i owns blocks i*blocksPerSeq ... */
    private record Run(Transformer model, MemorySegment slab, KvLayout layout, int blocksPerSeq) {

        int[] table(int seq) {
            int[] t = new int[blocksPerSeq];
            for (int b = 0; b < blocksPerSeq; b++) t[b] = seq * blocksPerSeq + b;
            return t;
        }

        /** {@code seqs} sequences from BOS, one greedy token each per forward; returns tokens fed. */
        int decode(int seqs, int positions) {
            int[][] tables = new int[seqs][];
            int[] next = new int[seqs];
            for (int s = 0; s < seqs; s++) {
                tables[s] = table(s);
                next[s] = Tokenizer.BOS + s % 7;   // different sequences, different tokens
            }
            List<SequenceChunk> chunks = new ArrayList<>(seqs);
            for (int pos = 0; pos < positions; pos++) {
                chunks.clear();
                for (int s = 0; s < seqs; s++) {
                    chunks.add(new SequenceChunk(new int[] {next[s]}, pos, tables[s], true));
                }
                float[][] logits = model.forward(chunks, slab, layout);
                for (int s = 0; s < seqs; s++) next[s] = argmax(logits[s]);
            }
            return seqs * positions;
        }

        /** One prompt of {@code positions} tokens in chunks; returns tokens fed. */
        int prefill(int positions, int chunk) {
            int[] table = table(0);
            int vocab = model.config().vocabSize();
            for (int start = 0; start < positions; start += chunk) {
                int n = Math.min(chunk, positions - start);
                int[] tokens = new int[n];
                for (int i = 0; i < n; i++) tokens[i] = (int) ((start + i) * 2654435761L % vocab);
                model.forward(List.of(new SequenceChunk(tokens, start, table, start + n >= positions)), slab, layout);
            }
            return positions;
        }
    }

    private static int argmax(float[] v) {
        int best = 0;
        for (int i = 1; i < v.length; i++) {
            if (v[i] > v[best]) best = i;
        }
        return best;
    }

    /**
     * {@code ForwardSpeed [model.bin ...] [--random-15m path] [--kernels scalar|vector]
     * [--threads n] [--positions n] [--batch n] [--chunk n] [--rounds n]}: measures each model;
     * {@code --random-15m} writes (once) a random checkpoint of the stories15M shape and adds it.
     */
    public static void main(String[] args) {
        List<Path> models = new ArrayList<>();
        Kernels kernels = Kernels.best();
        int threads = Runtime.getRuntime().availableProcessors();
        Options o = Options.defaults();
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--random-15m" -> {
                    Path p = Path.of(args[++i]);
                    if (!Files.exists(p)) {
                        CheckpointWriter.writeRandom(p, STORIES_15M, 15);
                    }
                    models.add(p);
                }
                case "--kernels" -> kernels = args[++i].equals("scalar") ? Kernels.scalar() : Kernels.best();
                case "--threads" -> threads = Integer.parseInt(args[++i]);
                case "--positions" -> o = new Options(Integer.parseInt(args[++i]), o.batch(), o.prefillChunk(), o.rounds());
                case "--batch" -> o = new Options(o.positions(), Integer.parseInt(args[++i]), o.prefillChunk(), o.rounds());
                case "--chunk" -> o = new Options(o.positions(), o.batch(), Integer.parseInt(args[++i]), o.rounds());
                case "--rounds" -> o = new Options(o.positions(), o.batch(), o.prefillChunk(), Integer.parseInt(args[++i]));
                default -> models.add(Path.of(args[i]));
            }
        }
        ForkJoinPool pool = new ForkJoinPool(threads);
        try {
            for (Path m : models) {
                System.out.print(measure(m, kernels, pool, o).summary());
            }
        } finally {
            pool.shutdownNow();
        }
    }
}
