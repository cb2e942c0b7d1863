package io.kvtier.server;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;

/** Dispatches every request by method and path (skeleton: filled in by the serve branch). */
final class Routes implements HttpHandler {

    private final ServerConfig config;
    private final EngineLoop loop;
    private final ModelText model;
    private volatile HttpHandler metrics;
    private volatile boolean accepting = true;

    Routes(ServerConfig config, EngineLoop loop, ModelText model) {
        this.config = config;
        this.loop = loop;
        this.model = model;
    }

    void setMetricsHandler(HttpHandler h) {
        metrics = h;
    }

    void stopAccepting() {
        accepting = false;
    }

    @Override
    public void handle(HttpExchange ex) throws IOException {
        try (ex) {
            if (ex.getRequestURI().getPath().equals("/metrics") && metrics != null) {
                metrics.handle(ex);
                return;
            }
            int status = loop.alive() ? 200 : 503;
            ex.sendResponseHeaders(status, -1);
        }
    }
}
