package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvtier.tier.remote.RedisServers;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@code bench offload --remote-url}'s throughput table against a real Redis, and the parsing of
 * redis-benchmark's figures (a run too short to time prints {@code inf}, never a figure here).
 */
@org.junit.jupiter.api.extension.ExtendWith(OneWarmUpRound.class) // each size's warm-up: one round
class RemoteBandwidthTest {

    /** redis-benchmark 7's {@code -t set,get --csv} output, a run too short to time giving {@code inf}. */
    @Test
    void redisBenchmarksCsvFiguresAreParsedAndInfIsInfinite() {
        String csv = """
                "test","rps","avg_latency_ms","min_latency_ms","p50_latency_ms","p95_latency_ms","p99_latency_ms","max_latency_ms"
                "SET","2285.71","2.642","0.496","0.567","8.583","8.583","8.583"
                "GET","inf","1.248","0.184","0.191","4.335","4.335","4.335"
                """;
        assertThat(RemoteBandwidth.requestsPerSecond(csv, "set")).isEqualTo(2285.71);
        assertThat(RemoteBandwidth.requestsPerSecond(csv, "get")).isEqualTo(Double.POSITIVE_INFINITY);
        assertThat(RemoteBandwidth.requestsPerSecond(csv, "lpush")).as("no line of it").isNaN();
        assertThat(RemoteBandwidth.requestsPerSecond("\"GET\",\"n/a\",\"0.000\"\n", "get")).as("no number").isNaN();
        assertThat(RemoteBandwidth.requestsPerSecond("\"GET\",\"Infinity\"\n", "get")).as("not redis-benchmark's inf").isNaN();
        assertThat(RemoteBandwidth.requestsPerSecond("", "get")).isNaN();
    }

    /** At least --remote-requests and --remote-mib-per-size's bytes, rounded up to a multiple of the pipeline (8). */
    @Test
    void valuesPerSizeAreTheLargerCountRoundedUpToTheWholePipeline() {
        assertThat(RemoteBandwidth.values(64 << 10, 256, 64L << 20)).isEqualTo(1024);
        assertThat(RemoteBandwidth.values(4 << 20, 256, 64L << 20)).isEqualTo(256);
        assertThat(RemoteBandwidth.values(4 << 20, 1, 1L << 20)).isEqualTo(8);
        assertThat(RemoteBandwidth.values(256 << 10, 12, 2L << 20)).isEqualTo(16);
        assertThat(RemoteBandwidth.values(3 << 20, 1, 10L << 20)).as("a partial value counts").isEqualTo(8);
    }

    /**
     * Four rows, the values of each size, every figure a finite positive MB/s, each ratio the
     * tier's figure over redis-benchmark's, and the tier's keys deleted after.
     */
    @Test
    void theTableHasEverySizeWithFiguresAndTheirRatios() {
        String url = RedisServers.standalone();
        CliRun r = CliRun.of("bench", "offload", "--remote-url", url, "--skip-bandwidth", "--skip-ttft",
                "--skip-decode", "--remote-requests", "12", "--remote-mib-per-size", "2", "--repeats", "1");
        assertThat(r.code()).as(r.err()).isZero();
        List<String> lines = r.out().lines().toList();
        assertThat(lines.getFirst()).startsWith("== remote tier throughput against redis://")
                .contains("MB/s: the tier one connection for GETs and smaller SETs and one for SETs of 128 KiB and more (256 KiB-4 MiB"
                        + " here), up to 16 SETs in flight; redis-benchmark one connection, 8 commands in flight (")
                .contains("median of 1 round; at least 12 values and 2 MiB per size, a multiple of 8 values").endsWith("==");
        // At least: 64 KiB, 2 MiB is 32 values; 256 KiB and up, 12 rounded up to 16; more until 0.2 s of each.
        assertTable(lines, new long[] {32, 16, 16, 16});
        assertThat(lines.getLast()).matches("warm-up of the tier: 64 KiB \\d+\\.\\d s( \\(still compiling\\))?, 256 KiB \\d+\\.\\d s( \\(still"
                + " compiling\\))?, 1024 KiB \\d+\\.\\d s( \\(still compiling\\))?, 4096 KiB \\d+\\.\\d s( \\(still compiling\\))? \\(each size: at"
                + " least 0 s, then until 0.5 s of whole runs passed with no JIT compilation or the next run would end past 0 s at the"
                + " longest run's time\\)");
        assertThat(r.out()).doesNotContain("decode with offloading").doesNotContain("time to first token");
    }

    /**
     * A new user's trial: {@code bench offload} could not reach a server with a password (no
     * {@code --remote-password-file}, {@code KVTIER_REMOTE_PASSWORD} ignored), and left
     * redis-benchmark's 4 MiB key behind. Now the tier and redis-benchmark both authenticate as the
     * URL's ACL user, the password is never printed, and the server ends with no key; a wrong
     * password is one line.
     */
    @Test
    void aPasswordFileReachesAnAclUserAndNothingIsLeftBehind(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        try (io.kvtier.tier.remote.OwnRedis r = io.kvtier.tier.remote.OwnRedis.start(dir.resolve("r"),
                "user bob on >bob-secret-pw ~* +@all", "user carol on >carol-pw ~kvt:v1:bench* +@all", "user default off")) {
            java.nio.file.Path pw = java.nio.file.Files.writeString(dir.resolve("pw"), "bob-secret-pw\n");
            String url = "redis://bob@127.0.0.1:" + r.port();
            CliRun ok = CliRun.of("bench", "offload", "--remote-url", url, "--remote-password-file", pw.toString(),
                    "--skip-bandwidth", "--skip-ttft", "--skip-decode", "--remote-requests", "8", "--remote-mib-per-size", "1",
                    "--repeats", "1");
            assertThat(ok.code()).as(ok.err()).isZero();
            assertThat(ok.out().lines().filter(l -> l.strip().matches("\\d+ KiB .*"))).hasSize(4);
            assertThat(ok.out() + ok.err()).doesNotContain("bob-secret-pw");
            assertThat(r.cli("--user", "bob", "--pass", "bob-secret-pw", "--no-auth-warning", "DBSIZE"))
                    .as("no tier key, no redis-benchmark key").isEqualTo("0");

            java.nio.file.Path wrong = java.nio.file.Files.writeString(dir.resolve("wrong"), "not-it");
            CliRun refused = CliRun.of("bench", "offload", "--remote-url", url, "--remote-password-file", wrong.toString(),
                    "--skip-bandwidth", "--skip-ttft", "--skip-decode");
            assertThat(refused.code()).isEqualTo(2);
            assertThat(refused.err()).startsWith("kvtier: --remote-url redis://***@127.0.0.1:" + r.port() + ": authentication failed (WRONGPASS")
                    .doesNotContain("not-it").hasLineCount(1);
            assertThat(refused.out()).isEmpty();

            // trial18: a user confined to the tier's keys got NOPERM after the table's header; now one line before it
            java.nio.file.Path carolPw = java.nio.file.Files.writeString(dir.resolve("carol"), "carol-pw");
            CliRun confined = CliRun.of("bench", "offload", "--remote-url", "redis://carol@127.0.0.1:" + r.port(),
                    "--remote-password-file", carolPw.toString(), "--skip-bandwidth", "--skip-ttft", "--skip-decode");
            assertThat(confined.code()).isEqualTo(2);
            assertThat(confined.err()).startsWith("kvtier: --remote-url redis://***@127.0.0.1:" + r.port()
                    + ": cannot write key:__rand_int__ (NOPERM").endsWith("): bench offload's tier writes kvt:v1:bench* keys and"
                    + " redis-benchmark writes key:__rand_int__, so its user's ACL must allow both\n").hasLineCount(1);
            assertThat(confined.out()).isEmpty();
            assertThat(r.cli("--user", "bob", "--pass", "bob-secret-pw", "--no-auth-warning", "DBSIZE"))
                    .as("the probe of the tier's keys deleted").isEqualTo("0");
        }
    }

    /**
     * The connection flags bench offload now shares with generate: {@code rediss://} with
     * {@code --remote-ca-file} reaches a TLS server on both sides (redis-benchmark had no
     * {@code --tls}), and a database in the URL is the one both sides write and clean (redis-benchmark
     * wrote database 0, where its key stayed).
     */
    @Test
    void aTlsServerWithItsCaFileAndADatabaseInTheUrl(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        io.kvtier.tier.remote.TlsFiles tls = io.kvtier.tier.remote.TlsFiles.create(dir, "server");
        try (io.kvtier.tier.remote.OwnRedis r = io.kvtier.tier.remote.OwnRedis.startTls(dir.resolve("r"), tls.cert(), tls.key())) {
            CliRun ok = CliRun.of("bench", "offload", "--remote-url", r.url() + "/3", "--remote-ca-file", tls.cert().toString(),
                    "--skip-bandwidth", "--skip-ttft", "--skip-decode", "--remote-requests", "8", "--remote-mib-per-size", "1",
                    "--repeats", "1");
            assertThat(ok.code()).as(ok.err()).isZero();
            assertTable(ok.out().lines().toList(), new long[] {16, 8, 8, 8});
            for (String db : List.of("0", "3")) {
                assertThat(r.cli("--tls", "--cacert", tls.cert().toString(), "-n", db, "DBSIZE")).as("keys left in db " + db)
                        .isEqualTo("0");
            }
        }
    }

    /**
     * A new user's trial: a password file for a server without a password passed the tier's check
     * (a nopass user takes any password) and failed in redis-benchmark's AUTH after the table's
     * header. Now redis-benchmark runs once before the header: one line saying to leave the
     * password out. A server that wants a password: where it goes when none was given, that the
     * one given was refused.
     */
    @Test
    void passwordsAreCheckedBeforeTheTableAndTheAdviceFitsWhatWasGiven(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        java.nio.file.Path pw = java.nio.file.Files.writeString(dir.resolve("pw"), "some-password");
        String[] skips = {"--skip-bandwidth", "--skip-ttft", "--skip-decode"};
        try (io.kvtier.tier.remote.OwnRedis open = io.kvtier.tier.remote.OwnRedis.start(dir.resolve("open"));
             io.kvtier.tier.remote.OwnRedis locked = io.kvtier.tier.remote.OwnRedis.start(dir.resolve("locked"), "requirepass pw-1")) {
            assertRefused("--remote-url " + open.url() + ": authentication failed (ERR AUTH <password> called without any password "
                    + "configured for the default user. Are you sure your configuration is correct?): the server has no password for "
                    + "user default: leave out --remote-password-file " + pw, "--remote-url", open.url(), "--remote-password-file",
                    pw.toString(), skips[0], skips[1], skips[2]);
            assertThat(open.cli("DBSIZE")).as("the checks' keys deleted").isEqualTo("0");
            CliRun none = CliRun.of("bench", "offload", "--remote-url", locked.url(), skips[0], skips[1], skips[2]);
            assertThat(none.err()).startsWith("kvtier: --remote-url " + locked.url() + ": authentication failed (NOAUTH ")
                    .endsWith("): the server wants a password: give it with --remote-password-file FILE (or "
                            + RemoteConnectionOptions.PASSWORD_ENV + ")\n");
            CliRun wrong = CliRun.of("bench", "offload", "--remote-url", locked.url(), "--remote-password-file", pw.toString(),
                    skips[0], skips[1], skips[2]);
            assertThat(wrong.err()).startsWith("kvtier: --remote-url " + locked.url() + ": authentication failed (WRONGPASS ")
                    .endsWith("): the server refused the password of --remote-password-file " + pw + " for user default (a wrong "
                            + "password, or a user that is disabled or not there)\n");
            for (CliRun r : List.of(none, wrong)) {
                assertThat(r.code()).isEqualTo(2);
                assertThat(r.out()).isEmpty();
                assertThat(r.err()).hasLineCount(1);
            }
        }
    }

    private static void assertRefused(String err, String... args) {
        List<String> all = new java.util.ArrayList<>(List.of("bench", "offload"));
        all.addAll(List.of(args));
        CliRun r = CliRun.of(all.toArray(String[]::new));
        assertThat(r.code()).as(r.err()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: " + err + "\n");
        assertThat(r.out()).as("nothing printed before the line").isEmpty();
    }

    @Test
    void theModelFlagIsRefusedWhenTheDecodeFiguresAreSkipped() {
        CliRun r = CliRun.of("bench", "offload", "--skip-decode", "--skip-bandwidth", "--skip-ttft", "--model", "x.bin");
        assertThat(r.code()).isEqualTo(2);
        assertThat(r.err()).isEqualTo("kvtier: --model has no effect with --skip-decode: the decode figures are skipped\n");
    }

    /**
     * The table's column header and four rows, one per size: the values of each side whole
     * pipelines and at least {@code least}, every figure a finite positive MB/s, each ratio the
     * tier's figure over redis-benchmark's.
     */
    /** Half a unit of a printed number's last digit: 0.5 for "412", 0.005 for "0.45". */
    private static double halfLastDigit(String printed) {
        int point = printed.indexOf('.');
        return 0.5 * Math.pow(10, point < 0 ? 0 : -(printed.length() - point - 1));
    }

    /** MB/s under 10 keep two significant digits: a TLS load of 0.45 MB/s was printed "0" (the test's failure under load). */
    @Test
    void smallFiguresKeepTwoSignificantDigits() {
        assertThat(List.of(RemoteBandwidth.mbps(0.4512), RemoteBandwidth.mbps(3.21), RemoteBandwidth.mbps(9.49),
                RemoteBandwidth.mbps(9.5), RemoteBandwidth.mbps(1234.4))).containsExactly("0.45", "3.2", "9.5", "10", "1234");
    }

    static void assertTable(List<String> lines, long[] least) {
        assertThat(lines.get(1).strip().split("\\s+")).containsExactly("chunk", "values", "tier", "store", "SET", "tier", "load",
                "GET", "store/SET", "load/GET", "rb", "values");
        List<String> rows = lines.stream().filter(l -> l.strip().matches("\\d+ KiB .*")).toList();
        assertThat(rows).extracting(l -> l.strip().split("\\s+")[0]).containsExactly("64", "256", "1024", "4096");
        for (int i = 0; i < rows.size(); i++) {
            long values = Long.parseLong(rows.get(i).strip().split("\\s+")[2]);
            assertThat(values).as("the tier's values, whole pipelines: " + rows.get(i)).isGreaterThanOrEqualTo(least[i])
                    .isEqualTo(values / 8 * 8);
        }
        for (String row : rows) {
            String[] cells = row.strip().split("\\s+");
            assertThat(cells).as(row).hasSize(10);
            double[] f = Arrays.stream(cells).skip(3).limit(6).mapToDouble(Double::parseDouble).toArray();
            assertThat(Arrays.stream(f).allMatch(x -> Double.isFinite(x) && x > 0)).as("finite positive figures: " + row).isTrue();
            // Printed MB/s are rounded to their last digit (1 from 10 on, else two significant digits), ratios to 0.01:
            // the ratio of the printed figures is within both.
            double[] e = Arrays.stream(cells).skip(3).limit(4).mapToDouble(RemoteBandwidthTest::halfLastDigit).toArray();
            assertThat(f[4]).as("store/SET of " + row).isCloseTo(f[0] / f[1], within(0.006 + e[0] / f[1] * 1.01 + e[1] * f[0] / (f[1] * f[1])));
            assertThat(f[5]).as("load/GET of " + row).isCloseTo(f[2] / f[3], within(0.006 + e[2] / f[3] * 1.01 + e[3] * f[2] / (f[3] * f[3])));
            long rb = Long.parseLong(cells[9]);
            assertThat(rb).as("redis-benchmark's values, whole pipelines: " + row)
                    .isGreaterThanOrEqualTo(least[rows.indexOf(row)]).isEqualTo(rb / 8 * 8);
        }
    }
}
