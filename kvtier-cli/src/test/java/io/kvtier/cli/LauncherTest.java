package io.kvtier.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 14 item 3: the real {@code ./kvtier} launcher, copied into a scratch project whose build
 * is a fake Maven (test resource {@code fake-maven/mvn}: slow, non-atomic, refuses to overlap).
 * Two launchers started at once after a source change both run the new jar, built once.
 */
class LauncherTest {

    @TempDir
    Path project;

    private Path fakeBin;
    private Path probeJar;

    @BeforeEach
    void scratchProject() throws IOException {
        Path launcher = projectRoot().resolve("kvtier");
        Files.copy(launcher, project.resolve("kvtier"));
        project.resolve("kvtier").toFile().setExecutable(true);
        Files.writeString(project.resolve("pom.xml"), "<project/>\n");
        Files.createDirectories(project.resolve("src"));
        Files.writeString(project.resolve("src/Some.java"), "class Some {}\n");
        fakeBin = Files.createDirectories(project.resolve("fake-bin"));
        try (InputStream in = LauncherTest.class.getResourceAsStream("/fake-maven/mvn")) {
            Files.write(fakeBin.resolve("mvn"), in.readAllBytes());
        }
        Files.setPosixFilePermissions(fakeBin.resolve("mvn"), PosixFilePermissions.fromString("rwxr-xr-x"));
        probeJar = probeJar(project.resolve("probe.jar"));
    }

    /** The project's root: where the real launcher is (the tests run in kvtier-cli/). */
    private static Path projectRoot() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("kvtier")) && Files.isDirectory(d.resolve("kvtier-cli"))) {
                return d;
            }
        }
        throw new IllegalStateException("launcher ./kvtier not found above " + Path.of("").toAbsolutePath());
    }

    /** A runnable jar whose main class is {@link LauncherProbe}. */
    private static Path probeJar(Path out) throws IOException {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        m.getMainAttributes().put(Attributes.Name.MAIN_CLASS, LauncherProbe.class.getName());
        String entry = LauncherProbe.class.getName().replace('.', '/') + ".class";
        try (OutputStream f = Files.newOutputStream(out); JarOutputStream jar = new JarOutputStream(f, m);
             InputStream cls = LauncherProbe.class.getResourceAsStream("/" + entry)) {
            jar.putNextEntry(new JarEntry(entry));
            cls.transferTo(jar);
            jar.closeEntry();
        }
        return out;
    }

    private Process launch(String... args) throws IOException {
        return launch(java.util.Map.of("KVTIER_AOT", "0"), args);
    }

    private Process launch(java.util.Map<String, String> env, String... args) throws IOException {
        return launcher(env, args).start();
    }

    private ProcessBuilder launcher(java.util.Map<String, String> env, String... args) {
        ProcessBuilder pb = new ProcessBuilder(concat(List.of(project.resolve("kvtier").toString()), List.of(args)));
        pb.directory(project.toFile());
        pb.environment().put("PATH", fakeBin + ":" + System.getenv("PATH"));
        pb.environment().put("KVTIER_JAVA_HOME", System.getProperty("java.home"));
        pb.environment().put("FAKE_MAVEN_JAR", probeJar.toString());
        pb.environment().remove("KVTIER_AOT");
        pb.environment().putAll(env);
        return pb;
    }

    /**
     * The JVM's standard error is the launcher's filter's pipe, so the launcher tells it whether its own
     * standard output and standard error reach one place (generate's line break before a line on standard
     * error is for that case only). Apart: standard output to a file or /dev/null of its own. One place: both to
     * one pipe, and standard output to a pipe of its own, which may end on standard error's terminal ({@code | cat}
     * glued the line to the text).
     */
    @Test
    void theLauncherTellsTheJvmWhetherItsTwoStreamsShareOnePlace() throws Exception {
        Path text = project.resolve("text.txt");
        Process apart = launcher(java.util.Map.of("KVTIER_AOT", "0"), "streams").redirectOutput(text.toFile()).start();
        Result r = finish(apart);
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(Files.readString(text)).isEqualTo("probe ran streams\nstreams shared: false\n");
        Result discarded = finish(launcher(java.util.Map.of("KVTIER_AOT", "0"), "streams")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start());
        assertThat(discarded.err().lines().filter(l -> l.startsWith("streams"))).containsExactly("streams shared: false");
        Result piped = finish(launcher(java.util.Map.of("KVTIER_AOT", "0"), "streams").start()); // two pipes
        assertThat(piped.out().lines().filter(l -> l.startsWith("streams"))).containsExactly("streams shared: true");
        Result both = finish(launcher(java.util.Map.of("KVTIER_AOT", "0"), "streams").redirectErrorStream(true).start());
        assertThat(both.code()).as(both.out()).isZero();
        assertThat(both.out().lines().filter(l -> !l.startsWith("kvtier: building"))).containsExactly("probe ran streams",
                "streams shared: true", "streams shared: true"); // the probe says it on both streams
    }

    /**
     * Under a locale that is not UTF-8 (LANG=C, POSIX: containers, cron) the JVM decoded a prompt's
     * non-ASCII bytes as U+FFFD each and kvtier refused the text as not UTF-8; the launcher runs it
     * with a UTF-8 locale then, so the argument arrives as typed.
     */
    @ParameterizedTest(name = "LANG={0}")
    @ValueSource(strings = {"C", "POSIX", "C.UTF-8"})
    void argumentsArriveAsUtf8WhateverTheLocale(String lang) throws Exception {
        // This JVM encodes the argument for the launcher in its own locale's character set.
        org.junit.jupiter.api.Assumptions.assumeTrue("UTF-8".equals(System.getProperty("sun.jnu.encoding")),
                "the test JVM's locale is not UTF-8, so it cannot pass the argument's bytes");
        ProcessBuilder pb = launcher(java.util.Map.of("KVTIER_AOT", "0", "LANG", lang), "argument", "h\u00e9");
        pb.environment().remove("LC_ALL");
        pb.environment().remove("LC_CTYPE");
        Result r = finish(pb.start());
        assertThat(r.code()).as(r.err()).isZero();
        assertThat(r.out().lines().filter(l -> l.startsWith("argument:"))).containsExactly("argument: U+0068 U+00E9");
    }

    private record Result(int code, String out, String err) {
    }

    private static Result finish(Process p) throws Exception {
        byte[] out = p.getInputStream().readAllBytes();
        byte[] err = p.getErrorStream().readAllBytes();
        assertThat(p.waitFor(120, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8), new String(err, StandardCharsets.UTF_8));
    }

    private void twoAtOnceBothRunOneBuild(String expectedReason, int buildsBefore) throws Exception {
        Process a = launch("one");
        Process b = launch("two");
        Result ra = finish(a);
        Result rb = finish(b);
        assertThat(ra.code()).as(ra.err()).isZero();
        assertThat(rb.code()).as(rb.err()).isZero();
        assertThat(ra.out()).isEqualTo("probe ran one\n");
        assertThat(rb.out()).isEqualTo("probe ran two\n");
        assertThat(project.resolve("overlapping-builds.log")).doesNotExist();
        assertThat(Files.readAllLines(project.resolve("builds.log"))).hasSize(buildsBefore + 1);
        assertThat(ra.err() + rb.err()).contains("kvtier: building (" + expectedReason + ") ...");
        assertThat((ra.err() + rb.err()).lines().filter(l -> l.startsWith("kvtier: building"))).hasSize(1);
    }

    @Test
    void twoLaunchersOnAFreshCloneBuildOnceAndBothRun() throws Exception {
        twoAtOnceBothRunOneBuild("first run", 0);
    }

    @Test
    void twoLaunchersAfterASourceChangeBuildOnceAndBothRun() throws Exception {
        Result first = finish(launch("warm"));
        assertThat(first.code()).as(first.err()).isZero();
        Files.writeString(project.resolve("src/Some.java"), "class Some { int changed; }\n");
        twoAtOnceBothRunOneBuild("sources changed: src/Some.java", 1);
        Result again = finish(launch("again"));
        assertThat(again.err()).as("no build when nothing changed").doesNotContain("building");
        assertThat(Files.readAllLines(project.resolve("builds.log"))).hasSize(2);
    }

    /** Java files a build generates under target/ (JMH's) are outputs, not sources: they never make the jar stale. */
    @Test
    void javaFilesGeneratedUnderTargetDoNotTriggerARebuild() throws Exception {
        Result first = finish(launch("warm"));
        assertThat(first.code()).as(first.err()).isZero();
        Path generated = project.resolve("mod/target/generated-test-sources/Gen.java");
        Files.createDirectories(generated.getParent());
        Files.writeString(generated, "class Gen {}");
        Files.setLastModifiedTime(generated, FileTime.from(Instant.now().plusSeconds(5)));
        Result again = finish(launch("again"));
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.err()).as("no build for a generated file").doesNotContain("building");
        assertThat(Files.readAllLines(project.resolve("builds.log"))).hasSize(1);
    }

    /**
     * A source written again with the contents built (a checkout or clone rewriting files, a touch)
     * is newer but not changed: the digest of the built sources decides, so no rebuild (a new user's
     * fresh clone rebuilt on its second command).
     */
    @Test
    void aNewerSourceWithTheContentsBuiltDoesNotRebuild() throws Exception {
        Result first = finish(launch("warm"));
        assertThat(first.code()).as(first.err()).isZero();
        Files.setLastModifiedTime(project.resolve("src/Some.java"), FileTime.from(Instant.now()));
        Files.writeString(project.resolve("pom.xml"), "<project/>\n");
        Result again = finish(launch("again"));
        assertThat(again.code()).as(again.err()).isZero();
        assertThat(again.out()).isEqualTo("probe ran again\n");
        assertThat(again.err()).as("same contents, no build").doesNotContain("building");
        Files.writeString(project.resolve("src/Other.java"), "class Other {}\n");
        Result added = finish(launch("added"));
        assertThat(added.err()).contains("kvtier: building (sources changed: src/Other.java) ...");
        assertThat(Files.readAllLines(project.resolve("builds.log"))).hasSize(2);
    }

    @Test
    void theLauncherPassesOnTheProgramsExitStatusAndStandardInput() throws Exception {
        Result r = finish(launch("x"));
        assertThat(r.code()).isZero();
        assertThat(r.err()).doesNotContain("WARNING: Using incubator modules");
    }

    /**
     * A new user's trial: a JVM killed by SIGKILL (the OOM killer, kill -9) showed bash's job line
     * ("line N: PID Killed  env ... java ..."). The launcher says it in one line of its own and
     * keeps the status; the program's output before it still passes.
     */
    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.CsvSource({
            "KILL, 137, kvtier: the JVM was killed by signal 9 (SIGKILL; out of memory?)",
            "ALRM, 142, kvtier: the JVM was killed by signal 14 (SIGALRM)"})
    void aJvmKilledByASignalIsOneLineOfTheLauncherAndKeepsItsStatus(String signal, int status, String line) throws Exception {
        Result r = finish(launch("signal", signal));
        assertThat(r.code()).as(r.err()).isEqualTo(status);
        assertThat(r.out()).isEqualTo("probe ran signal " + signal + "\n");
        assertThat(r.err().lines().filter(l -> !l.startsWith("kvtier: building"))).as(r.err()).containsExactly(line);
    }

    /** A crash (SIGABRT after the JVM wrote its report to -XX:ErrorFile, under $TMPDIR) names the report. */
    @Test
    void aCrashedJvmsLineNamesItsReport() throws Exception {
        Path tmp = Files.createDirectories(project.resolve("tmp"));
        Result r = finish(launch(java.util.Map.of("KVTIER_AOT", "0", "TMPDIR", tmp.toString(), "PROBE_CRASH_REPORT_DIR", tmp.toString()),
                "signal", "ABRT"));
        assertThat(r.code()).as(r.err()).isEqualTo(134);
        try (var reports = Files.list(tmp)) {
            Path report = reports.filter(f -> f.getFileName().toString().startsWith("kvtier-hs_err_pid")).findFirst().orElseThrow();
            assertThat(r.err().lines().filter(l -> !l.startsWith("kvtier: building"))).as(r.err())
                    .containsExactly("kvtier: the JVM was killed by signal 6 (SIGABRT; the JVM crashed, see " + report + ")");
        }
    }

    /** A status the program exits with itself (the JVM's after SIGTERM: 143) is passed on without a line. */
    @Test
    void aStatusAboveOneHundredTwentyEightOfTheProgramsOwnIsNotASignal() throws Exception {
        Result r = finish(launch("exit", "143"));
        assertThat(r.code()).as(r.err()).isEqualTo(143);
        assertThat(r.err().lines().filter(l -> !l.startsWith("kvtier: building"))).as(r.err()).isEmpty();
        Result three = finish(launch("exit", "3"));
        assertThat(three.code()).isEqualTo(3);
        assertThat(three.err()).doesNotContain("killed");
    }

    /**
     * Issue 16 item 5: the first run after a build trains the AOT cache and later JVMs start with
     * it; a new build trains it again.
     */
    @Test
    void theFirstRunTrainsTheAotCacheAndLaterRunsUseIt() throws Exception {
        Result first = finish(launch(java.util.Map.of(), "one"));
        assertThat(first.code()).as(first.err()).isZero();
        assertThat(first.err()).contains("kvtier: training the JVM's AOT cache");
        assertThat(first.out()).isEqualTo("probe ran one (AOT cache)\n");
        Path cache = project.resolve("kvtier-cli/target/launch/kvtier.aot");
        assertThat(cache).isNotEmptyFile();
        Result second = finish(launch(java.util.Map.of(), "two"));
        assertThat(second.err()).doesNotContain("training").doesNotContain("building");
        assertThat(second.out()).isEqualTo("probe ran two (AOT cache)\n");
        FileTime trained = Files.getLastModifiedTime(cache);
        Files.writeString(project.resolve("src/Some.java"), "class Some { int changed; }\n");
        Result rebuilt = finish(launch(java.util.Map.of(), "three"));
        assertThat(rebuilt.err()).contains("building (sources changed: src/Some.java)").contains("training the JVM's AOT cache");
        assertThat(rebuilt.out()).isEqualTo("probe ran three (AOT cache)\n");
        assertThat(Files.getLastModifiedTime(cache)).isGreaterThan(trained);
    }

    /** A cache that cannot be built costs one line on stderr, once per build; the program runs without it. */
    @Test
    void aFailedTrainingRunIsOneLineAndTheProgramRunsWithoutACache() throws Exception {
        java.util.Map<String, String> failing = java.util.Map.of("PROBE_FAIL_TRAINING", "1");
        Result first = finish(launch(failing, "one"));
        assertThat(first.code()).as(first.err()).isZero();
        assertThat(first.out()).isEqualTo("probe ran one\n");
        List<String> aotLines = first.err().lines().filter(l -> l.contains("AOT cache")).toList();
        assertThat(aotLines).hasSize(2);
        assertThat(aotLines.get(0)).isEqualTo("kvtier: training the JVM's AOT cache (once per build) ...");
        assertThat(aotLines.get(1)).startsWith("kvtier: could not build the AOT cache (see ")
                .endsWith(".kvtier-aot.log); running without it");
        assertThat(project.resolve("kvtier-cli/target/launch/kvtier.aot")).doesNotExist();
        Result second = finish(launch(failing, "two"));
        assertThat(second.out()).isEqualTo("probe ran two\n");
        assertThat(second.err()).as("not retried until the next build").doesNotContain("AOT");
    }

    /**
     * generate, serve and bench serve (whose servers run in its JVM) run with the young generation
     * capped (the launcher's comment has the measurements); others not.
     */
    @Test
    void generateServeAndBenchServeCapTheYoungGeneration() throws Exception {
        assertThat(finish(launch("serve", "--port", "0")).out()).isEqualTo("probe ran serve --port 0 (MaxNewSize=64m)\n");
        assertThat(finish(launch("generate")).out()).isEqualTo("probe ran generate (MaxNewSize=64m)\n");
        assertThat(finish(launch("bench", "serve")).out()).isEqualTo("probe ran bench serve (MaxNewSize=64m)\n");
        assertThat(finish(launch("bench", "serve", "--url", "http://127.0.0.1:1")).out())
                .isEqualTo("probe ran bench serve --url http://127.0.0.1:1 (MaxNewSize=64m)\n");
        assertThat(finish(launch("bench", "generate")).out()).isEqualTo("probe ran bench generate\n");
        assertThat(finish(launch("replay")).out()).isEqualTo("probe ran replay\n");
    }

    private static List<String> concat(List<String> a, List<String> b) {
        return java.util.stream.Stream.concat(a.stream(), b.stream()).toList();
    }
}
