package dev.pagewarden.core.template;

import dev.pagewarden.core.request.InvalidRequestException;

/**
 * The model's chat template refused the conversation through {@code raise_exception} (for example roles
 * that do not alternate): the request's fault, so it is an invalid request carrying the template's own words.
 */
public final class ChatTemplateRejectedException extends InvalidRequestException {
    private final String templateMessage;

    public ChatTemplateRejectedException(String templateMessage) {
        super("messages", "the model's chat template rejected the conversation: " + templateMessage);
        this.templateMessage = templateMessage;
    }

    /** The text the template passed to {@code raise_exception}. */
    public String templateMessage() {
        return templateMessage;
    }
}
