package io.kvtier.cli;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The real {@link Main} in a child JVM (this test run's JDK and class path), for what only a
 * process shows: signals, exit codes, a closed standard output. Standard error goes to
 * {@code errFile}; standard output is the process's input stream.
 */
final class ChildCli {

    private ChildCli() {
    }

    static Process start(Path errFile, String... args) throws IOException {
        return startIn(null, errFile, args);
    }

    /** As {@link #start}, with the child's {@code java.io.tmpdir} at {@code tmpDir} (null: the default). */
    static Process startIn(Path tmpDir, Path errFile, String... args) throws IOException {
        // As the launcher does: a child of a runner started in the background (SIGINT ignored, which
        // children inherit) still gets Ctrl-C's default handling, so the signal tests test kvtier.
        List<String> cmd = new ArrayList<>(List.of("env", "--default-signal=INT",
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "--add-modules", "jdk.incubator.vector", "--enable-native-access=ALL-UNNAMED",
                "-XX:+DisplayVMOutputToStderr"));
        if (tmpDir != null) {
            cmd.add("-Djava.io.tmpdir=" + tmpDir);
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Main.class.getName()));
        cmd.addAll(List.of(args));
        return new ProcessBuilder(cmd).redirectError(errFile.toFile()).redirectInput(ProcessBuilder.Redirect.PIPE).start();
    }

    /**
     * Sends {@code p} a SIGTERM and waits at most {@code boundSeconds} for it to exit; a child
     * still running then is killed (SIGKILL), so that a failing test leaves no process behind.
     *
     * @return whether it exited within the bound
     */
    static boolean terminateWithin(Process p, int boundSeconds) throws IOException, InterruptedException {
        if (new ProcessBuilder("kill", "-TERM", String.valueOf(p.pid())).inheritIO().start().waitFor() != 0) {
            throw new IOException("kill -TERM " + p.pid() + " failed");
        }
        boolean exited = p.waitFor(boundSeconds, java.util.concurrent.TimeUnit.SECONDS);
        if (!exited) {
            p.destroyForcibly().waitFor();
        }
        return exited;
    }

    /** What the child wrote on standard error, less the JVM's warning about the incubating Vector API. */
    static String stderr(Path errFile) throws IOException {
        return java.nio.file.Files.readString(errFile).replace("WARNING: Using incubator modules: jdk.incubator.vector\n", "");
    }
}
