package io.kvtier.server;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/** A raw HTTP/1.1 connection for hostile-client tests: what a well-behaved client library would never send. */
final class RawHttp implements AutoCloseable {

    final Socket socket;
    final OutputStream out;
    final BufferedReader in;

    RawHttp(int port) throws IOException {
        socket = new Socket("127.0.0.1", port);
        socket.setSoTimeout(60_000);
        out = socket.getOutputStream();
        in = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Sends a POST with a JSON body and Content-Length. */
    RawHttp post(String path, String json) throws IOException {
        byte[] body = json.getBytes(StandardCharsets.UTF_8);
        headers("POST " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: "
                + body.length + "\r\n\r\n");
        out.write(body);
        out.flush();
        return this;
    }

    RawHttp headers(String text) throws IOException {
        out.write(text.getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return this;
    }

    /** The status code of the response's first line. */
    int status() throws IOException {
        String line = in.readLine();
        if (line == null) {
            throw new IOException("connection closed before a status line");
        }
        return Integer.parseInt(line.split(" ")[1]);
    }

    /** After {@link #status()}: the headers, then a body of Content-Length characters (ASCII JSON). */
    String body() throws IOException {
        int length = -1;
        for (String line; (line = in.readLine()) != null && !line.isEmpty(); ) {
            if (line.toLowerCase(java.util.Locale.ROOT).startsWith("content-length:")) {
                length = Integer.parseInt(line.substring(15).trim());
            }
        }
        char[] body = new char[Math.max(length, 0)];
        for (int off = 0; off < body.length; ) {
            int n = in.read(body, off, body.length - off);
            if (n < 0) {
                throw new IOException("connection closed inside the body");
            }
            off += n;
        }
        return new String(body);
    }

    /** Reads lines until one starts with {@code prefix}; returns it (null at the end of the stream). */
    String readUntil(String prefix) throws IOException {
        for (String line; (line = in.readLine()) != null; ) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        return null;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
