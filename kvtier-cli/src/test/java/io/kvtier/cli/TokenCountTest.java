package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.kvtier.engine.ReferenceRecords;
import java.io.IOException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * Every flag that counts tokens takes the rule of token counts, as replay's tier sizes do: {@code 4k}
 * = 4,000, {@code 4Ki} = 4,096 ({@code --max-tokens 4k} was "'4k' is not a whole number").
 */
class TokenCountTest {

    private static final String WHY = " is not a whole number of tokens up to 2147483647 (e.g. 4096, 4k, 4Ki, 1M)";

    @TempDir
    Path dir;

    @Test
    void suffixesArePowersOf1000And1024AndAPlainNumberIsWhole() {
        TokenCount c = new TokenCount();
        assertThat(c.convert("4096")).isEqualTo(4096);
        assertThat(c.convert("4k")).isEqualTo(4000);
        assertThat(c.convert("4Ki")).isEqualTo(4096);
        assertThat(c.convert("1.5k")).isEqualTo(1500);
        assertThat(c.convert("2M")).isEqualTo(2_000_000);
        assertThat(c.convert("1Gi")).isEqualTo(1_073_741_824);
        assertThat(c.convert("-1")).as("the flag's own range check refuses it in its words").isEqualTo(-1);
        for (String bad : new String[] {"1.5", "4x", "k", "", "3G", "2Gi"}) {
            assertThatThrownBy(() -> c.convert(bad)).as(bad).isInstanceOf(CommandLine.TypeConversionException.class)
                    .hasMessage("'" + bad + "'" + WHY);
        }
    }

    @Test
    void aValueThatIsNoCountIsOneLineNamingTheFlag() {
        String model = ReferenceRecords.model().toString();
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--max-batch-tokens", "4x"),
                "--max-batch-tokens: '4x'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--block-size", "1.5"),
                "--block-size: '1.5'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "scheduler", "--prompt-tokens", "1.5"), "--prompt-tokens: '1.5'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "offload", "--prompt-tokens", "many"), "--prompt-tokens: 'many'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "serve", "--system-tokens", "3G"), "--system-tokens: '3G'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "serve", "--user-tokens", "x"), "--user-tokens: 'x'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("make-model", dir.resolve("m.bin").toString(), "--seq-len", "1.5"),
                "--seq-len: '1.5'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("replay", "--max-tokens", "1x"), "--max-tokens: '1x'" + WHY);
    }

    @Test
    void aSuffixedCountReachesTheRun() throws IOException {
        Path m = dir.resolve("m.bin");
        CliRun made = CliRun.of("make-model", m.toString(), "--seq-len", "1Ki", "--dim", "64", "--hidden-dim", "64", "--heads", "4",
                "--kv-heads", "4", "--layers", "1", "--vocab", "512");
        assertThat(made.code()).as(made.err()).isZero();
        assertThat(made.out() + made.err()).contains("seq 1024");
        Path json = dir.resolve("g.json");
        CliRun r = CliRun.of("generate", "--model", m.toString(), "--prompt", "Once", "--max-tokens", "0.002k", "--host-cache-bytes", "0",
                "--block-size", "1k", "--max-batch-tokens", "2Ki", "--stats-json", json.toString());
        assertThat(r.code()).as(r.err()).isZero();
        var stats = new ObjectMapper().readTree(json.toFile());
        assertThat(stats.get("block_size").asInt()).isEqualTo(1000);
        assertThat(stats.get("generated_tokens").asInt()).isEqualTo(2);
    }
}
