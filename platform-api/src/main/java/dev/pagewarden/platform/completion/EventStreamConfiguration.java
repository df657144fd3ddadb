package dev.pagewarden.platform.completion;

import org.springframework.context.annotation.Configuration;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.web.reactive.config.WebFluxConfigurer;

/**
 * Streams are written by {@link EventStream.Writer} ({@code data: } with its space, as OpenAI's clients expect) and
 * {@link ResponseEventStream.Writer} (the Responses API's typed events).
 */
@Configuration(proxyBeanMethods = false)
class EventStreamConfiguration implements WebFluxConfigurer {
    @Override
    public void configureHttpMessageCodecs(ServerCodecConfigurer configurer) {
        configurer.customCodecs().register(new EventStream.Writer());
        configurer.customCodecs().register(new ResponseEventStream.Writer());
    }
}
