package dev.pagewarden.incident.disclosure;

import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The webhook settings and the one delivery client (resolving through the system resolver). */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(WebhookProperties.class)
class WebhookConfiguration {
    @Bean
    WebhookClient webhookClient(WebhookProperties properties) {
        return new WebhookClient(properties, WebhookClient.Resolver.SYSTEM);
    }
}
