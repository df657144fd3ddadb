package dev.pagewarden.adminui;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.FullyQualifiedAnnotationBeanNameGenerator;
import org.springframework.context.annotation.Configuration;

/** Everything the admin UI contributes; the platform imports this class. */
@Configuration(proxyBeanMethods = false)
// fully qualified bean names: the UI's controllers may share simple names with the platform's
@ComponentScan(nameGenerator = FullyQualifiedAnnotationBeanNameGenerator.class)
@EnableConfigurationProperties(AdminUiProperties.class)
public class AdminUiConfiguration {
}
