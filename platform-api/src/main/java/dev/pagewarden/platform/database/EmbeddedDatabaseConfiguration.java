package dev.pagewarden.platform.database;

import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import dev.pagewarden.platform.config.PagewardenProperties;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Condition;
import org.springframework.context.annotation.ConditionContext;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.type.AnnotatedTypeMetadata;

import javax.sql.DataSource;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The embedded default: with no {@code spring.datasource.url} the platform runs a real PostgreSQL 17
 * (zonky binaries) whose data directory persists under {@code ~/.pagewarden/pg}, on a free port
 * unless {@code pagewarden.database.embedded-port} says otherwise. Never an in-memory stand-in.
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
    EmbeddedPostgres embeddedPostgres(PagewardenProperties properties) {
        Path dir = properties.embeddedDbDir().toAbsolutePath();
        try {
            Files.createDirectories(dir.getParent());
            EmbeddedPostgres.Builder builder = EmbeddedPostgres.builder()
                    .setDataDirectory(dir)
                    .setCleanDataDirectory(false)
                    .setPGStartupWait(Duration.ofSeconds(90))
                    .setServerConfig("max_connections", "60");
            if (properties.database().embeddedPort() > 0) {
                builder.setPort(properties.database().embeddedPort());
            }
            EmbeddedPostgres pg = builder.start();
            LOG.info("No spring.datasource.url set: started embedded PostgreSQL on port {} with data in {} "
                    + "(set SPRING_DATASOURCE_URL, _USERNAME, _PASSWORD to use your own server)", pg.getPort(), dir);
            return pg;
        } catch (IOException e) {
            throw new UncheckedIOException("could not start the embedded PostgreSQL in " + dir
                    + " (pagewarden.database.embedded-dir): " + e.getMessage(), e);
        }
    }

    @Bean(destroyMethod = "close")
    DataSource dataSource(EmbeddedPostgres pg) {
        HikariConfig config = new HikariConfig();
        config.setJdbcUrl("jdbc:postgresql://localhost:" + pg.getPort() + "/postgres");
        config.setUsername("postgres");
        config.setMaximumPoolSize(16);
        config.setPoolName("pagewarden-embedded");
        return new HikariDataSource(config);
    }
}
