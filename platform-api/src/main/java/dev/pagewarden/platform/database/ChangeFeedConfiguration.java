package dev.pagewarden.platform.database;

import com.zaxxer.hikari.HikariDataSource;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import javax.sql.DataSource;
import java.sql.DriverManager;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Properties;

/**
 * The platform's {@link ChangeFeed}: its own connection to the platform's database (same URL and credentials as
 * the pool, outside it and outside the circuit breaker), started once every subscriber exists.
 */
@Configuration(proxyBeanMethods = false)
class ChangeFeedConfiguration {
    /** One wait for notifications; also how often an idle feed pings its connection. */
    static final Duration POLL = Duration.ofMillis(500);
    static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

    @Bean(destroyMethod = "close")
    ChangeFeed changeFeed(DataSource dataSource) throws SQLException {
        if (!dataSource.isWrapperFor(HikariDataSource.class)) {
            throw new IllegalStateException("the change feed needs the platform's DataSource to be a HikariCP pool "
                    + "(Spring Boot's default), to open its own connection with the same settings; got "
                    + dataSource.getClass().getName());
        }
        return new ChangeFeed(connector(dataSource.unwrap(HikariDataSource.class)), POLL, MAX_BACKOFF);
    }

    /** Starts the feed after all singletons (so every subscriber is registered), before the server takes requests. */
    @Bean
    SmartLifecycle changeFeedStart(ChangeFeed feed) {
        return new SmartLifecycle() {
            private volatile boolean running;

            @Override
            public void start() {
                feed.start();
                running = true;
            }

            @Override
            public void stop() {
                running = false; // the feed closes with its bean
            }

            @Override
            public boolean isRunning() {
                return running;
            }

            @Override
            public int getPhase() {
                return 0;
            }
        };
    }

    /** A new, unpooled connection with the pool's settings and bounded connect and socket timeouts. */
    static ChangeFeed.Connector connector(HikariDataSource pool) {
        String url = pool.getJdbcUrl();
        String user = pool.getUsername();
        String password = pool.getPassword();
        return () -> {
            Properties p = new Properties();
            pool.getDataSourceProperties().forEach(p::put);
            if (user != null) {
                p.setProperty("user", user);
            }
            if (password != null) {
                p.setProperty("password", password);
            }
            p.setProperty("connectTimeout", "3");
            p.setProperty("socketTimeout", "10");
            p.setProperty("tcpKeepAlive", "true");
            p.setProperty("ApplicationName", "pagewarden-change-feed");
            return DriverManager.getConnection(url, p);
        };
    }
}
