package dev.pagewarden.adminui;

import dev.pagewarden.incident.IncidentsConfiguration;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigureOrder;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FullyQualifiedAnnotationBeanNameGenerator;
import org.springframework.core.Ordered;

/**
 * Everything the admin UI contributes, found by Spring Boot on the class path (the platform does not name it).
 * Ordered before Boot's own auto-configurations, so their conditions see the UI's beans (its PostgreSQL
 * session manager replaces Boot's in-memory one).
 */
@AutoConfiguration(after = IncidentsConfiguration.class)
@AutoConfigureOrder(Ordered.HIGHEST_PRECEDENCE)
// fully qualified bean names: the UI's controllers may share simple names with the platform's
@ComponentScan(nameGenerator = FullyQualifiedAnnotationBeanNameGenerator.class)
public class AdminUiConfiguration {
}
