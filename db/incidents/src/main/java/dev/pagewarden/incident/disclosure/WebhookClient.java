package dev.pagewarden.incident.disclosure;

import org.apache.hc.client5.http.DnsResolver;
import org.apache.hc.client5.http.classic.methods.HttpPost;
import org.apache.hc.client5.http.config.ConnectionConfig;
import org.apache.hc.client5.http.config.RequestConfig;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManagerBuilder;
import org.apache.hc.core5.http.ClassicHttpResponse;
import org.apache.hc.core5.http.ContentType;
import org.apache.hc.core5.http.HttpEntity;
import org.apache.hc.core5.http.io.SocketConfig;
import org.apache.hc.core5.http.io.entity.StringEntity;
import org.apache.hc.core5.util.Timeout;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * POSTs one webhook delivery, guarded against SSRF: the URL is re-checked, its host is resolved here
 * and every address is checked ({@link WebhookTargets}) before the client connects to exactly those
 * addresses (a name cannot be re-pointed between check and connect); redirects are not followed
 * (a 3xx is a failed delivery); no proxy, cookies or retries; connect and read timeouts plus a hard
 * deadline; at most {@link #RESPONSE_CAP} bytes of the answer are read, the rest is dropped with the
 * connection. Blocking: call it from a worker thread.
 */
public final class WebhookClient implements AutoCloseable {
    /** How much of a receiver's answer is read (and thrown away): enough for a status page, no more. */
    static final int RESPONSE_CAP = 4096;

    /** Name resolution; the system resolver in production, a test's own to simulate what DNS answers. */
    @FunctionalInterface
    public interface Resolver {
        Resolver SYSTEM = InetAddress::getAllByName;

        InetAddress[] resolve(String host) throws UnknownHostException;
    }

    /**
     * What became of one attempt: the receiver's status (when it answered), the error (null when
     * delivered), and whether a retry could help (a refused address or a redirect will not change).
     */
    public record Outcome(Integer status, String error, boolean permanent) {
        public boolean delivered() {
            return error == null;
        }
    }

    /** A refused target; permanent, never retried. */
    private static final class RefusedTarget extends UnknownHostException {
        RefusedTarget(String message) {
            super(message);
        }
    }

    private final WebhookProperties properties;
    private final Resolver resolver;
    private final CloseableHttpClient http;
    private final ScheduledExecutorService deadlines = Executors.newScheduledThreadPool(1, Thread.ofVirtual().factory());

    public WebhookClient(WebhookProperties properties, Resolver resolver) {
        this.properties = properties;
        this.resolver = resolver;
        Timeout connect = Timeout.of(properties.connectTimeout());
        Timeout read = Timeout.of(properties.readTimeout());
        this.http = HttpClients.custom()
                .setConnectionManager(PoolingHttpClientConnectionManagerBuilder.create()
                        .setDnsResolver(new CheckingResolver())
                        .setDefaultConnectionConfig(ConnectionConfig.custom().setConnectTimeout(connect).setSocketTimeout(read).build())
                        .setDefaultSocketConfig(SocketConfig.custom().setSoTimeout(read).build())
                        .build())
                .setDefaultRequestConfig(RequestConfig.custom().setResponseTimeout(read).setRedirectsEnabled(false)
                        .setConnectionRequestTimeout(connect).build())
                .setConnectionReuseStrategy((request, response, context) -> false) // a fresh, checked connection each time
                .disableRedirectHandling()
                .disableAutomaticRetries()
                .disableCookieManagement()
                .setUserAgent("Pagewarden-Webhook/1")
                .build();
    }

    /** POSTs a JSON body with the given headers to a webhook URL. */
    public Outcome post(String url, Map<String, String> headers, String body) {
        URI uri;
        try {
            // again at delivery: the settings may have changed since the URL was registered
            uri = WebhookTargets.checkUrl(url, properties.allowHttp(), properties.allowPrivateAddresses());
        } catch (IllegalArgumentException e) {
            return new Outcome(null, "refused: " + e.getMessage(), true);
        }
        HttpPost post = new HttpPost(uri);
        headers.forEach(post::setHeader);
        post.setEntity(new StringEntity(body, ContentType.APPLICATION_JSON));
        Duration deadline = properties.connectTimeout().plus(properties.readTimeout());
        ScheduledFuture<?> cancel = deadlines.schedule(() -> post.cancel(), deadline.toMillis(), TimeUnit.MILLISECONDS);
        int status;
        try {
            ClassicHttpResponse response = http.executeOpen(null, post, null);
            try {
                status = response.getCode();
                drain(response.getEntity());
            } finally {
                post.cancel(); // drops the connection instead of reading the rest of the answer
                closeQuietly(response);
            }
        } catch (RefusedTarget e) {
            return new Outcome(null, "refused: " + e.getMessage(), true);
        } catch (IOException e) {
            String error = post.isCancelled() && !(e instanceof java.net.SocketTimeoutException)
                    ? "no answer within " + deadline.toMillis() + " ms"
                    : e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            return new Outcome(null, error, false);
        } finally {
            cancel.cancel(false);
        }
        if (status / 100 == 3) {
            return new Outcome(status, "HTTP " + status + ": redirects are not followed", true);
        }
        return new Outcome(status, status / 100 == 2 ? null : "HTTP " + status, false);
    }

    /** The connection is already dropped; closing only releases what is left. */
    private static void closeQuietly(ClassicHttpResponse response) {
        try {
            response.close();
        } catch (IOException | RuntimeException e) {
            // nothing to keep
        }
    }

    /** Reads at most {@link #RESPONSE_CAP} bytes of the answer and throws them away. */
    private static void drain(HttpEntity entity) throws IOException {
        if (entity == null) {
            return;
        }
        InputStream in = entity.getContent();
        byte[] buffer = new byte[RESPONSE_CAP];
        int total = 0;
        for (int n; total < RESPONSE_CAP && (n = in.read(buffer, total, RESPONSE_CAP - total)) >= 0; ) {
            total += n;
        }
    }

    /** Resolves within the connect timeout and refuses the whole name if any of its addresses is refused. */
    private final class CheckingResolver implements DnsResolver {
        @Override
        public InetAddress[] resolve(String host) throws UnknownHostException {
            String bare = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
            InetAddress[] addresses;
            try {
                addresses = CompletableFuture.supplyAsync(() -> {
                    try {
                        return resolver.resolve(bare);
                    } catch (UnknownHostException e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                }, Thread::startVirtualThread).get(properties.connectTimeout().toMillis(), TimeUnit.MILLISECONDS);
            } catch (TimeoutException e) {
                throw new UnknownHostException(host + ": no DNS answer within " + properties.connectTimeout().toMillis() + " ms");
            } catch (ExecutionException e) {
                throw e.getCause() instanceof UnknownHostException u ? u : new UnknownHostException(host + ": " + e.getCause());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new UnknownHostException(host + ": interrupted");
            }
            if (addresses == null || addresses.length == 0) {
                throw new UnknownHostException(host);
            }
            for (InetAddress address : addresses) {
                var reason = WebhookTargets.refusal(address, properties.allowPrivateAddresses());
                if (reason.isPresent()) {
                    throw new RefusedTarget("'" + host + "' resolves to " + reason.get());
                }
            }
            return Arrays.copyOf(addresses, addresses.length);
        }

        @Override
        public List<InetSocketAddress> resolve(String host, int port) throws UnknownHostException {
            return Arrays.stream(resolve(host)).map(a -> new InetSocketAddress(a, port)).toList();
        }

        @Override
        public String resolveCanonicalHostname(String host) {
            return host; // never used for TLS or routing decisions here
        }
    }

    @Override
    public void close() throws IOException {
        deadlines.shutdownNow();
        http.close();
    }
}
