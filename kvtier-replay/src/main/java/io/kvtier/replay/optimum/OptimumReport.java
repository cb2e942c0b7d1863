package io.kvtier.replay.optimum;

import io.kvtier.replay.trace.MooncakeTraces;
import io.kvtier.replay.trace.Trace;
import io.kvtier.replay.trace.TraceReader;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * Offline cache analysis of one trace: the unbounded ceiling, and LRU against the Belady
 * optimum at some capacities, all at chunk (512-token block) granularity in instant mode.
 *
 * @param source         trace name
 * @param requests       number of requests
 * @param promptTokens   prompt tokens over all requests
 * @param references     full-block references over all requests
 * @param distinctChunks distinct full blocks
 * @param ceiling        unbounded-cache hits under the report's rule
 * @param points         LRU and Belady at each capacity, in the order asked
 */
public record OptimumReport(String source, int requests, long promptTokens, int references, int distinctChunks,
                            HitResult ceiling, List<Point> points) {

    /** Capacities of the default report, in 512-token chunks: 1M (2^20 tokens), 3M and 10M tokens. */
    public static final long[] DEFAULT_CAPACITY_CHUNKS = {2048, 5859, 19531};

    /**
     * LRU and Belady at one capacity.
     *
     * @param capacityChunks capacity in 512-token chunks
     * @param lru            reference LRU
     * @param belady         Belady optimum
     */
    public record Point(long capacityChunks, HitResult lru, HitResult belady) {

        /** Capacity in tokens. */
        public long capacityTokens() {
            return capacityChunks * ChunkTrace.CHUNK_TOKENS;
        }
    }

    public OptimumReport {
        points = List.copyOf(points);
    }

    /** Computes the ceiling and, for each capacity in chunks, LRU and Belady under {@code rule}. */
    public static OptimumReport of(ChunkTrace trace, HitRule rule, long... capacitiesChunks) {
        List<Point> points = new ArrayList<>();
        for (long cap : capacitiesChunks) {
            points.add(new Point(cap, LruReference.run(trace, cap, rule), BeladyOptimum.run(trace, cap, rule)));
        }
        return new OptimumReport(trace.source(), trace.requests(), trace.promptTokens(), trace.references(),
                trace.distinctChunks(), Ceiling.compute(trace, rule), points);
    }

    /** Writes the report as a small table. */
    public void print(PrintStream out) {
        out.printf("%s: %,d requests, %,d prompt tokens, %,d full-block references, %,d distinct%n", source,
                requests, promptTokens, references, distinctChunks);
        out.printf("  ceiling (%s): %,d hit tokens = %.4f%n", ceiling.rule(), ceiling.hitTokens(), ceiling.hitRatio());
        out.printf("  %12s %14s %8s %8s %10s %10s%n", "chunks", "tokens", "lru", "belady", "lru/ceil", "bel/ceil");
        for (Point p : points) {
            double c = ceiling.hitRatio();
            out.printf("  %,12d %,14d %8.4f %8.4f %10.3f %10.3f%n", p.capacityChunks(), p.capacityTokens(),
                    p.lru().hitRatio(), p.belady().hitRatio(), p.lru().hitRatio() / c, p.belady().hitRatio() / c);
        }
    }

    /**
     * Prints the report for each trace file given (default: both Mooncake traces under
     * {@code shared/traces/mooncake}, looked up from the working directory upwards), for both
     * hit rules' ceilings, with LRU and Belady at {@link #DEFAULT_CAPACITY_CHUNKS} under
     * {@link HitRule#ENGINE}, and the time each step took.
     */
    public static void main(String[] args) throws IOException {
        List<Path> files = new ArrayList<>();
        for (String a : args) {
            files.add(Path.of(a));
        }
        if (files.isEmpty()) {
            Path dir = MooncakeTraces.directory();
            files.add(dir.resolve(MooncakeTraces.CONVERSATION));
            files.add(dir.resolve(MooncakeTraces.SYNTHETIC));
        }
        PrintStream out = System.out;
        for (Path f : files) {
            long t0 = System.nanoTime();
            Trace trace = TraceReader.read(f);
            long t1 = System.nanoTime();
            ChunkTrace chunks = ChunkTrace.of(trace);
            long t2 = System.nanoTime();
            HitResult full = Ceiling.compute(chunks, HitRule.FULL_BLOCKS);
            OptimumReport report = of(chunks, HitRule.ENGINE, DEFAULT_CAPACITY_CHUNKS);
            long t3 = System.nanoTime();
            report.print(out);
            out.printf("  ceiling (%s): %,d hit tokens = %.4f%n", full.rule(), full.hitTokens(), full.hitRatio());
            out.printf("  time: read %d ms, chunk ids %d ms, ceilings + %d x (lru + belady) %d ms%n%n",
                    (t1 - t0) / 1_000_000, (t2 - t1) / 1_000_000, DEFAULT_CAPACITY_CHUNKS.length,
                    (t3 - t2) / 1_000_000);
        }
    }
}
