package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
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
 * context; only flags given are named; without the host tier nothing is refused. Trial 25b: a chunk as
 * long as the context never hits (a hit leaves a prompt token to compute), so the default chunk is at
 * most context - 1; the refusal advises only what the flags given allow.
 */
class ShortContextChunkTest {

    @TempDir
    Path dir;

    private Path model;

    @BeforeEach
    void makeModel() {
        model = makeModel(8);
    }

    private Path makeModel(int seqLen) {
        Path m = dir.resolve("m" + seqLen + ".bin");
        CliRun made = CliRun.of("make-model", m.toString(), "--seq-len", String.valueOf(seqLen), "--dim", "64", "--hidden-dim", "64",
                "--heads", "4", "--kv-heads", "4", "--layers", "1", "--vocab", "512");
        assertThat(made.code()).as(made.err()).isZero();
        return m;
    }

    private CliRun generate(String... args) {
        return generateOn(model, "Once", args);
    }

    private static CliRun generateOn(Path model, String prompt, String... args) {
        List<String> all = new ArrayList<>(List.of("generate", "--model", model.toString(), "--prompt", prompt, "--max-tokens", "2"));
        all.addAll(List.of(args));
        return CliRun.of(all.toArray(String[]::new));
    }

    private JsonNode stats(Path model, String prompt, String... args) throws IOException {
        Path json = dir.resolve("g.json");
        List<String> all = new ArrayList<>(List.of(args));
        all.addAll(List.of("--stats-json", json.toString()));
        CliRun r = generateOn(model, prompt, all.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isZero();
        return new ObjectMapper().readTree(json.toFile());
    }

    @Test
    void theDefaultChunkIsLoweredBelowTheContextWithTheHostTier() throws IOException {
        assertThat(stats(model, "Once").get("block_size").asInt()).isEqualTo(4);
        Path m16 = makeModel(16);
        assertThat(stats(m16, "Once").get("block_size").asInt()).isEqualTo(8); // the default 16 is the whole context
        assertThat(stats(m16, "Once", "--blocks-per-chunk", "2").get("block_size").asInt()).isEqualTo(4);
    }

    /** The trial's case: a 12-token context made block 12, and the repeated 12-token prompt never hit. */
    @Test
    void aRepeatedPromptHitsTheHostTierOnATwelveTokenContext() throws IOException {
        Path m12 = makeModel(12);
        String prompt = "Once upon a time there was a little girl"; // 12 tokens with BOS: the whole context
        JsonNode s = stats(m12, prompt, "--prompt", prompt, "--sequential", "--clear-device-cache-between");
        assertThat(s.get("block_size").asInt()).isEqualTo(8);
        assertThat(s.get("prompt_tokens").asInt()).isEqualTo(24);
        assertThat(s.get("external_hit_tokens").get("host").asInt()).isEqualTo(8);
    }

    @Test
    void withoutTheHostTierAnyBlockRuns() {
        CliRun r = generate("--host-cache-bytes", "0", "--block-size", "16");
        assertThat(r.code()).as(r.err()).isZero();
    }

    private static final String WHY = " leaves no room for a host hit in the model's context of 8 tokens: a hit reuses whole "
            + "chunks and leaves at least one prompt token to compute, so a chunk must be at most 7 tokens; ";

    @Test
    void flagsGivenAreNamedAloneWhenAChunkCannotFit() {
        assertOneLineExit2(generate("--block-size", "16"), "kvtier: --block-size 16" + WHY + "give a smaller --block-size, or --host-cache-bytes 0");
        assertOneLineExit2(generate("--block-size", "8"), "kvtier: --block-size 8" + WHY + "give a smaller --block-size, or --host-cache-bytes 0");
        assertOneLineExit2(generate("--blocks-per-chunk", "16"), "kvtier: --blocks-per-chunk 16 (blocks of at least 1 token)" + WHY
                + "give a smaller --blocks-per-chunk");
        assertOneLineExit2(generate("--blocks-per-chunk", "2", "--block-size", "4"), "kvtier: --blocks-per-chunk 2 x --block-size 4"
                + WHY + "give a smaller --block-size or --blocks-per-chunk");
        assertOneLineExit2(generate("--blocks-per-chunk", "8", "--block-size", "1"), "kvtier: --blocks-per-chunk 8 x --block-size 1"
                + WHY + "give a smaller --blocks-per-chunk");
    }

    /** "or --host-cache-bytes 0" led to a second refusal where the flags given need the host tier. */
    @Test
    void turningTheHostTierOffIsAdvisedOnlyWhereItWouldBeAccepted() {
        String line = "kvtier: --block-size 16" + WHY + "give a smaller --block-size";
        assertOneLineExit2(generate("--host-cache-chunks", "4", "--block-size", "16"), line);
        assertOneLineExit2(generate("--disk-cache-dir", dir.resolve("disk").toString(), "--block-size", "16"), line);
        assertOneLineExit2(generate("--prefill-priority", "on", "--block-size", "16"), line);
        assertOneLineExit2(CliRun.of("bench", "serve", "--model", model.toString(), "--turns", "1", "--system-tokens", "1",
                "--user-tokens", "1", "--max-tokens", "1", "--conversations", "1", "--block-size", "16"), line);
        // The advice taken: each accepted.
        assertThat(generate("--host-cache-chunks", "4", "--block-size", "4").code()).isZero();
        assertThat(generate("--host-cache-bytes", "0", "--block-size", "16").code()).isZero();
    }

    /**
     * The advice and the refusals come from one predicate: the remote tier's flag refuses the advice as
     * it refuses --host-cache-bytes 0, and --host-cache-chunks 0 (the default, deprecated) allows both.
     */
    @Test
    void theAdviceFollowsTheRefusalsOfTheHostTierOff() {
        String url = "redis://127.0.0.1:1"; // never reached: both runs stop before the engine starts
        assertOneLineExit2(generate("--remote-url", url, "--block-size", "16"), "kvtier: --block-size 16" + WHY + "give a smaller --block-size");
        assertOneLineExit2(generate("--remote-url", url, "--host-cache-bytes", "0"),
                "kvtier: --remote-url needs the host tier: the remote tier sits behind it (--host-cache-bytes > 0)");
        CliRun zeroChunks = generate("--host-cache-chunks", "0", "--block-size", "16");
        assertThat(zeroChunks.code()).as(zeroChunks.err()).isEqualTo(2);
        assertThat(zeroChunks.err().strip().lines().toList().getLast())
                .isEqualTo("kvtier: --block-size 16" + WHY + "give a smaller --block-size, or --host-cache-bytes 0");
        CliRun taken = generate("--host-cache-chunks", "0", "--host-cache-bytes", "0", "--block-size", "16");
        assertThat(taken.code()).as(taken.err()).isZero();
    }

    /**
     * A 1-token context leaves no chunk a hit (a hit leaves a prompt token to compute): blocks of 1
     * token ran as a host tier that never hits, with no word. A flag asking for the tier is refused,
     * named; the default tier and no tier run as before.
     */
    @Test
    void aOneTokenContextRefusesTheFlagsThatAskForTheHostTier() throws IOException {
        Path m1 = makeModel(1);
        String why = " asks for the host tier, but the model's context of 1 token leaves no room for a host hit: a hit reuses whole "
                + "chunks and leaves at least one prompt token to compute, so no chunk fits";
        assertOneLineExit2(generateOn(m1, "", "--host-cache-bytes", "1G"), "kvtier: --host-cache-bytes 1G" + why + "; give --host-cache-bytes 0");
        // Each refusal says what to leave out (they gave no advice), and not "a chunk must be at most 0 tokens".
        assertOneLineExit2(generateOn(m1, "", "--eviction", "arc"), "kvtier: --eviction" + why + "; leave out --eviction");
        assertOneLineExit2(generateOn(m1, "", "--eviction", "lru"), "kvtier: --eviction" + why + "; leave out --eviction");
        assertOneLineExit2(generateOn(m1, "", "--host-cache-chunks", "4"), "kvtier: --host-cache-chunks" + why + "; leave out --host-cache-chunks");
        assertOneLineExit2(generateOn(m1, "", "--disk-cache-dir", dir.resolve("d").toString()),
                "kvtier: --disk-cache-dir" + why + "; leave out --disk-cache-dir");
        assertOneLineExit2(generateOn(m1, "", "--remote-url", "redis://127.0.0.1:1"), "kvtier: --remote-url" + why + "; leave out --remote-url");
        String none = " leaves no room for a host hit in the model's context of 1 token: a hit reuses whole chunks and leaves at least one "
                + "prompt token to compute, so no chunk fits a context of 1 token (no hit is possible); leave out ";
        for (String bs : new String[] {"1", "2"}) {
            assertOneLineExit2(generateOn(m1, "", "--block-size", bs), "kvtier: --block-size " + bs + none
                    + "--block-size, or give --host-cache-bytes 0");
        }
        assertOneLineExit2(generateOn(m1, "", "--blocks-per-chunk", "1"), "kvtier: --blocks-per-chunk 1 (blocks of at least 1 token)" + none
                + "--blocks-per-chunk, or give --host-cache-bytes 0");
        assertOneLineExit2(generateOn(m1, "", "--blocks-per-chunk", "2"), "kvtier: --blocks-per-chunk 2 (blocks of at least 1 token)" + none
                + "--blocks-per-chunk");
        assertOneLineExit2(generateOn(m1, "hi"), "kvtier: prompt 1 has 2 bytes, at least 2 tokens, more than the model's context of 1 token; shorten it (--prompt)");
        assertThat(stats(m1, "").get("block_size").asInt()).isEqualTo(1);
        assertThat(stats(m1, "", "--host-cache-bytes", "256M").get("block_size").asInt()).isEqualTo(1);
        assertThat(stats(m1, "", "--host-cache-bytes", "0", "--block-size", "16").get("block_size").asInt())
                .isEqualTo(16);
    }

    private static void assertOneLineExit2(CliRun r, String line) {
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err().strip().lines().toList()).as(r.err()).containsExactly(line);
    }
}
