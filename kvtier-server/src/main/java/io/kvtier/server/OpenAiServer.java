package io.kvtier.server;

import com.sun.net.httpserver.HttpHandler;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

/**
 * The OpenAI-compatible HTTP server over an {@link EngineLoop}: the JDK's {@link HttpServer}, one
 * virtual thread per exchange. Routes are in {@link Routes}. {@code GET /metrics} is served by the
 * handler given to {@link #setMetricsHandler} (404 until one is set).
 */
public final class OpenAiServer implements AutoCloseable {

    /** The version {@code GET /version} reports (the project's). */
    public static final String VERSION = "0.1.0";

    private final ServerConfig config;
    private final EngineLoop loop;
    private final ModelText model;
    private final Routes routes;
    private HttpServer http;
    private ExecutorService executor;
    private final java.util.concurrent.atomic.AtomicBoolean stopped = new java.util.concurrent.atomic.AtomicBoolean();

    public OpenAiServer(ServerConfig config, EngineLoop loop, ModelText model) {
        this.config = config;
        this.loop = loop;
        this.model = model;
        this.routes = new Routes(config, loop, model);
    }

    /** Serves {@code GET /metrics} with {@code handler} (call before {@link #start}). */
    public void setMetricsHandler(HttpHandler handler) {
        routes.setMetricsHandler(handler);
    }

    /**
     * Binds and starts serving.
     *
     * @throws IOException if the address cannot be bound (in use, not local)
     */
    public OpenAiServer start() throws IOException {
        if (ClientWatch.UNAVAILABLE != null) {
            System.err.println("kvtier: warning: " + ClientWatch.UNAVAILABLE);
        }
        http = HttpServer.create(new InetSocketAddress(config.host(), config.port()), 1024);
        executor = Executors.newVirtualThreadPerTaskExecutor();
        http.setExecutor(executor);
        http.createContext("/", routes);
        http.start();
        return this;
    }

    /** The bound port (useful with port 0). */
    public int port() {
        return http.getAddress().getPort();
    }

    public EngineLoop loop() {
        return loop;
    }

    public ModelText model() {
        return model;
    }

    /**
     * Graceful stop: new requests are refused at once, the engine loop finishes or aborts what is
     * in flight within the configured grace and closes the engine, then the listener closes.
     * Later calls do nothing.
     */
    public void stop() {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        routes.stopAccepting();
        loop.shutdown(config.shutdownGrace());
        if (http != null) {
            http.stop(1);
            executor.shutdownNow();
        }
    }

    @Override
    public void close() {
        stop();
    }
}
