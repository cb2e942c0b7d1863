package io.kvtier.cli;

import io.kvtier.model.Model;
import io.kvtier.model.Models;
import java.nio.file.Path;

/**
 * Benchmark (not a test): only the remote TTFT pairs of {@code bench offload --remote-url}
 * ({@link RemoteTtft}), without the host, disk and throughput figures around them, for working
 * on the remote read path. Run after {@code mvn -B -q -o -pl kvtier-cli -am test-compile}, with
 * Redis up ({@code eval "$(.ci/redis-up DIR)"}):
 * <pre>
 * java [-Dkvtier.remote.trace=true] -cp "$(ls -d kvtier-*&#47;target/classes | paste -sd:):kvtier-cli/target/test-classes:kvtier-cli/target/kvtier.jar" \
 *      io.kvtier.cli.RemoteTtftRun $KVTIER_REDIS_URL /work/m/110m-v512.bin [REPEATS [THREADS [PROMPT_TOKENS]]]
 * </pre>
 */
public final class RemoteTtftRun {

    private RemoteTtftRun() {
    }

    public static void main(String[] args) {
        String url = args[0];
        Model m = Models.load(Path.of(args[1]));
        int repeats = args.length > 2 ? Integer.parseInt(args[2]) : 3;
        int threads = args.length > 3 ? Integer.parseInt(args[3]) : Runtime.getRuntime().availableProcessors();
        int tokens = args.length > 4 ? Integer.parseInt(args[4]) : 1000;
        int[] prompt = BenchOffloadCommand.ttftPrompt(m.config(), tokens);
        var layout = m.config().kvLayout(16);
        long prefixBytes = (long) ((prompt.length - 1) / 16) * layout.bytesPerBlock();
        System.out.printf("%d-token prompt, prefix %.1f MB of KV, %d threads, load average %.1f%n", prompt.length,
                prefixBytes / 1e6, threads, java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage());
        RemoteTtft.print(m, new RemoteBenchRun(io.kvtier.tier.remote.RemoteSettings.of(java.util.List.of(url), false, "bench",
                System.getenv(RemoteConnectionOptions.PASSWORD_ENV)), null), prompt, prefixBytes, repeats, threads);
    }
}
