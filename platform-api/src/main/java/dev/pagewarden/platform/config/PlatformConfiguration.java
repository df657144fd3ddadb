package dev.pagewarden.platform.config;

import dev.pagewarden.platform.engine.TokenGate;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import java.time.Clock;

@Configuration(proxyBeanMethods = false)
class PlatformConfiguration {
    @Bean
    Clock clock() {
        return Clock.systemUTC();
    }

    /** Production lets every token through at once; tests replace this bean to hold a request mid-generation. */
    @Bean
    TokenGate tokenGate() {
        return TokenGate.OPEN;
    }
}
