package dev.pagewarden.platform.adminport;

import dev.pagewarden.adminui.AdminUiConfiguration;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;

/** Brings the admin UI module (its own package) into the platform's context. */
@Configuration(proxyBeanMethods = false)
@Import(AdminUiConfiguration.class)
class AdminUiWiring {
}
