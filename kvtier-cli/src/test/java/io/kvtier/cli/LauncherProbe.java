package io.kvtier.cli;

/** The program of the jar that LauncherTest's fake Maven "builds": says it ran, with its arguments. */
public final class LauncherProbe {

    private LauncherProbe() {
    }

    /**
     * Prints that it ran (and with a young generation cap, which); {@code streams} then prints (on
     * both streams) what the launcher told of its standard output and standard error
     * ({@code kvtier.streamsShared}); {@code argument TEXT} prints TEXT's code points as the JVM decoded them; {@code exit N} exits with status N, and {@code signal NAME} has
     * {@code kill} send the signal NAME to this JVM (as the OOM killer's SIGKILL would end it),
     * after writing a stand-in crash report into {@code $PROBE_CRASH_REPORT_DIR} when that is set.
     */
    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("aot-training") && System.getenv("PROBE_FAIL_TRAINING") != null) {
            System.exit(3);
        }
        java.util.List<String> jvm = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments();
        boolean aot = jvm.stream().anyMatch(a -> a.startsWith("-XX:AOTCache="));
        String young = jvm.stream().filter(a -> a.startsWith("-XX:MaxNewSize=")).map(a -> " (" + a.substring(4) + ")")
                .findFirst().orElse("");
        System.out.println("probe ran " + String.join(" ", args) + (aot ? " (AOT cache)" : "") + young);
        if (args.length == 2 && args[0].equals("argument")) {   // how the JVM decoded an argument
            System.out.println("argument: " + args[1].codePoints().mapToObj(c -> String.format("U+%04X", c))
                    .collect(java.util.stream.Collectors.joining(" ")));
        }
        if (args.length == 1 && args[0].equals("streams")) {
            System.out.println("streams shared: " + System.getProperty("kvtier.streamsShared"));
            System.err.println("streams shared: " + System.getProperty("kvtier.streamsShared")); // for standard output to /dev/null
        }
        System.out.flush();
        if (args.length == 2 && args[0].equals("exit")) {
            System.exit(Integer.parseInt(args[1]));
        }
        if (args.length == 2 && args[0].equals("signal")) {
            String reports = System.getenv("PROBE_CRASH_REPORT_DIR"); // as -XX:ErrorFile names a crash's report
            if (reports != null) {
                java.nio.file.Files.writeString(java.nio.file.Path.of(reports, "kvtier-hs_err_pid" + ProcessHandle.current().pid() + ".log"),
                        "# A fatal error has been detected by the Java Runtime Environment (the probe's stand-in)\n");
            }
            new ProcessBuilder("kill", "-" + args[1], String.valueOf(ProcessHandle.current().pid())).inheritIO().start().waitFor();
            Thread.sleep(30_000); // a signal the JVM survives fails the test by its exit status
        }
    }
}
