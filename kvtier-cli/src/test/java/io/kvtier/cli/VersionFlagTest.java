package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --version} and {@code -V}, listed in every help page, print the version on every (sub)command (trial26: they printed nothing). */
class VersionFlagTest {

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
