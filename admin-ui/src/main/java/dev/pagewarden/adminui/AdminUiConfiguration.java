package dev.pagewarden.adminui;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.ComponentScan;
import org.springframework.context.annotation.Configuration;

/** Everything the admin UI contributes; the platform imports this class. */
@Configuration(proxyBeanMethods = false)
@ComponentScan
@EnableConfigurationProperties(AdminUiProperties.class)
public class AdminUiConfiguration {
}
