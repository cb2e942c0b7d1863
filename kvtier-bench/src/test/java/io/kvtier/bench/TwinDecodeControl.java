package io.kvtier.bench;

import io.kvtier.engine.OffloadSetup;
import java.nio.file.Path;
import java.util.Locale;

/**
 * Benchmark (not a test): the twin of {@code bench offload} with offloading off on both sides (an
 * A/A control), to see what the twin's ratio is when the two engines do the same work. Args: MODEL
 * THREADS BATCH PAIRS STEPS_PER_TURN [B], B the second engine's offloading: {@code off} (the
 * default: A/A), {@code on} ({@code bench offload}'s "on") or {@code prompt} (a host tier that
 * stores prompt blocks only: the bookkeeping of every step without the decode stores); with
 * {@code on} or {@code prompt} the store path is compiled first, as in the bench. Each pair's line
 * also gives both sides' wall time per token around the forward pass (the step's work outside it,
 * where offloading's own work is: the forward passes are the same work on both sides).
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
        String side = args.length > 5 ? args[5] : "off";
        OffloadSetup setup = switch (side) {
            case "off" -> OffloadSetup.OFF;
            case "on" -> OffloadDecodeBench.onSetup(OffloadDecodeBench.tierChunks(model, batch));
            case "prompt" -> new OffloadSetup(0, OffloadDecodeBench.tierChunks(model, batch), "lru",
                    io.kvtier.offload.OffloadConfig.DEFAULT);
            default -> throw new IllegalArgumentException("B is off, on or prompt: " + side);
        };
        if (!side.equals("off")) {
            OffloadDecodeBench.warmStorePath(model, threads); // as the bench does: its store path compiled first
        }
        try (TwinDecode twin = new TwinDecode(model, threads, batch, setup, turn)) {
            twin.run(2_000_000_000L, new TwinDecode.Cost(), new TwinDecode.Cost());
            for (int i = 0; i < pairs; i++) {
                TwinDecode.Cost a = new TwinDecode.Cost();
                TwinDecode.Cost b = new TwinDecode.Cost();
                twin.run(OffloadDecodeBench.PAIR_NANOS, a, b);
                System.out.printf(Locale.ROOT, "B " + side + " pair %d: A %.2f us, B %.2f us CPU/token, A/B %.4f; wall A/B %.4f; around the forward pass A %.2f us, B %.2f us%n", i,
                        a.cpuPerToken() / 1e3, b.cpuPerToken() / 1e3, b.cpuPerToken() / a.cpuPerToken(),
                        b.wallPerToken() / a.wallPerToken(), (a.wallPerToken() - a.forwardPerToken()) / 1e3,
                        (b.wallPerToken() - b.forwardPerToken()) / 1e3);
            }
        }
    }
}
