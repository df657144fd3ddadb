package dev.pagewarden.platform.testing;

import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Primary;

/** Replaces the production token gate with one the tests can arm. */
@TestConfiguration(proxyBeanMethods = false)
public class HoldingGateConfiguration {
    @Bean
    @Primary
    HoldingGate holdingGate() {
        return new HoldingGate();
    }
}
