package dev.pagewarden.platform.security;

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
        // on the API port actuator would fall outside the management chain: refuse rather than expose it
        String management = env.getProperty("management.server.port");
        if (management != null && !management.equals("0") && !management.equals("-1")
                && management.equals(env.getProperty("server.port", "8080"))) {
            throw new IllegalStateException("management.server.port (MANAGEMENT_SERVER_PORT) must differ from server.port ("
                    + management + "): actuator is served only on its own port");
        }
    }

    public boolean serves(ServerWebExchange exchange) {
        Integer port = env.getProperty("local.management.port", Integer.class);
        InetSocketAddress local = exchange.getRequest().getLocalAddress();
        return port != null && local != null && local.getPort() == port
                && !port.equals(env.getProperty("local.server.port", Integer.class));
    }
}
