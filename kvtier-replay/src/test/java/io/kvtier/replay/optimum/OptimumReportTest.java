package io.kvtier.replay.optimum;

import static io.kvtier.replay.optimum.TestTraces.req;
import static io.kvtier.replay.optimum.TestTraces.trace;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class OptimumReportTest {

    @Test
    void reportsCeilingAndEachCapacity() {
        ChunkTrace t = trace(req(1100, 1, 2, 90), req(1100, 1, 2, 91), req(600, 3, 92), req(1100, 1, 2, 93),
                req(600, 3, 94));
        OptimumReport report = OptimumReport.of(t, HitRule.ENGINE, 1, 2);
        assertThat(report.requests()).isEqualTo(5);
        assertThat(report.promptTokens()).isEqualTo(3 * 1100 + 2 * 600);
        assertThat(report.references()).isEqualTo(8);
        assertThat(report.distinctChunks()).isEqualTo(3);
        assertThat(report.ceiling().hitChunks()).isEqualTo(5);
        assertThat(report.points()).extracting(OptimumReport.Point::capacityChunks).containsExactly(1L, 2L);
        assertThat(report.points().get(1).capacityTokens()).isEqualTo(1024);
        assertThat(report.points().get(0).lru().hitChunks()).isEqualTo(1);
        assertThat(report.points().get(0).belady().hitChunks()).isEqualTo(2);
        assertThat(report.points().get(1).lru().hitChunks()).isEqualTo(3);
        assertThat(report.points().get(1).belady().hitChunks()).isEqualTo(4);

        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        report.print(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        String text = bytes.toString(StandardCharsets.UTF_8);
        // 5 chunks of 512 over 4,500 prompt tokens; LRU 3 and Belady 4 chunks at capacity 2
        assertThat(text).contains("hand: 5 requests, 4,500 prompt tokens, 8 full-block references, 3 distinct")
                .contains("ceiling (ENGINE): 2,560 hit tokens = 0.5689")
                .containsPattern("\\s2\\s+1,024\\s+0\\.3413\\s+0\\.4551\\s+0\\.600\\s+0\\.800");
    }
}
