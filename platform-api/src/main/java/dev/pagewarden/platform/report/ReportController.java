package dev.pagewarden.platform.report;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.input.InvalidTextException;
import dev.pagewarden.incident.input.Times;
import dev.pagewarden.incident.report.OutsideReports;
import dev.pagewarden.incident.report.ProofOfWork;
import dev.pagewarden.incident.report.ReportProperties;
import dev.pagewarden.platform.error.ApiException;
import dev.pagewarden.platform.security.ClientAddress;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseBody;
import org.springframework.web.server.PayloadTooLargeException;
import org.springframework.web.server.ServerWebExchange;
import reactor.core.publisher.Mono;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The public intake for outside reports, no login: {@code GET /report} (the form, whose script solves
 * the proof of work), {@code GET /report/challenge}, {@code POST /report} (the form, or JSON) answering
 * an acknowledgement token, and {@code GET /report/{token}} (its status, HTML or JSON). Submissions and
 * status lookups are rate-limited per client address ({@link ReportLimits}); refusals are 400 and 429,
 * as a page for the form and as an OpenAI-style error body for JSON. A post a browser sends from another
 * site ({@code Origin} of another origin, or {@code Sec-Fetch-Site: cross-site}) is refused with 403: a page
 * elsewhere cannot make its visitors file reports.
 */
@Controller
class ReportController {
    private final OutsideReports reports;
    private final ReportLimits limits;
    private final ClientAddress addresses;
    private final ReportProperties properties;

    ReportController(OutsideReports reports, ReportLimits limits, ClientAddress addresses, ReportProperties properties) {
        this.reports = reports;
        this.limits = limits;
        this.addresses = addresses;
        this.properties = properties;
    }

    /** The form's fields as typed, to show them again after a refusal (Thymeleaf escapes them). */
    record Form(String contact, String description, String requestIds, String windowFrom, String windowTo) {
    }

    @GetMapping(value = "/report", produces = MediaType.TEXT_HTML_VALUE)
    Mono<String> form(ServerWebExchange exchange, Model model) {
        return Blocking.call(() -> formPage(exchange, model, null, null));
    }

    @GetMapping(value = "/report/challenge", produces = MediaType.APPLICATION_JSON_VALUE)
    @ResponseBody
    Mono<Map<String, Object>> challenge(ServerWebExchange exchange) {
        String client = addresses.of(exchange.getRequest());
        return Blocking.call(() -> {
            ProofOfWork.Challenge c = reports.challenge(client);
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("challenge", c.value());
            out.put("difficulty", c.difficulty());
            out.put("expires_at", c.expiresAt());
            out.put("solve", "find a nonce (1-32 letters or digits) such that SHA-256(challenge + \":\" + nonce) starts with "
                    + c.difficulty() + " zero bits; send it from this address before expires_at, once");
            return out;
        });
    }

    @PostMapping(value = "/report", consumes = MediaType.APPLICATION_FORM_URLENCODED_VALUE)
    Mono<String> submitForm(ServerWebExchange exchange, Model model) {
        if (crossSite(exchange)) {
            exchange.getResponse().setStatusCode(HttpStatus.FORBIDDEN);
            return Blocking.call(() -> formPage(exchange, model, null, CROSS_SITE));
        }
        String client = addresses.of(exchange.getRequest());
        Optional<Duration> wait = limits.take(ReportLimits.Kind.SUBMIT, client);
        if (wait.isPresent()) {
            tooMany(exchange, wait.get());
            model.addAttribute("error", tooManyMessage(wait.get()));
            return Blocking.call(() -> formPage(exchange, model, null, null));
        }
        return exchange.getFormData().onErrorResume(DataBufferLimitException.class, e -> {
            exchange.getResponse().setStatusCode(HttpStatus.PAYLOAD_TOO_LARGE);
            return Mono.empty();
        }).flatMap(data -> Blocking.call(() -> {
            Form form = new Form(data.getFirst("contact"), data.getFirst("description"), data.getFirst("request_ids"),
                    data.getFirst("window_from"), data.getFirst("window_to"));
            try {
                model.addAttribute("ack", reports.submit(submission(data::getFirst, client)));
                return "report/received";
            } catch (InvalidTextException e) {
                exchange.getResponse().setStatusCode(HttpStatus.BAD_REQUEST);
                return formPage(exchange, model, form, e.getMessage());
            }
        })).switchIfEmpty(Blocking.call(() -> formPage(exchange, model, null, TOO_LARGE)));
    }

    private static final String CROSS_SITE = "Reports are accepted from this site's own form, or from a client that "
            + "is not a browser page of another site.";

    /**
     * A browser's post from a page of another origin: its {@code Origin} is neither this request's own origin nor
     * the configured public URL's, or (no Origin, or the opaque "null") {@code Sec-Fetch-Site} says cross-site.
     */
    private boolean crossSite(ServerWebExchange exchange) {
        HttpHeaders h = exchange.getRequest().getHeaders();
        String origin = h.getOrigin();
        // "null": a page whose referrer policy is no-referrer (the report form itself) posts its forms so
        if (origin == null || "null".equals(origin)) {
            return "cross-site".equalsIgnoreCase(h.getFirst("Sec-Fetch-Site"));
        }
        java.net.URI own = exchange.getRequest().getURI();
        if (origin.equalsIgnoreCase(originOf(own))) {
            return false;
        }
        return properties.publicUrl() == null || !origin.equalsIgnoreCase(originOf(properties.publicUrl()));
    }

    private static String originOf(java.net.URI uri) {
        int port = uri.getPort();
        boolean defaultPort = port == -1 || (port == 80 && "http".equalsIgnoreCase(uri.getScheme()))
                || (port == 443 && "https".equalsIgnoreCase(uri.getScheme()));
        return uri.getScheme() + "://" + uri.getHost() + (defaultPort ? "" : ":" + port);
    }

    private static final String TOO_LARGE = "The report is too large: keep the description under the limit shown, "
            + "and send long material to the contact in /.well-known/security.txt.";

    /** A JSON body over the server's buffer limit: 413 with the error body, not a 500. */
    @ExceptionHandler({DataBufferLimitException.class, PayloadTooLargeException.class})
    @ResponseBody
    ResponseEntity<Object> tooLarge() {
        return error(ApiException.status(HttpStatus.PAYLOAD_TOO_LARGE, TOO_LARGE));
    }

    @PostMapping(value = "/report", consumes = MediaType.APPLICATION_JSON_VALUE)
    @ResponseBody
    Mono<ResponseEntity<Object>> submitJson(ServerWebExchange exchange, @RequestBody Map<String, Object> body) {
        if (crossSite(exchange)) {
            return Mono.just(error(ApiException.forbidden("cross_site_report", CROSS_SITE)));
        }
        String client = addresses.of(exchange.getRequest());
        Optional<Duration> wait = limits.take(ReportLimits.Kind.SUBMIT, client);
        if (wait.isPresent()) {
            return Mono.just(error(ApiException.rateLimited(tooManyMessage(wait.get()), wait.get())));
        }
        for (String key : body.keySet()) {
            if (!java.util.Set.of("contact", "description", "request_ids", "window_from", "window_to", "challenge", "nonce")
                    .contains(key)) {
                return Mono.just(error(ApiException.invalid(key, "unknown_parameter", "Unrecognized field: " + key)));
            }
        }
        return Blocking.call(() -> {
            try {
                OutsideReports.Acknowledgement ack = reports.submit(submission(field -> {
                    Object v = body.get(field);
                    if (v != null && !(v instanceof String)) {
                        throw new InvalidTextException(field, field + " must be a string");
                    }
                    return (String) v;
                }, client));
                Map<String, Object> out = new LinkedHashMap<>();
                out.put("object", "report.acknowledgement");
                out.put("token", ack.token());
                out.put("status", ack.status());
                out.put("received_at", ack.receivedAt());
                out.put("status_url", "/report/" + ack.token());
                out.put("note", "keep this token: it is shown only once and is the only way to follow the report");
                return ResponseEntity.status(HttpStatus.CREATED).header(HttpHeaders.LOCATION, "/report/" + ack.token())
                        .body((Object) out);
            } catch (InvalidTextException e) {
                return error(ApiException.invalid(e.field(), e.getMessage()));
            }
        });
    }

    @GetMapping(value = "/report/{token}", produces = MediaType.TEXT_HTML_VALUE)
    Mono<String> statusPage(@PathVariable String token, ServerWebExchange exchange, Model model) {
        Optional<Duration> wait = limits.take(ReportLimits.Kind.LOOKUP, addresses.of(exchange.getRequest()));
        if (wait.isPresent()) {
            tooMany(exchange, wait.get());
            model.addAttribute("error", tooManyMessage(wait.get()));
            return Blocking.call(() -> formPage(exchange, model, null, null));
        }
        return Blocking.call(() -> reports.status(token).map(view -> {
            model.addAttribute("view", view);
            return "report/status";
        }).orElseGet(() -> {
            exchange.getResponse().setStatusCode(HttpStatus.NOT_FOUND);
            return formPage(exchange, model, null, "No report has this token. Check that you copied all of it.");
        }));
    }

    @GetMapping(value = "/report/{token}", produces = MediaType.APPLICATION_JSON_VALUE)
    @ResponseBody
    Mono<ResponseEntity<Object>> statusJson(@PathVariable String token, ServerWebExchange exchange) {
        Optional<Duration> wait = limits.take(ReportLimits.Kind.LOOKUP, addresses.of(exchange.getRequest()));
        if (wait.isPresent()) {
            return Mono.just(error(ApiException.rateLimited(tooManyMessage(wait.get()), wait.get())));
        }
        return Blocking.call(() -> reports.status(token).map(view -> {
            Map<String, Object> out = new LinkedHashMap<>();
            out.put("object", "report.status");
            out.put("status", view.status());
            out.put("received_at", view.receivedAt());
            return ResponseEntity.ok((Object) out);
        }).orElseGet(() -> error(ApiException.notFound("token", "not_found", "no report has this token"))));
    }

    private String formPage(ServerWebExchange exchange, Model model, Form form, String error) {
        model.addAttribute("challenge", reports.challenge(addresses.of(exchange.getRequest())));
        model.addAttribute("form", form);
        model.addAttribute("maxDescription", properties.maxDescription());
        if (error != null) {
            model.addAttribute("error", error);
        }
        return "report/form";
    }

    private static OutsideReports.Submission submission(java.util.function.Function<String, String> field, String client) {
        return new OutsideReports.Submission(field.apply("contact"), field.apply("description"), field.apply("request_ids"),
                instant("window_from", field.apply("window_from")), instant("window_to", field.apply("window_to")),
                field.apply("challenge"), field.apply("nonce"), client);
    }

    /** An ISO-8601 instant ({@code 2026-01-31T10:00:00Z}); blank is none. */
    private static Instant instant(String field, String text) {
        if (text == null || text.isBlank()) {
            return null;
        }
        try {
            return Times.inRange(field, Instant.parse(text.strip()));
        } catch (DateTimeParseException e) {
            throw new InvalidTextException(field, field + " must be an ISO-8601 UTC time such as 2026-01-31T10:00:00Z");
        }
    }

    private static String tooManyMessage(Duration wait) {
        return "Too many reports or lookups from your address: try again in " + ApiException.retryAfterSeconds(wait)
                + " seconds.";
    }

    private static void tooMany(ServerWebExchange exchange, Duration wait) {
        exchange.getResponse().setStatusCode(HttpStatus.TOO_MANY_REQUESTS);
        exchange.getResponse().getHeaders().set(HttpHeaders.RETRY_AFTER, Long.toString(ApiException.retryAfterSeconds(wait)));
    }

    private static ResponseEntity<Object> error(ApiException e) {
        ResponseEntity.BodyBuilder b = ResponseEntity.status(e.status()).contentType(MediaType.APPLICATION_JSON);
        if (e.retryAfter() != null) {
            b.header(HttpHeaders.RETRY_AFTER, e.retryAfterSeconds());
        }
        return b.body(e.error().body());
    }
}
