package dev.pagewarden.platform.testing;

import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;

/**
 * One raw TCP connection speaking HTTP/1.1 by hand: requests go out exactly as written, each
 * response is read by its own framing (Content-Length or chunked), so several requests can ride one
 * keep-alive connection, and a test can send partial requests and watch the server close.
 */
public final class RawHttp implements Closeable {
    /** A response: status, headers with lower-case names, body as text. */
    public record Response(int status, Map<String, String> headers, String body) {
        public String header(String name) {
            return headers.get(name.toLowerCase(Locale.ROOT));
        }
    }

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;

    public RawHttp(String host, int port, Duration readTimeout) throws IOException {
        this.socket = new Socket(host, port);
        socket.setSoTimeout((int) readTimeout.toMillis());
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /** A connection to this machine's loopback address (127.0.0.1). */
    public static RawHttp local(int port, Duration readTimeout) throws IOException {
        return new RawHttp(java.net.InetAddress.getLoopbackAddress().getHostAddress(), port, readTimeout);
    }

    /** Writes bytes as they are (a partial request stays partial). */
    public RawHttp send(String raw) throws IOException {
        out.write(raw.getBytes(StandardCharsets.UTF_8));
        out.flush();
        return this;
    }

    /** A full request: {@code GET path} with Host and the given extra header lines ({@code "Name: value"}). */
    public Response get(String path, String... headers) throws IOException {
        StringBuilder r = new StringBuilder("GET ").append(path).append(" HTTP/1.1\r\nHost: localhost\r\n");
        for (String h : headers) {
            r.append(h).append("\r\n");
        }
        send(r.append("\r\n").toString());
        return read();
    }

    public Response post(String path, String contentType, String body, String... headers) throws IOException {
        send(postRequest(path, contentType, body, headers));
        return read();
    }

    /** The text of a complete POST request. */
    public static String postRequest(String path, String contentType, String body, String... headers) {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        StringBuilder r = new StringBuilder("POST ").append(path).append(" HTTP/1.1\r\nHost: localhost\r\n")
                .append("Content-Type: ").append(contentType).append("\r\nContent-Length: ").append(bytes.length).append("\r\n");
        for (String h : headers) {
            r.append(h).append("\r\n");
        }
        return r.append("\r\n").append(body).toString();
    }

    /** Reads one response; a read timeout throws {@link java.net.SocketTimeoutException}. */
    public Response read() throws IOException {
        String statusLine = line();
        if (statusLine == null) {
            throw new IOException("connection closed before a response");
        }
        int status = Integer.parseInt(statusLine.split(" ")[1]);
        Map<String, String> headers = new LinkedHashMap<>();
        for (String l = line(); l != null && !l.isEmpty(); l = line()) {
            int colon = l.indexOf(':');
            headers.merge(l.substring(0, colon).trim().toLowerCase(Locale.ROOT), l.substring(colon + 1).trim(),
                    (a, b) -> a + ", " + b);
        }
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
            for (int size = Integer.parseInt(line().split(";")[0].trim(), 16); size > 0;
                 size = Integer.parseInt(line().split(";")[0].trim(), 16)) {
                body.write(in.readNBytes(size));
                line();
            }
            while (!line().isEmpty()) {
                // trailers
            }
        } else if (headers.containsKey("content-length")) {
            body.write(in.readNBytes(Integer.parseInt(headers.get("content-length"))));
        } else if (status >= 200 && status != 204 && status != 304) {
            throw new IOException("response " + status + " without Content-Length or chunked framing: " + headers);
        }
        return new Response(status, headers, body.toString(StandardCharsets.UTF_8));
    }

    /**
     * Whether the server has closed this connection (end of stream or reset) before the socket's
     * read timeout; bytes that still arrive are skipped.
     */
    public boolean closedByServer() throws IOException {
        try {
            byte[] buffer = new byte[4096];
            while (in.read(buffer) >= 0) {
                // drain what the server still sends (a 408, say) until it closes
            }
            return true;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            return true; // reset
        }
    }

    /** Whether the server closes this connection before sending a single byte (within the read timeout). */
    public boolean closedWithoutResponse() throws IOException {
        try {
            return in.read() < 0;
        } catch (java.net.SocketTimeoutException e) {
            return false;
        } catch (java.net.SocketException e) {
            return true; // reset
        }
    }

    private String line() throws IOException {
        ByteArrayOutputStream b = new ByteArrayOutputStream();
        int c;
        while ((c = in.read()) >= 0) {
            if (c == '\n') {
                byte[] bytes = b.toByteArray();
                int n = bytes.length > 0 && bytes[bytes.length - 1] == '\r' ? bytes.length - 1 : bytes.length;
                return new String(bytes, 0, n, StandardCharsets.ISO_8859_1);
            }
            b.write(c);
        }
        return b.size() == 0 ? null : b.toString(StandardCharsets.ISO_8859_1);
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
