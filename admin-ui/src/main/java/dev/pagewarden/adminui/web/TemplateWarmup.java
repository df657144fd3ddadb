package dev.pagewarden.adminui.web;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.logging.LogLevel;
import org.springframework.boot.logging.LoggingSystem;
import org.springframework.stereotype.Component;
import org.thymeleaf.ITemplateEngine;
import org.thymeleaf.context.Context;

import java.util.List;
import java.util.Set;

/**
 * Thymeleaf initialises itself and reads each template from the jar on first use, and WebFlux may
 * render on an event-loop thread: parse every page (and so its fragments) at start instead, on this
 * thread, into the template cache. Rendering without a request fails after parsing; that is expected.
 */
@Component
class TemplateWarmup implements SmartInitializingSingleton {
    private static final Logger LOG = LoggerFactory.getLogger(TemplateWarmup.class);
    static final List<String> PAGES = List.of("login", "error", "overview", "incidents", "incident", "disclosures",
            "disclosure", "status", "users", "audit", "audit-request", "tenants", "tenant", "lab", "holds");

    private static final String THYMELEAF_ENGINE_LOGGER = "org.thymeleaf.TemplateEngine";

    static final List<String> FRAGMENTS = List.of("head", "nav", "csrf");

    private final ITemplateEngine engine;

    TemplateWarmup(ITemplateEngine engine) {
        this.engine = engine;
    }

    private void warm(String template, Set<String> selectors) {
        try {
            engine.process(template, selectors, new Context());
        } catch (RuntimeException expected) {
            LOG.trace("warm-up render of {} {} stopped (no request): {}", template, selectors, expected.getMessage());
        }
    }

    @Override
    public void afterSingletonsInstantiated() {
        // Thymeleaf logs every failed render as an error; these failures are the expected end of a warm-up
        LoggingSystem logging = LoggingSystem.get(getClass().getClassLoader());
        logging.setLogLevel(THYMELEAF_ENGINE_LOGGER, LogLevel.OFF);
        try {
            for (String page : PAGES) {
                warm("admin/" + page, Set.of());
            }
            // fragments are cached per selector
            for (String fragment : FRAGMENTS) {
                warm("admin/fragments", Set.of(fragment));
            }
            warm("admin/overview", Set.of("panel"));
        } finally {
            logging.setLogLevel(THYMELEAF_ENGINE_LOGGER, null);
        }
    }
}
