package io.kvtier.cli;

/** The program of the jar that LauncherTest's fake Maven "builds": says it ran, with its arguments. */
public final class LauncherProbe {

    private LauncherProbe() {
    }

    public static void main(String[] args) {
        if (args.length > 0 && args[0].equals("aot-training") && System.getenv("PROBE_FAIL_TRAINING") != null) {
            System.exit(3);
        }
        boolean aot = java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .anyMatch(a -> a.startsWith("-XX:AOTCache="));
        System.out.println("probe ran " + String.join(" ", args) + (aot ? " (AOT cache)" : ""));
    }
}
