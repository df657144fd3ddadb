package dev.pagewarden.core.cluster;

import dev.pagewarden.core.request.InvalidRequestException;
import dev.pagewarden.core.request.RequestAbortedException;
import dev.pagewarden.core.request.RequestFailedException;
import dev.pagewarden.core.request.RequestRejectedException;
import dev.pagewarden.core.transfer.net.ControlMessage;

import java.util.concurrent.CompletionException;

/** How a request's end crosses the wire: the exception a node's engine ended it with, and back, same type and code. */
final class Outcomes {
    private Outcomes() {
    }

    /** An invalid request's parameter and code in one field. */
    static String invalidCode(String param, String code) {
        return param + "/" + code;
    }

    static ControlMessage.Failed failed(long requestId, Throwable error) {
        Throwable e = error instanceof CompletionException c && c.getCause() != null ? c.getCause() : error;
        return switch (e) {
            case RequestRejectedException r -> new ControlMessage.Failed(requestId, ControlMessage.Outcome.REJECTED, r.code(),
                    r.getMessage());
            case RequestFailedException f -> new ControlMessage.Failed(requestId, ControlMessage.Outcome.FAILED, f.code(),
                    f.getMessage());
            case RequestAbortedException a -> new ControlMessage.Failed(requestId, ControlMessage.Outcome.ABORTED, "aborted",
                    a.getMessage());
            case InvalidRequestException i -> new ControlMessage.Failed(requestId, ControlMessage.Outcome.INVALID,
                    invalidCode(i.param(), i.code()), i.getMessage());
            default -> new ControlMessage.Failed(requestId, ControlMessage.Outcome.FAILED, "engine_error", String.valueOf(e));
        };
    }

    /** The exception a request ended with on its node, as the local engine would have thrown it. */
    static RuntimeException exception(ControlMessage.Failed f) {
        return switch (f.outcome()) {
            case REJECTED -> new RequestRejectedException(f.code(), f.message());
            case FAILED -> new RequestFailedException(f.code(), f.message());
            case ABORTED -> new RequestAbortedException(f.message());
            case INVALID -> {
                int slash = f.code().indexOf('/');
                yield slash < 0 ? new InvalidRequestException(f.code(), f.message())
                        : new InvalidRequestException(f.code().substring(0, slash), f.code().substring(slash + 1), f.message());
            }
        };
    }
}
