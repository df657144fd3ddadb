package dev.pagewarden.adminui.web;

import org.springframework.stereotype.Component;
import org.thymeleaf.context.IExpressionContext;
import org.thymeleaf.dialect.AbstractDialect;
import org.thymeleaf.dialect.IExpressionObjectDialect;
import org.thymeleaf.expression.IExpressionObjectFactory;

import java.time.Clock;
import java.time.ZoneId;
import java.util.Set;

/** Makes {@link When} available to every admin template as {@code #when}, in the server's time zone. */
@Component
class WhenDialect extends AbstractDialect implements IExpressionObjectDialect {
    private static final String NAME = "when";
    private final When when;

    WhenDialect(Clock clock) {
        super("pagewarden-when");
        this.when = new When(clock, ZoneId.systemDefault());
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
