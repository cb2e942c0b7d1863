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
}
