package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvtier.kv.BlockKey;
import io.kvtier.telemetry.KvEventEncoder;
import io.kvtier.telemetry.KvEventPublisher;
import io.kvtier.tier.KvEvent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * msgpack-java reads and writes through {@code sun.misc.Unsafe} unless told otherwise, and JDK 24+
 * warns on its first use (four lines on standard error). A fresh JVM shows it: {@code serve} that
 * encodes KV events and {@code kv-events} that decodes them, each in a child process, print no
 * such warning.
 */
class MsgpackUnsafeWarningTest {

    private static final BlockKey SEED = new BlockKey(0, 0, 0, 0);

    @Test
    void kvEventsDecodesWithoutUnsafe(@TempDir Path dir) throws Exception {
        KvEventEncoder enc = new KvEventEncoder(SEED, 16, 16, KvEventEncoder.HashFormat.INT, 0);
        try (KvEventPublisher pub = new KvEventPublisher(new KvEventPublisher.Config("tcp://127.0.0.1:*", "tcp://127.0.0.1:*", "kv"), enc)) {
            for (int i = 0; i < 2; i++) {
                pub.publish(List.of(new KvEvent.BlockStored(i, List.of(new BlockKey(7, 7, 7, i)), SEED, "device", List.of(i))));
            }
            while (pub.published() < 2) {
                Thread.sleep(5);
            }
            Path err = dir.resolve("err.txt");
            Process p = ChildCli.start(err, "kv-events", "--kv-events-endpoint", pub.endpoint(),
                    "--kv-events-replay-endpoint", pub.replayEndpoint(), "--kv-events-topic", "kv", "--count", "2");
            try {
                String out = new String(p.getInputStream().readAllBytes());
                assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
                assertThat(p.exitValue()).as(ChildCli.stderr(err)).isZero();
                assertThat(out.lines()).hasSize(2).allSatisfy(l -> assertThat(l).contains("\"BlockStored\""));
                assertThat(ChildCli.stderr(err)).doesNotContain("sun.misc.Unsafe").isEmpty();
            } finally {
                p.destroyForcibly();
            }
        }
    }

    @Test
    void serveEncodesKvEventsWithoutUnsafe(@TempDir Path dir) throws Exception {
        Path err = dir.resolve("err.txt");
        Process p = ChildCli.start(err, "serve", "--port", "0", "--threads", "1", "--host-cache-bytes", "4M",
                "--kv-events-endpoint", "tcp://127.0.0.1:*");
        try {
            p.getInputStream().close();
            int port = -1;
            Pattern serving = Pattern.compile("kvtier: serving \\S+ on http://127\\.0\\.0\\.1:(\\d+)/v1");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (port < 0 && p.isAlive() && System.nanoTime() < deadline) {
                Matcher m = serving.matcher(Files.readString(err));
                if (m.find()) {
                    port = Integer.parseInt(m.group(1));
                } else {
                    Thread.sleep(50);
                }
            }
            assertThat(port).as("the server's start line; stderr:\n" + Files.readString(err)).isPositive();
            // 40 prompt tokens fill two blocks of 16: the engine reports them stored, the publisher encodes them.
            StringBuilder ids = new StringBuilder("[1");
            for (int i = 1; i < 40; i++) {
                ids.append(", ").append(100 + i);
            }
            HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(
                    URI.create("http://127.0.0.1:" + port + "/v1/completions")).POST(HttpRequest.BodyPublishers.ofString(
                    "{\"prompt\": " + ids + "], \"max_tokens\": 2}")).build(), HttpResponse.BodyHandlers.ofString());
            assertThat(r.statusCode()).as(r.body()).isEqualTo(200);
            p.destroy(); // SIGTERM: the publisher encodes and sends what is queued, then the JVM exits
            assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
            assertThat(ChildCli.stderr(err)).contains("kvtier: stopped").doesNotContain("sun.misc.Unsafe");
        } finally {
            p.destroyForcibly();
        }
    }
}
