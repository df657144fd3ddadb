package dev.pagewarden.platform.adminport;

import dev.pagewarden.incident.Blocking;
import dev.pagewarden.incident.disclosure.Disclosure;
import dev.pagewarden.incident.disclosure.DisclosureReviews;
import dev.pagewarden.incident.disclosure.DisclosureService;
import dev.pagewarden.incident.disclosure.Placeholders;
import dev.pagewarden.platform.error.ApiException;
import org.springframework.http.HttpStatus;
import org.springframework.security.core.Authentication;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.Callable;

/**
 * The disclosure workflow on the admin API, for automation: draft, edit, approve (a review), publish.
 * Four-eyes refusals answer 403 {@code four_eyes_reviewer_is_author} (an author may not review) and 409
 * {@code four_eyes_review_required} (no current review by someone else); the admin token is one person.
 */
@RestController
class DisclosureApiController {
    private final DisclosureService disclosures;
    private final DisclosureReviews reviews;

    DisclosureApiController(DisclosureService disclosures, DisclosureReviews reviews) {
        this.disclosures = disclosures;
        this.reviews = reviews;
    }

    @PostMapping("/admin/api/incidents/{incident}/disclosure")
    @ResponseStatus(HttpStatus.CREATED)
    Mono<Map<String, Object>> draft(@PathVariable long incident, Authentication who) {
        return call(() -> describe(disclosures.draft(incident, who.getName())));
    }

    @GetMapping("/admin/api/disclosures/{id}")
    Mono<Map<String, Object>> get(@PathVariable long id) {
        return call(() -> describe(disclosures.get(id)));
    }

    @PutMapping("/admin/api/disclosures/{id}")
    Mono<Map<String, Object>> edit(@PathVariable long id, @RequestBody Map<String, Object> body, Authentication who) {
        if (!(body.get("title") instanceof String title)) {
            throw ApiException.invalid("title", "'title' is required and must be a string");
        }
        if (!(body.get("body") instanceof String text)) {
            throw ApiException.invalid("body", "'body' is required and must be a string (Markdown)");
        }
        return call(() -> describe(disclosures.edit(id, title, text, who.getName())));
    }

    @PostMapping("/admin/api/disclosures/{id}/approve")
    Mono<Map<String, Object>> approve(@PathVariable long id, Authentication who) {
        return call(() -> describe(disclosures.approve(id, who.getName())));
    }

    @PostMapping("/admin/api/disclosures/{id}/publish")
    Mono<Map<String, Object>> publish(@PathVariable long id, Authentication who) {
        return call(() -> describe(disclosures.publish(id, who.getName())));
    }

    private Map<String, Object> describe(Disclosure d) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", d.id());
        out.put("object", "disclosure");
        out.put("incident", d.incidentId());
        out.put("version", d.version());
        out.put("status", d.status().name().toLowerCase(java.util.Locale.ROOT));
        out.put("title", d.title());
        out.put("body", d.body());
        out.put("created_by", d.createdBy());
        out.put("authors", reviews.authors(d));
        out.put("reviews", reviews.reviews(d).stream().map(r -> Map.of("reviewer", r.reviewer(), "at", r.at(),
                "version", r.version(), "current", r.current())).toList());
        out.put("four_eyes", reviews.fourEyes());
        out.put("published_at", d.publishedAt());
        out.put("published_by", d.publishedBy());
        return out;
    }

    private static <T> Mono<T> call(Callable<T> work) {
        return Blocking.call(work).onErrorMap(e -> switch (e) {
            case DisclosureReviews.Refusal r when r.forbidden() ->
                    ApiException.forbidden(r.code(), r.getMessage());
            case DisclosureReviews.Refusal r -> ApiException.conflict(r.code(), r.getMessage());
            case Placeholders.Unfilled u -> ApiException.conflict("placeholders_left", u.getMessage());
            case NoSuchElementException n -> ApiException.notFound(null, "not_found", n.getMessage());
            default -> e;
        });
    }
}
