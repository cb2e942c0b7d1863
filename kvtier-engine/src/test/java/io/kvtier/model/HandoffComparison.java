package io.kvtier.model;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.ForkJoinPool;

/**
 * Benchmark (not a test): single-sequence decode with the pool's hand-off kinds, A B C D A B C D
 * in one JVM so that a shared machine's load shifts every variant alike: helpers that park after
 * every range with the old threshold (2^18 multiply-adds), helpers that spin
 * {@link Parallel#SPIN_NANOS} between ranges with the current threshold, helpers that park after
 * every range with the current threshold ({@code -Dkvtier.parallel.spinNanos=0}), and one thread.
 * Prints the median tokens/s of each and the median per-round ratios. The model is either format
 * ({@link Models#load}): on a GGUF file the decode takes the default Q8_0 activations. Run with
 * the engine's test classpath:
 * <pre>
 * java --add-modules jdk.incubator.vector --enable-native-access=ALL-UNNAMED \
 *      -cp kvtier-engine/target/classes:kvtier-engine/target/test-classes:kvtier-cli/target/kvtier.jar \
 *      io.kvtier.model.HandoffComparison /work/m/110m-q8_0.gguf [rounds]
 * </pre>
 */
public final class HandoffComparison {

    private static final int TOKENS = 48;

    private HandoffComparison() {
    }

    public static void main(String[] args) {
        int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 15;
        ForkJoinPool two = new ForkJoinPool(2);
        ForkJoinPool one = new ForkJoinPool(1);
        String[] names = {"parked, 2 threads", "spinning, 2 threads", "no spin, 2 threads", "1 thread"};
        try (Model m = Models.load(Path.of(args[0]));
             Transformer parked = new Transformer(m, Kernels.best(), new Parallel(two, 0, 1L << 18));
             Transformer spinning = new Transformer(m, Kernels.best(), new Parallel(two));
             Transformer noSpin = new Transformer(m, Kernels.best(), new Parallel(two, 0, Parallel.MIN_PARALLEL_WORK));
             Transformer single = new Transformer(m, Kernels.best(), new Parallel(one))) {
            Transformer[] variants = {parked, spinning, noSpin, single};
            long warmEnd = System.nanoTime() + 3_000_000_000L;
            while (System.nanoTime() < warmEnd) {
                for (Transformer t : variants) {
                    decode(t);
                }
            }
            double[][] speed = new double[variants.length][rounds];
            for (int r = 0; r < rounds; r++) {
                for (int v = 0; v < variants.length; v++) {
                    speed[v][r] = decode(variants[v]);
                }
            }
            for (int v = 0; v < variants.length; v++) {
                System.out.printf(Locale.ROOT, "%-20s median %.1f tokens/s%n", names[v], median(speed[v]));
            }
            double[] spinOverPark = new double[rounds], spinOverOne = new double[rounds], noSpinOverOne = new double[rounds];
            for (int r = 0; r < rounds; r++) {
                spinOverPark[r] = speed[1][r] / speed[0][r];
                spinOverOne[r] = speed[1][r] / speed[3][r];
                noSpinOverOne[r] = speed[2][r] / speed[3][r];
            }
            System.out.printf(Locale.ROOT, "spinning / parked: median %.3f; spinning / 1 thread: median %.3f; "
                    + "no spin / 1 thread: median %.3f (%d rounds)%n",
                    median(spinOverPark), median(spinOverOne), median(noSpinOverOne), rounds);
        } finally {
            two.shutdownNow();
            one.shutdownNow();
        }
    }

    /** Tokens/s of {@link #TOKENS} greedy decode steps of one sequence from position 0. */
    private static double decode(Transformer t) {
        try (LogitsDriver d = new LogitsDriver(t, 16, TOKENS + 1)) {
            float[] logits = d.feed(1);
            long t0 = System.nanoTime();
            for (int i = 0; i < TOKENS; i++) {
                logits = d.feed(LogitsDriver.argmax(logits));
            }
            return TOKENS / ((System.nanoTime() - t0) / 1e9);
        }
    }

    private static double median(double[] v) {
        double[] s = v.clone();
        Arrays.sort(s);
        return s[s.length / 2];
    }
}
