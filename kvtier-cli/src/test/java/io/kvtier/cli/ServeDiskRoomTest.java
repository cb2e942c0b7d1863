package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.kvtier.engine.ReferenceRecords;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * serve's /metrics gave the disk tier's capacity from a budget beyond the filesystem with nothing
 * to say so, where generate's summary adds {@code (the filesystem holds about N)}: the capacity
 * metric's HELP says it, from the same code, and the start says the budget is too large, as
 * generate's does. A real server process: the budget is 100 GiB beyond this filesystem's free space.
 */
class ServeDiskRoomTest {

    @TempDir
    Path dir;

    private static final Pattern SERVING = Pattern.compile("kvtier: serving \\S+ on http://127\\.0\\.0\\.1:(\\d+)/v1");
    private static final Pattern HELP = Pattern.compile("# HELP kvtier:tier_chunks_capacity Chunk slots of an offload tier\\. "
            + "The disk tier's are its --disk-cache-bytes budget's \\(the filesystem holds about (\\d+)\\)\\.\n");
    private static final Pattern DISK_CAPACITY = Pattern.compile("kvtier:tier_chunks_capacity\\{[^}]*tier=\"disk\"\\} ([0-9.E]+)");

    @Test
    void theCapacityMetricSaysWhatTheFilesystemHolds() throws Exception {
        long budget = Files.getFileStore(dir).getUsableSpace() + (100L << 30);
        assumeTrue(budget < 40L << 40, "a disk tier of at most 2^31 chunk slots (48 TiB of 24 KiB files)");
        Path err = dir.resolve("err.txt");
        Path kv = dir.resolve("kv");
        Process p = ChildCli.start(err, "serve", "--port", "0", "--threads", "1", "--model", ReferenceRecords.model().toString(),
                "--tokenizer", ReferenceRecords.tokenizer().toString(), "--host-cache-bytes", "4M", "--disk-cache-dir", kv.toString(),
                "--disk-cache-bytes", String.valueOf(budget));
        try {
            int port = port(p, err);
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port
                    + "/metrics")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).isEqualTo(200);
            Matcher help = HELP.matcher(r.body());
            assertThat(help.find()).as(r.body()).isTrue();
            Matcher capacity = DISK_CAPACITY.matcher(r.body());
            assertThat(capacity.find()).as(r.body()).isTrue();
            long slots = (long) Double.parseDouble(capacity.group(1));
            assertThat(slots).as("the budget's slots of 24 KiB").isEqualTo(budget / (24 << 10));
            assertThat(Long.parseLong(help.group(1))).isPositive().isLessThan(slots);
            assertThat(ChildCli.stderr(err)).containsOnlyOnce("kvtier: --disk-cache-bytes " + budget + " is more than the filesystem of "
                    + kv + " holds: about ");
        } finally {
            ChildCli.terminateWithin(p, 60);
        }
    }

    private static int port(Process p, Path err) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (p.isAlive() && System.nanoTime() < deadline) {
            Matcher m = SERVING.matcher(Files.readString(err));
            if (m.find()) {
                return Integer.parseInt(m.group(1));
            }
            Thread.sleep(50);
        }
        throw new AssertionError("no serving line; stderr:\n" + Files.readString(err));
    }
}
