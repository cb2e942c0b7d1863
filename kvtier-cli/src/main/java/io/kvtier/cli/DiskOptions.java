package io.kvtier.cli;

import io.kvtier.engine.OffloadSetup;
import io.kvtier.offload.DiskWritePolicy;
import io.kvtier.tier.disk.DiskFsync;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** The disk tier behind the host tier: {@code --disk-cache-dir} and the flags that need it. */
public final class DiskOptions {

    @Spec(Spec.Target.MIXEE)
    CommandSpec mixee;

    @Option(names = "--disk-cache-dir", paramLabel = "DIR",
            description = "put a disk KV tier behind the host tier in DIR (survives restarts; one subdirectory per model namespace)")
    Path dir;

    @Option(names = "--disk-cache-bytes", defaultValue = "1G", paramLabel = "SIZE",
            description = "disk tier budget in bytes (K/M/G/T and Ki/Mi/Gi/Ti are powers of 1024; default ${DEFAULT-VALUE})")
    String bytes;

    @Option(names = "--disk-write-policy", defaultValue = "through", paramLabel = "through|on-evict",
            description = "through (default: after every host store) or on-evict (when the host tier evicts)")
    String writePolicy;

    @Option(names = "--disk-fsync", defaultValue = "none", paramLabel = "none|data|data-and-dir",
            description = "none (default), data (fdatasync before publishing), data-and-dir (and the directory)")
    String fsync;

    @Option(names = "--disk-admit-after", defaultValue = "1", paramLabel = "N",
            description = "write a chunk to disk only from its N-th use (default ${DEFAULT-VALUE})")
    int admitAfter;

    @Option(names = "--disk-scan-wait", defaultValue = "10", paramLabel = "SECONDS",
            description = "at start, wait up to this long for the scan of existing files (default ${DEFAULT-VALUE}; "
                    + "0: start at once, chunks not scanned yet are misses)")
    double scanWait;

    /** The disk tier's directory, or null if there is no disk tier. */
    public Path dir() {
        return dir;
    }

    /**
     * Waits up to {@code --disk-scan-wait} for the disk tier's scan of existing files (nothing to
     * wait for without offloading), then ends the scan's progress line on a terminal.
     */
    public void awaitScan(io.kvtier.engine.Engine engine, boolean terminal) {
        if (engine.offload() != null && !scanWait().isZero()) {
            engine.offload().awaitDiskScan(scanWait());
            if (dir() != null && terminal) {
                System.err.println(); // end the scan's progress line
            }
        }
    }

    /** How long to wait for the restart scan (zero: not at all). */
    public Duration scanWait() {
        if (!(scanWait >= 0) || scanWait > 86_400) {
            throw new BadInputException("--disk-scan-wait must be between 0 and 86400 seconds, got " + Checks.shown(scanWait));
        }
        return Duration.ofMillis((long) (scanWait * 1000));
    }

    /**
     * The disk tier, or null without {@code --disk-cache-dir}.
     *
     * @param terminal whether the restart scan draws a progress line on stderr
     * @throws BadInputException for a bad value, or a disk flag given without {@code --disk-cache-dir}
     */
    public OffloadSetup.DiskSetup setup(boolean terminal) {
        scanWait();
        Checks.atLeast(admitAfter, 1, "--disk-admit-after");
        Checks.needs(mixee, dir != null, "--disk-cache-dir", "--disk-cache-bytes", "--disk-write-policy", "--disk-fsync",
                "--disk-admit-after", "--disk-scan-wait");
        if (dir == null) {
            return null;
        }
        Checks.directory(dir, "--disk-cache-dir");
        DiskWritePolicy policy;
        DiskFsync sync;
        try {
            policy = DiskWritePolicy.parse(writePolicy);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--disk-write-policy must be through or on-evict, got '" + writePolicy + "'");
        }
        try {
            sync = DiskFsync.parse(fsync);
        } catch (IllegalArgumentException e) {
            throw new BadInputException("--disk-fsync must be none, data or data-and-dir, got '" + fsync + "'");
        }
        long budget = Sizes.parseBytes(bytes, "--disk-cache-bytes");
        if (budget < 1) { // zero would be a disk tier that can hold nothing
            throw new BadInputException("--disk-cache-bytes must be at least 1 byte, got '" + bytes
                    + "' (leave out --disk-cache-dir for no disk tier)");
        }
        return new OffloadSetup.DiskSetup(dir, budget, policy, sync, admitAfter,
                terminal ? p -> System.err.print("\r" + p.line()) : null, line -> System.err.println("kvtier: " + line));
    }
}
