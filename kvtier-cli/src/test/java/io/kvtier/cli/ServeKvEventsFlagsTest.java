package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ServerSocket;
import org.junit.jupiter.api.Test;

/** {@code serve}'s KV event flags: bad values and combinations exit 2 with one line naming the flag or the address. */
class ServeKvEventsFlagsTest {

    @Test
    void aReplayEndpointWithoutAnEndpointExits2() {
        CliRun r = CliRun.of("serve", "--port", "0", "--kv-events-replay-endpoint", "tcp://127.0.0.1:5558");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--kv-events-replay-endpoint needs --kv-events-endpoint");
        assertThat(r.err().strip().lines()).hasSize(1);
    }

    @Test
    void anUnknownHashFormatExits2() {
        CliRun r = CliRun.of("serve", "--port", "0", "--kv-events-endpoint", "tcp://127.0.0.1:*", "--kv-events-block-hash", "hex");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).contains("--kv-events-block-hash must be int or bytes, got 'hex'");
    }

    @Test
    void anEndpointInUseExits2NamingIt() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String endpoint = "tcp://127.0.0.1:" + taken.getLocalPort();
            CliRun r = CliRun.of("serve", "--port", "0", "--host-cache-bytes", "1M", "--kv-events-endpoint", endpoint);
            assertThat(r.code()).isEqualTo(2);
            // JeroMQ's own message is "Errno 48" (its BSD numbering), which names nothing to act on.
            assertThat(r.err()).contains("kvtier: --kv-events-endpoint " + endpoint + ": cannot bind: address already in use")
                    .doesNotContain("Errno");
            assertThat(r.err().strip().lines()).hasSize(1);
        }
    }

    @Test
    void aReplayEndpointInUseExits2NamingIt() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            String replay = "tcp://127.0.0.1:" + taken.getLocalPort();
            CliRun r = CliRun.of("serve", "--port", "0", "--host-cache-bytes", "1M", "--kv-events-endpoint", "tcp://127.0.0.1:*",
                    "--kv-events-replay-endpoint", replay);
            assertThat(r.code()).isEqualTo(2);
            assertThat(r.err()).contains("kvtier: --kv-events-replay-endpoint " + replay + ": cannot bind: address already in use")
                    .doesNotContain("Errno");
            assertThat(r.err().strip().lines()).hasSize(1);
        }
    }
}
