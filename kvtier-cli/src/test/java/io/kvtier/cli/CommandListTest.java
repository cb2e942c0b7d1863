package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code --version} and {@code -V}, listed in every help page, print the version on every
 * (sub)command (trial26: they printed nothing); a missing command lists every visible one.
 */
class CommandListTest {

    /** A mistyped command or flag names the nearest ones (a new user's "genrate" and "--max-token" did not). */
    @Test
    void aMistypedCommandOrFlagNamesTheNearest() {
        CliRun typo = CliRun.of("genrate");
        assertThat(typo.code()).isEqualTo(2);
        assertThat(typo.err().strip()).startsWith("kvtier: unknown command 'genrate'; did you mean ")
                .contains("generate").endsWith("? (see --help)");
        CliRun word = CliRun.of("foo");
        assertThat(word.code()).isEqualTo(2);
        assertThat(word.err().strip()).isEqualTo(
                "kvtier: unknown command 'foo': generate, serve, kv-events, replay, make-model or bench (see --help)");
        CliRun bench = CliRun.of("bench", "foo");
        assertThat(bench.code()).isEqualTo(2);
        assertThat(bench.err().strip()).isEqualTo(
                "kvtier: unknown benchmark 'foo': generate, offload, scheduler or serve (see --help)");
        CliRun flag = CliRun.of("generate", "--max-token", "3");
        assertThat(flag.code()).isEqualTo(2);
        assertThat(flag.err().strip()).contains("'--max-token'").contains("did you mean").contains("--max-tokens")
                .endsWith("? (see --help)").doesNotContain("\n");
    }

    @Test
    void aMissingCommandListsEveryVisibleCommand() {
        CliRun r = CliRun.of();
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: missing command: generate, serve, kv-events, replay, make-model or bench (see --help)"
                + System.lineSeparator());
        CliRun bench = CliRun.of("bench");
        assertThat(bench.code()).isEqualTo(2);
        assertThat(bench.err()).startsWith("kvtier: missing benchmark: generate, offload, scheduler or serve (see --help)");
    }

    @Test
    void everyCommandPrintsTheVersion() {
        String want = CliRun.of("--version").out();
        assertThat(want.strip()).isEqualTo("kvtier 0.1.0");
        for (List<String> cmd : List.of(List.of("generate"), List.of("serve"), List.of("replay"), List.of("make-model"),
                List.of("kv-events"), List.of("bench"), List.of("bench", "generate"), List.of("bench", "offload"),
                List.of("bench", "scheduler"), List.of("bench", "serve"))) {
            for (String flag : List.of("--version", "-V")) {
                List<String> args = new java.util.ArrayList<>(cmd);
                args.add(flag);
                CliRun r = CliRun.of(args.toArray(String[]::new));
                assertThat(r.code()).as(args + ": " + r.err()).isZero();
                assertThat(r.out()).as(args.toString()).isEqualTo(want);
                assertThat(r.err()).as(args.toString()).isEmpty();
            }
        }
    }
}
