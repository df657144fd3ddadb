package dev.pagewarden.platform.ops;

import org.springframework.core.env.Environment;
import org.springframework.stereotype.Component;
import org.springframework.web.server.ServerWebExchange;

import java.net.InetSocketAddress;

/**
 * Tells requests to the management port (actuator: probes, health details, metrics) from requests to
 * the main port. The port is read when asked: it is known only once the management server started
 * ({@code local.management.port}; a random one in tests).
 */
@Component
public class ManagementPort {
    private final Environment env;

    ManagementPort(Environment env) {
        this.env = env;
    }

    public boolean serves(ServerWebExchange exchange) {
        Integer port = env.getProperty("local.management.port", Integer.class);
        InetSocketAddress local = exchange.getRequest().getLocalAddress();
        return port != null && local != null && local.getPort() == port
                && !port.equals(env.getProperty("local.server.port", Integer.class));
    }
}
