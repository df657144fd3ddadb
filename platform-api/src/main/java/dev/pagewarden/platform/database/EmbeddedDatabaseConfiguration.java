package dev.pagewarden.platform.database;

import com.zaxxer.hikari.HikariDataSource;
import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.platform.config.PagewardenProperties;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;

/**
 * The embedded default: with no {@code spring.datasource.url} the platform runs a real PostgreSQL 17
 * whose data directory persists under {@code ~/.pagewarden/pg} (fsync on, localhost only, a generated
 * password), on a free port unless {@code pagewarden.database.embedded-port} says otherwise.
 * Never an in-memory stand-in.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(EmbeddedDatabaseConfiguration.NoDatasourceUrl.class)
class EmbeddedDatabaseConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(EmbeddedDatabaseConfiguration.class);

    static final class NoDatasourceUrl implements Condition {
        @Override
        public boolean matches(ConditionContext context, AnnotatedTypeMetadata metadata) {
            String url = context.getEnvironment().getProperty("spring.datasource.url");
            return url == null || url.isBlank();
        }
    }

    @Bean(destroyMethod = "close")
    EmbeddedPostgresServer embeddedPostgres(PagewardenProperties properties) {
        Path dir = properties.embeddedDbDir().toAbsolutePath();
        EmbeddedPostgresServer.Config config = EmbeddedPostgresServer.Config.defaults().withDataDirectory(dir);
        if (properties.database().embeddedPort() > 0) {
            config = config.withPort(properties.database().embeddedPort());
        }
        try {
            EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(config);
            LOG.info("No spring.datasource.url set: {} embedded PostgreSQL at {} with data in {} (set SPRING_DATASOURCE_URL, "
                    + "_USERNAME and _PASSWORD to use your own server)", pg.createdCluster() ? "created" : "started",
                    pg.jdbcUrl(), dir);
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL in " + dir
                    + " (pagewarden.database.embedded-dir): " + e.getMessage(), e);
        }
    }

    /**
     * The pool on the embedded server. Its timeouts come from {@code spring.datasource.hikari.*} (application.yml),
     * bound here exactly as Spring Boot binds them for an external datasource, so both get the same limits.
     */
    @Bean(destroyMethod = "close")
    @ConfigurationProperties("spring.datasource.hikari")
    HikariDataSource dataSource(EmbeddedPostgresServer pg) {
        HikariDataSource pool = new HikariDataSource();
        pool.setJdbcUrl(pg.jdbcUrl());
        pool.setUsername(pg.user());
        pool.setPassword(pg.password());
        pool.setMaximumPoolSize(16);
        pool.setPoolName("pagewarden-embedded");
        return pool;
    }
}
