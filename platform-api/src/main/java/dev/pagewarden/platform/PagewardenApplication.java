package dev.pagewarden.platform;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.ConfigurationPropertiesScan;
import org.springframework.boot.security.autoconfigure.ReactiveUserDetailsServiceAutoConfiguration;

/**
 * The Pagewarden platform: the OpenAI-compatible tenant API, the admin API and the engine in one
 * process. With nothing configured it starts an embedded PostgreSQL and serves the model named by
 * {@code pagewarden.model.path} (or none yet, saying how to add one).
 */
@SpringBootApplication(exclude = ReactiveUserDetailsServiceAutoConfiguration.class)
@ConfigurationPropertiesScan
public class PagewardenApplication {

    public static void main(String[] args) {
        if (dev.pagewarden.platform.evidence.EvidenceCommand.handles(args)) { // audit verify, evidence verify: no server
            System.exit(dev.pagewarden.platform.evidence.EvidenceCommand.run(args, System.out, System.err));
        }
        SpringApplication.run(PagewardenApplication.class, args);
    }
}
