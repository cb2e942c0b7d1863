package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import picocli.CommandLine;
import org.junit.jupiter.api.Test;

/** {@code serve}'s listening address as a user may write it (trial21). */
class ServeOptionsTest {

    private static ServeOptions parse(String... args) {
        return CommandLine.populateCommand(new ServeOptions(), args);
    }

    @Test
    void anIpv6AddressInUrlBracketsIsTheAddress() {
        // The start line adds the brackets of a URL once: [[::1]] came from a host kept with its own.
        assertThat(parse("--host", "[::1]").config().host()).isEqualTo("::1");
        assertThat(parse("--host", "::1").config().host()).isEqualTo("::1");
    }

    @Test
    void everyLoopbackAddressIsThisMachines() {
        assertThat(parse("--host", "127.0.0.2").config().host()).isEqualTo("127.0.0.2");
        assertThatThrownBy(() -> parse("--host", "192.0.2.7").config()).isInstanceOf(BadInputException.class)
                .hasMessage("--host 192.0.2.7: 192.0.2.7 is not an address of this machine");
        assertThatThrownBy(() -> parse("--host", "[]").config()).isInstanceOf(BadInputException.class)
                .hasMessageStartingWith("--host []: ");
    }

    /** A body is read into one Java array: 3G was accepted, and such a body could never be read. */
    @Test
    void aBodyLimitBeyondWhatTheServerCanReadIsRefused() {
        assertThat(parse("--max-body-bytes", "2147483639").config().maxBodyBytes()).isEqualTo(io.kvtier.server.ServerConfig.MAX_BODY_BYTES);
        for (String tooLarge : new String[] {"2147483640", "2G", "3G"}) {
            assertThatThrownBy(() -> parse("--max-body-bytes", tooLarge).config()).isInstanceOf(BadInputException.class)
                    .hasMessage("--max-body-bytes must be at most 2147483639 bytes (2 GiB less 9: the largest body the server can "
                            + "read, into one Java array), got " + tooLarge);
        }
        assertThatThrownBy(() -> io.kvtier.server.ServerConfig.loopback(0).withMaxBodyBytes(1L << 31))
                .isInstanceOf(IllegalArgumentException.class).hasMessage("max body bytes must be in 1..2147483639, got 2147483648");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("serve", "--max-body-bytes", "3G"), "--max-body-bytes must be at most "
                + "2147483639 bytes (2 GiB less 9: the largest body the server can read, into one Java array), got 3G");
    }
}
