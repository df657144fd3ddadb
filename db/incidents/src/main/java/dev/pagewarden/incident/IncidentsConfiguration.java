package dev.pagewarden.incident;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.AutoConfigureOrder;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FullyQualifiedAnnotationBeanNameGenerator;
import org.springframework.core.Ordered;

/**
 * The incident domain's services, found by Spring Boot on the class path: an application depending on this
 * module gets them without naming this class. Ordered first, so Boot's own auto-configurations see these
 * beans as the application's.
 */
@AutoConfiguration
@AutoConfigureOrder(Ordered.HIGHEST_PRECEDENCE)
// fully qualified bean names: the domain's services may share simple names with the application's
@ComponentScan(nameGenerator = FullyQualifiedAnnotationBeanNameGenerator.class)
@EnableConfigurationProperties(AdminProperties.class)
public class IncidentsConfiguration {
}
