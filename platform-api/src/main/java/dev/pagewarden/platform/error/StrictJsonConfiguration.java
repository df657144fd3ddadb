package dev.pagewarden.platform.error;

import org.springframework.boot.jackson.autoconfigure.JsonMapperBuilderCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import tools.jackson.core.StreamReadFeature;

/**
 * Request bodies are read strictly everywhere (tenant and admin API): a key given twice is an
 * error, never "last one wins" - two readers of one body could otherwise see different requests.
 */
@Configuration(proxyBeanMethods = false)
class StrictJsonConfiguration {
    @Bean
    JsonMapperBuilderCustomizer strictDuplicateKeys() {
        return builder -> builder.enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION);
    }
}
