package dev.pagewarden.adminui.web;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.annotation.Bean;
import org.springframework.stereotype.Component;
import org.thymeleaf.context.IExpressionContext;
import org.thymeleaf.dialect.AbstractDialect;
import org.thymeleaf.dialect.IExpressionObjectDialect;
import org.thymeleaf.expression.IExpressionObjectFactory;

import java.time.Clock;
import java.time.ZoneId;
import java.util.Set;

/**
 * Makes {@link When} available to every admin template as {@code #when}, in the operators' time zone:
 * {@code pagewarden.admin.time-zone} (an IANA name such as {@code Europe/Berlin}), by default the server's.
 */
@Component
class WhenDialect extends AbstractDialect implements IExpressionObjectDialect {
    private static final String NAME = "when";
    private final When when;

    WhenDialect(When when) {
        super("pagewarden-when");
        this.when = when;
    }

    /** The pages' times (also for charts drawn in Java). */
    @Bean
    static When when(Clock clock, @Value("${pagewarden.admin.time-zone:}") String zone) {
        try {
            return new When(clock, zone.isBlank() ? ZoneId.systemDefault() : ZoneId.of(zone.strip()));
        } catch (java.time.DateTimeException e) {
            throw new IllegalArgumentException("pagewarden.admin.time-zone: '" + zone + "' is not a time zone ("
                    + e.getMessage() + "); use an IANA name such as Europe/Berlin", e);
        }
    }

    @Override
    public IExpressionObjectFactory getExpressionObjectFactory() {
        return new IExpressionObjectFactory() {
            @Override
            public Set<String> getAllExpressionObjectNames() {
                return Set.of(NAME);
            }

            @Override
            public Object buildObject(IExpressionContext context, String expressionObjectName) {
                return NAME.equals(expressionObjectName) ? when : null;
            }

            @Override
            public boolean isCacheable(String expressionObjectName) {
                return true;
            }
        };
    }
}
