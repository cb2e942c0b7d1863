package io.kvtier.cli;

import static io.kvtier.cli.GgufCliErrorsTest.assertOneLineError;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * A value that is no whole number names the flag's own most, not its type's: a new user's trial
 * gave {@code bench offload --remote-mib-per-size 1.5} and read "not a whole number up to
 * 9223372036854775807" of a flag that takes at most 65536 ({@link Most}, read by {@link Main#describe}).
 */
class WholeNumberBoundsTest {

    @Test
    void aFlagWithItsOwnMostNamesIt() {
        assertOneLineError(CliRun.of("bench", "offload", "--remote-mib-per-size", "1.5"),
                "--remote-mib-per-size: '1.5' is not a whole number up to 65536");
        assertOneLineError(CliRun.of("bench", "offload", "--disk-mib-per-size", "1.5"),
                "--disk-mib-per-size: '1.5' is not a whole number up to 4194304");
        assertOneLineError(CliRun.of("serve", "--port", "80.5"), "--port: '80.5' is not a whole number up to 65535");
        assertOneLineError(CliRun.of("make-model", "--dim", "2k", "out.bin"), "--dim: '2k' is not a whole number up to 65536");
        assertOneLineError(CliRun.of("bench", "generate", "--threads", "x"), "--threads: 'x' is not a whole number up to "
                + Checks.mostThreads() + " (4 per core)");
    }

    @Test
    void aFlagWithoutOneTakesUpToItsTypesMost() {
        assertOneLineError(CliRun.of("bench", "scheduler", "--repeats", "1.5"), "--repeats: '1.5' is not a whole number up to 2147483647");
        assertOneLineError(CliRun.of("generate", "--prompt", "hi", "--seed", "x"),
                "--seed: 'x' is not a whole number up to 9223372036854775807");
    }

    /** The most a flag's help states ("at most 65536") is the one its refusal names: every such whole-number flag has a {@link Most}. */
    @Test
    void everyWholeNumberFlagWhoseHelpStatesAMostCarriesIt() {
        List<String> checked = new ArrayList<>();
        walk(new CommandLine(new Main()), checked);
        assertThat(checked).contains("--remote-mib-per-size 65536", "--disk-mib-per-size 4194304");
    }

    /** "at most 65536", not of a quantity with a unit ("at most 2 GiB of KV", the KV of --device-blocks). */
    private static final Pattern AT_MOST = Pattern.compile("at most (\\d+)(?!\\s*[A-Za-z^\\d])");

    private static void walk(CommandLine cli, List<String> checked) {
        for (CommandLine.Model.OptionSpec o : cli.getCommandSpec().options()) {
            Class<?> t = o.type();
            if (t != int.class && t != Integer.class && t != long.class && t != Long.class || o.converters().length > 0) {
                continue;
            }
            Matcher m = AT_MOST.matcher(String.join(" ", o.description()));
            if (m.find()) {
                assertThat(Main.most(o, Long.MAX_VALUE)).as(o.longestName() + " of " + cli.getCommandName()).isEqualTo(m.group(1));
                checked.add(o.longestName() + " " + m.group(1));
            }
        }
        for (CommandLine sub : cli.getSubcommands().values()) {
            walk(sub, checked);
        }
    }
}
