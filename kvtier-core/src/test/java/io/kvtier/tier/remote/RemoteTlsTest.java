package io.kvtier.tier.remote;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code rediss://} against a real redis-server speaking TLS (a self-signed certificate for
 * 127.0.0.1 made for the test): values round-trip when the client trusts the certificate's CA
 * ({@code --remote-ca-file}); an untrusted certificate or another CA turn the tier off with one
 * line naming the cause and the flag, without a secret.
 */
class RemoteTlsTest {

    @TempDir
    Path dir;

    private final List<String> warnings = new CopyOnWriteArrayList<>();

    private LettuceRemoteStore open(String url, Path caFile) {
        return LettuceRemoteStore.open(RemoteSettings.of(List.of(url), false, "tls", "not-needed")
                .withTimeout(Duration.ofSeconds(10)).withCaFile(caFile), warnings::add);
    }

    @Test
    void valuesRoundTripOverTlsWithTheServersCa() throws Exception {
        TlsFiles tls = TlsFiles.create(dir, "server");
        try (OwnRedis redis = OwnRedis.startTls(dir.resolve("r"), tls.cert(), tls.key());
             LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of(redis.url()), false, "tls", null)
                     .withTimeout(Duration.ofSeconds(10)).withCaFile(tls.cert()), warnings::add)) {
            assertThat(redis.url()).startsWith("rediss://");
            byte[] value = new byte[300_000];
            new java.util.Random(5).nextBytes(value);
            s.set("kvt:v1:tls:x", value).get();
            assertThat(s.get("kvt:v1:tls:x").get()).isEqualTo(value);
            assertThat(s.touch("kvt:v1:tls:x").get()).isTrue();
            assertThat(s.breakerState()).isEqualTo("closed");
        }
        assertThat(warnings).isEmpty();
    }

    @Test
    void anUntrustedCertificateTurnsTheTierOffWithOneLine() throws Exception {
        TlsFiles tls = TlsFiles.create(dir, "server");
        TlsFiles other = TlsFiles.create(dir, "other");
        try (OwnRedis redis = OwnRedis.startTls(dir.resolve("r"), tls.cert(), tls.key())) {
            try (LettuceRemoteStore s = open(redis.url(), null)) {
                assertThat(s.breakerState()).isEqualTo("off");
            }
            try (LettuceRemoteStore s = open(redis.url(), other.cert())) {
                assertThat(s.breakerState()).isEqualTo("off");
            }
        }
        assertThat(warnings).hasSize(2);
        assertThat(warnings.get(0)).startsWith("remote tier off: TLS handshake with " + "rediss://127.0.0.1:")
                .contains("--remote-ca-file").doesNotContain("not-needed");
        assertThat(warnings.get(1)).contains("check that the server speaks TLS on that port and that --remote-ca-file "
                + other.cert() + " signed its certificate").doesNotContain("not-needed");
    }

    /**
     * trial 10 #2: a scheme that does not match the port. A plain URL at a TLS port reads as
     * "Connection reset", which gets a hint; a TLS URL at a plain port gets no answer to its
     * handshake, and closing the store then is not reported as a TLS failure.
     */
    @Test
    void aSchemeThatDoesNotMatchThePortIsNamed() throws Exception {
        TlsFiles tls = TlsFiles.create(dir, "server");
        try (OwnRedis redis = OwnRedis.startTls(dir.resolve("r"), tls.cert(), tls.key());
             LettuceRemoteStore s = open("redis://127.0.0.1:" + redis.port(), null)) {
            assertThat(s.breakerState()).isEqualTo("open");
        }
        try (OwnRedis plain = OwnRedis.start(dir.resolve("p"));
             LettuceRemoteStore s = LettuceRemoteStore.open(RemoteSettings.of(List.of("rediss://127.0.0.1:" + plain.port()), false,
                     "tls", null).withTimeout(Duration.ofSeconds(1)), warnings::add)) {
            // The plain server waits for the end of a command that never comes: the handshake
            // gets no answer, and the tier stays unavailable, retrying.
            assertThat(s.breakerState()).isEqualTo("open");
        }
        // Closing cut the pending handshake short: no "off" line after the fact (trial 10 #2a).
        assertThat(warnings).hasSize(2);
        assertThat(warnings.get(0)).startsWith("remote tier: cannot reach redis://127.0.0.1:")
                .contains("(a TLS port? use rediss://); every lookup misses until it answers");
        assertThat(warnings.get(1)).startsWith("remote tier: cannot reach rediss://127.0.0.1:")
                .endsWith("every lookup misses until it answers");
    }
}
