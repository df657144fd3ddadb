package dev.pagewarden.adminui.web;

import dev.pagewarden.incident.AdminProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.server.session.DefaultWebSessionManager;
import org.springframework.web.server.session.WebSessionIdResolver;
import org.springframework.web.server.session.WebSessionManager;
import reactor.core.scheduler.Schedulers;

import javax.sql.DataSource;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Web sessions (the admin UI's) in PostgreSQL instead of one replica's memory. The bean name replaces
 * Spring Boot's in-memory session manager; the cookie settings ({@code server.reactive.session.cookie.*})
 * still apply through Boot's id resolver.
 */
@Configuration(proxyBeanMethods = false)
class AdminSessionConfiguration {
    /** The most one session read or write may take: the same as waiting for a pooled connection. */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(3);
    /** How often expired session rows are deleted (every replica does; the delete is idempotent). */
    static final Duration CLEANUP = Duration.ofMinutes(5);

    @Bean
    PostgresWebSessionStore adminSessionStore(DataSource dataSource, Clock clock, AdminProperties properties) {
        return new PostgresWebSessionStore(dataSource, clock, properties.sessionTimeout(), CALL_TIMEOUT, Schedulers.boundedElastic());
    }

    @Bean
    WebSessionManager webSessionManager(PostgresWebSessionStore store, ObjectProvider<WebSessionIdResolver> ids) {
        DefaultWebSessionManager manager = new DefaultWebSessionManager();
        manager.setSessionStore(store);
        ids.ifAvailable(manager::setSessionIdResolver);
        return manager;
    }

    @Bean
    ExpiredSessionCleanup expiredSessionCleanup(PostgresWebSessionStore store) {
        return new ExpiredSessionCleanup(store);
    }

    /** Deletes expired session rows every {@link #CLEANUP}, on its own thread. */
    static final class ExpiredSessionCleanup implements AutoCloseable {
        private static final Logger LOG = LoggerFactory.getLogger(ExpiredSessionCleanup.class);
        private final ScheduledExecutorService schedule = Executors.newSingleThreadScheduledExecutor(
                Thread.ofPlatform().name("pagewarden-session-cleanup").daemon().factory());

        ExpiredSessionCleanup(PostgresWebSessionStore store) {
            schedule.scheduleWithFixedDelay(() -> {
                try {
                    int removed = store.removeExpired();
                    if (removed > 0) {
                        LOG.debug("{} expired admin session(s) removed", removed);
                    }
                } catch (RuntimeException e) {
                    LOG.warn("expired admin sessions could not be removed: {}", e.getMessage());
                }
            }, CLEANUP.toMillis(), CLEANUP.toMillis(), TimeUnit.MILLISECONDS);
        }

        @Override
        public void close() {
            schedule.shutdownNow();
        }
    }
}
