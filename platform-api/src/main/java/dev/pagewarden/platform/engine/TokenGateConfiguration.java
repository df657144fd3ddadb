package dev.pagewarden.platform.engine;

import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** Lives beside the gate, not in config: config is read by the engine, so it must not read the engine back. */
@Configuration(proxyBeanMethods = false)
class TokenGateConfiguration {
    /** Production lets every token through at once; tests replace this bean to hold a request mid-generation. */
    @Bean
    TokenGate tokenGate() {
        return TokenGate.OPEN;
    }
}
