package dev.pagewarden.platform.database;

import dev.pagewarden.platform.config.PagewardenProperties;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.context.annotation.Import;

/**
 * The platform's datasource alone, for commands of the platform jar ({@code audit verify}): the same
 * settings as the server ({@code spring.datasource.*}, or the embedded PostgreSQL under the platform's
 * home when none is set), no web server, no engine, no migrations. Deliberately not a {@code @Configuration}:
 * the server's component scan must not pick it up (its imports are processed when it is a source).
 */
@EnableConfigurationProperties(PagewardenProperties.class)
@Import(EmbeddedDatabaseConfiguration.class)
@ImportAutoConfiguration(DataSourceAutoConfiguration.class)
public class CommandDatabase {
}
