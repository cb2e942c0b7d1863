package io.kvtier.cli;

import io.kvtier.server.ServerConfig;
import java.nio.file.Path;
import java.time.Duration;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The HTTP side of {@code serve}: where it listens, the API key and its sources, the request
 * limits and the shutdown grace. {@link #config()} checks them all (one line, exit 2).
 */
public final class ServeOptions {

    @picocli.CommandLine.Spec(picocli.CommandLine.Spec.Target.MIXEE)
    picocli.CommandLine.Model.CommandSpec mixee;

    @Option(names = "--host", defaultValue = ServerConfig.DEFAULT_HOST, paramLabel = "ADDR",
            description = "address to listen on (default ${DEFAULT-VALUE}: this machine only; 0.0.0.0 for every interface)")
    String host;

    /** The most TCP port. */
    static final int MAX_PORT = 65535;

    @Option(names = "--port", defaultValue = "8000", paramLabel = "N", description = "TCP port (default ${DEFAULT-VALUE}; 0 picks a free one)")
    @Most(MAX_PORT)
    int port;

    /** The key clients must send; none: every route is open. */
    @Mixin
    ApiKeyOptions apiKey;

    @Option(names = "--served-model-name", paramLabel = "NAME",
            description = "the model's name in the API (default: the checkpoint's file name without its extension)")
    String servedModelName;

    @Option(names = "--max-waiting", defaultValue = "256", paramLabel = "N",
            description = "requests that may wait beyond --max-running ones: with max-running + N in flight, "
                    + "a request gets 429 with Retry-After; 0: no waiting queue (default ${DEFAULT-VALUE})")
    int maxWaiting;

    @Option(names = "--max-body-bytes", defaultValue = "1M", paramLabel = "SIZE",
            description = "largest request body, at most 2147483639 bytes (2 GiB less 9); a larger one gets 413 unread "
                    + "(default ${DEFAULT-VALUE})")
    String maxBodyBytes;

    @Option(names = "--shutdown-grace", defaultValue = "10s", converter = TimeFlag.Seconds.class, paramLabel = "TIME",
            description = "on SIGTERM, how long requests in flight may finish before they are aborted, e.g. 10s or 500ms "
                    + "(a plain number is seconds; default ${DEFAULT-VALUE})")
    Duration shutdownGrace;

    /**
     * The server's settings.
     *
     * @throws BadInputException naming the flag of a bad value, or of more than one key source
     */
    public ServerConfig config() {
        if (port < 0 || port > MAX_PORT) {
            throw new BadInputException("--port must be in 0.." + MAX_PORT + ", got " + port);
        }
        if (host.isBlank()) {
            throw new BadInputException("--host: empty address");
        }
        // An IPv6 address as in a URL ([::1]) is the address itself: the brackets belong to URLs.
        String address = host.length() > 2 && host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        checkLocal(address);
        Checks.atLeast(maxWaiting, 0, "--max-waiting");
        long body = Checks.atLeast(Sizes.parseBytes(maxBodyBytes, "--max-body-bytes"), 1, "--max-body-bytes");
        if (body > ServerConfig.MAX_BODY_BYTES) {
            throw new BadInputException("--max-body-bytes must be at most " + ServerConfig.MAX_BODY_BYTES + " bytes (2 GiB less 9: "
                    + "the largest body the server can read, into one Java array), got " + maxBodyBytes);
        }
        TimeFlag.inRange(mixee, "--shutdown-grace", shutdownGrace, Duration.ZERO, Duration.ofDays(1));
        return new ServerConfig(address, port, apiKey.key(), body, shutdownGrace, null);
    }

    /**
     * The address must name this machine (or all of it: 0.0.0.0, ::), else nothing could be bound;
     * every loopback address is (Linux answers on all of 127.0.0.0/8, not only 127.0.0.1).
     */
    private static void checkLocal(String host) {
        java.net.InetAddress addr;
        try {
            addr = java.net.InetAddress.getByName(host);
        } catch (java.net.UnknownHostException e) {
            throw new BadInputException("--host " + host + ": not an IP address or a known host name");
        }
        try {
            if (!addr.isAnyLocalAddress() && !addr.isLoopbackAddress() && java.net.NetworkInterface.getByInetAddress(addr) == null) {
                throw new BadInputException("--host " + host + ": " + addr.getHostAddress() + " is not an address of this machine");
            }
        } catch (java.net.SocketException e) {
            throw new BadInputException("--host " + host + ": cannot list this machine's addresses (" + e.getMessage() + ")");
        }
    }

    public int maxWaiting() {
        return maxWaiting;
    }

    /** The served name: {@code --served-model-name}, else the checkpoint's file name less its extension. */
    public String modelName(Path checkpoint) {
        if (servedModelName != null) {
            if (servedModelName.isBlank()) {
                throw new BadInputException("--served-model-name: empty name");
            }
            return servedModelName;
        }
        String file = checkpoint.getFileName().toString();
        int dot = file.lastIndexOf('.');
        return dot > 0 ? file.substring(0, dot) : file;
    }
}
