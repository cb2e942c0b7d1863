package io.kvtier.bench;

import io.kvtier.engine.OffloadSetup;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Benchmark (not a test): the twin of {@code bench offload} with offloading off on both sides (an
 * A/A control), to see what the twin's ratio is when the two engines do the same work. Args: MODEL
 * THREADS BATCH PAIRS STEPS_PER_TURN.
 */
public final class TwinDecodeControl {

    private TwinDecodeControl() {
    }

    public static void main(String[] args) {
        Path model = Path.of(args[0]);
        int threads = Integer.parseInt(args[1]);
        int batch = Integer.parseInt(args[2]);
        int pairs = Integer.parseInt(args[3]);
        int turn = Integer.parseInt(args[4]);
        try (TwinDecode twin = new TwinDecode(model, threads, batch, OffloadSetup.OFF, turn)) {
            twin.run(2_000_000_000L, new TwinDecode.Cost(), new TwinDecode.Cost());
            for (int i = 0; i < pairs; i++) {
                TwinDecode.Cost a = new TwinDecode.Cost();
                TwinDecode.Cost b = new TwinDecode.Cost();
                twin.run(OffloadDecodeBench.PAIR_NANOS, a, b);
                System.out.printf(Locale.ROOT, "pair %d: A %.2f us, B %.2f us CPU/token, A/B %.4f; wall A/B %.4f%n", i,
                        a.cpuPerToken() / 1e3, b.cpuPerToken() / 1e3, b.cpuPerToken() / a.cpuPerToken(),
                        b.wallPerToken() / a.wallPerToken());
            }
        }
    }
}
