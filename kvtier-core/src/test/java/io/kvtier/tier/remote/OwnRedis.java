package io.kvtier.tier.remote;

import java.io.IOException;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A private redis-server for one test, on a free loopback port, that the test may kill, freeze
 * ({@code SIGSTOP}) and thaw, or configure (maxmemory, ACL users). Stopped by {@link #close()},
 * by its own process handle (never by name).
 */
public final class OwnRedis implements AutoCloseable {

    private final Path dir;
    private final int port;
    private final List<String> extra;
    private final boolean tls;
    private Process process;

    private OwnRedis(Path dir, int port, List<String> extra, boolean tls) {
        this.dir = dir;
        this.port = port;
        this.extra = extra;
        this.tls = tls;
    }

    /** Starts a server with these extra config directives ("maxmemory 2mb", ...). */
    public static OwnRedis start(Path dir, String... directives) throws IOException, InterruptedException {
        OwnRedis r = new OwnRedis(dir, freePort(), List.of(directives), false);
        r.launch();
        return r;
    }

    /**
     * Starts a server that speaks only TLS on its port ({@code rediss://}), with this PEM
     * certificate and key, clients not asked for certificates.
     */
    public static OwnRedis startTls(Path dir, Path cert, Path key) throws IOException, InterruptedException {
        int port = freePort();
        OwnRedis r = new OwnRedis(dir, port, List.of("port 0", "tls-port " + port, "tls-cert-file " + cert,
                "tls-key-file " + key, "tls-ca-cert-file " + cert, "tls-auth-clients no"), true);
        r.launch();
        return r;
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    private void launch() throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(RedisServers.serverBinary(), "--bind", "127.0.0.1", "--port",
                String.valueOf(port), "--save", "", "--appendonly", "no", "--dir", dir.toString()));
        for (String d : extra) {
            String[] parts = d.split(" ");
            cmd.add("--" + parts[0]);
            cmd.addAll(List.of(parts).subList(1, parts.length));
        }
        Files.createDirectories(dir);
        process = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(dir.resolve("redis-" + port + ".log").toFile())
                .start();
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < end) {
            try (Socket s = new Socket(java.net.InetAddress.getLoopbackAddress(), port)) {
                return;
            } catch (IOException notYet) {
                Thread.sleep(20);
            }
        }
        throw new IOException("redis-server on port " + port + " did not start; see " + dir);
    }

    public int port() {
        return port;
    }

    public String url() {
        return (tls ? "rediss" : "redis") + "://127.0.0.1:" + port;
    }

    /** Runs redis-cli against this server (its output, trimmed). */
    public String cli(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("redis-cli", "-h", "127.0.0.1", "-p", String.valueOf(port)));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes()).trim();
        p.waitFor(10, TimeUnit.SECONDS);
        return out;
    }

    private void signal(String sig) throws IOException, InterruptedException {
        new ProcessBuilder("kill", "-" + sig, String.valueOf(process.pid())).start().waitFor(5, TimeUnit.SECONDS);
    }

    /** Whether the server process runs (not killed). */
    public boolean isAlive() {
        return process != null && process.isAlive();
    }

    public void freeze() throws IOException, InterruptedException {
        signal("STOP");
    }

    public void thaw() throws IOException, InterruptedException {
        signal("CONT");
    }

    /** Kills the server at once (SIGKILL). */
    public void kill() throws InterruptedException {
        process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
    }

    /** Starts it again on the same port (empty). */
    public void restart() throws IOException, InterruptedException {
        launch();
    }

    @Override
    public void close() throws IOException, InterruptedException {
        if (process != null && process.isAlive()) {
            thaw();
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        }
    }
}
