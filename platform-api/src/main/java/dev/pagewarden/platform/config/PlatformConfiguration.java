package dev.pagewarden.platform.config;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;

@Configuration(proxyBeanMethods = false)
class PlatformConfiguration {
    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }
}
