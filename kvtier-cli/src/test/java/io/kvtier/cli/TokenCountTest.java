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

    private static final String WHY = " is not a count of tokens (e.g. 4096, 4k, 4Ki, 1M)";

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
        assertThat(c.convert("0.000249M")).as("exact, not 248 as in doubles").isEqualTo(249);
        for (String bad : new String[] {"4x", "k", "", "1,2", "1e3", "12d", "1m"}) {
            assertThatThrownBy(() -> c.convert(bad)).as(bad).isInstanceOf(CommandLine.TypeConversionException.class)
                    .hasMessage("'" + bad + "'" + WHY);
        }
        for (String plain : new String[] {"1.5", "1.0", "2.00"}) {
            assertThatThrownBy(() -> c.convert(plain)).as("no decimal point without a suffix: %s", plain)
                    .hasMessage("'" + plain + "'" + WHY);
        }
        assertThat(c.convert("1.0k")).isEqualTo(1000);
        for (String big : new String[] {"3G", "2Gi", "2147483648"}) {
            assertThatThrownBy(() -> c.convert(big)).as(big).hasMessage("'" + big + "' is too large: at most 2,147,483,647 tokens");
        }
    }

    @Test
    void aValueThatIsNoCountIsOneLineNamingTheFlag() {
        String model = ReferenceRecords.model().toString();
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--max-batch-tokens", "4x"),
                "--max-batch-tokens: '4x'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--block-size", "1.5"),
                "--block-size: '1.5'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--max-tokens", "1.0"),
                "--max-tokens: '1.0'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "scheduler", "--prompt-tokens", "1.5"),
                "--prompt-tokens: '1.5'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "offload", "--prompt-tokens", "many"), "--prompt-tokens: 'many'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "serve", "--system-tokens", "3G"),
                "--system-tokens: '3G' is too large: at most 2,147,483,647 tokens");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("bench", "serve", "--user-tokens", "x"), "--user-tokens: 'x'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("make-model", dir.resolve("m.bin").toString(), "--seq-len", "1.5"),
                "--seq-len: '1.5'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("replay", "--max-tokens", "1x"), "--max-tokens: '1x'" + WHY);
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--max-tokens", "0.0129k"),
                "--max-tokens: '0.0129k' is 12.9 tokens, not a whole number");
        GgufCliErrorsTest.assertOneLineError(CliRun.of("generate", "--model", model, "--prompt", "hi", "--max-tokens", "0.0005k"),
                "--max-tokens: '0.0005k' is 0.5 tokens, not a whole number");
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
