package io.kvtier.cli;

/** The program of the jar that LauncherTest's fake Maven "builds": says it ran, with its arguments. */
public final class LauncherProbe {

    private LauncherProbe() {
    }

    public static void main(String[] args) {
        System.out.println("probe ran " + String.join(" ", args));
    }
}
