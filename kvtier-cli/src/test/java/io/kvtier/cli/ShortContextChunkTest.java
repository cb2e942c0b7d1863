package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A new user's trial: a model of an 8-token context was refused by generate for "--blocks-per-chunk 1
 * x --block-size 16", flags never given, even with offloading off. The default block now fits the
 * context; only flags given are named; without the host tier nothing is refused.
 */
class ShortContextChunkTest {

    @TempDir
    Path dir;

    private Path model;

    @BeforeEach
    void makeModel() {
        model = dir.resolve("m8.bin");
        CliRun made = CliRun.of("make-model", model.toString(), "--seq-len", "8", "--dim", "64", "--hidden-dim", "64",
                "--heads", "4", "--kv-heads", "4", "--layers", "1", "--vocab", "512");
        assertThat(made.code()).as(made.err()).isZero();
    }

    private CliRun generate(String... args) {
        List<String> all = new ArrayList<>(List.of("generate", "--model", model.toString(), "--prompt", "Once", "--max-tokens", "2"));
        all.addAll(List.of(args));
        return CliRun.of(all.toArray(String[]::new));
    }

    @Test
    void theDefaultBlockIsLoweredToTheContextWithTheHostTier() throws IOException {
        Path json = dir.resolve("g.json");
        CliRun r = generate("--stats-json", json.toString());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(new ObjectMapper().readTree(json.toFile()).get("block_size").asInt()).isEqualTo(8);
    }

    @Test
    void withoutTheHostTierAnyBlockRuns() {
        CliRun r = generate("--host-cache-bytes", "0", "--block-size", "16");
        assertThat(r.code()).as(r.err()).isZero();
    }

    @Test
    void flagsGivenAreNamedAloneWhenAChunkCannotFit() {
        assertOneLineExit2(generate("--block-size", "16"), "kvtier: --block-size 16 exceeds the model's context of 8 tokens: "
                + "the host tier could store nothing; give a smaller value, or --host-cache-bytes 0");
        assertOneLineExit2(generate("--blocks-per-chunk", "16"), "kvtier: --blocks-per-chunk 16 (blocks of at least 1 token) exceeds "
                + "the model's context of 8 tokens: the host tier could store nothing; give a smaller value, or --host-cache-bytes 0");
        assertOneLineExit2(generate("--blocks-per-chunk", "2", "--block-size", "8"), "kvtier: --blocks-per-chunk 2 x --block-size 8 "
                + "exceeds the model's context of 8 tokens: the host tier could store nothing; give a smaller value, or --host-cache-bytes 0");
    }

    private static void assertOneLineExit2(CliRun r, String line) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).containsExactly(line);
    }
}
