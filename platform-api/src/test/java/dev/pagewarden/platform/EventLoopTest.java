package dev.pagewarden.platform;

import dev.pagewarden.platform.testing.EventLoopGuard;
import dev.pagewarden.platform.testing.PlatformTest;
import org.junit.jupiter.api.Test;
import org.springframework.http.MediaType;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The event loop never blocks: the guard (BlockHound) is armed for every platform test; here it
 * proves it would catch a blocking call, and the API's heaviest paths run clean under it.
 */
class EventLoopTest extends PlatformTest {

    @Test
    void theGuardCatchesBlockingOnANonBlockingThread() {
        assertThatThrownBy(() -> Mono.fromCallable(() -> {
                    Thread.sleep(1);
                    return 1;
                }).subscribeOn(Schedulers.parallel()).block())
                .hasMessageContaining("blocking call");
    }

    @Test
    void completionsAuditAndAdminRunWithoutBlockingTheEventLoop() {
        int before = EventLoopGuard.violations().size();
        String[] tenant = newTenant("non-blocking");
        Map<?, ?> body = as(tenant[1]).post().uri("/v1/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "prompt", "Once upon a time", "max_tokens", 8, "stream", false))
                .exchange().expectStatus().isOk().expectBody(Map.class).returnResult().getResponseBody();
        as(tenant[1]).post().uri("/v1/chat/completions").contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of("model", MODEL, "stream", true, "max_tokens", 8,
                        "messages", java.util.List.of(Map.of("role", "user", "content", "hi"))))
                .exchange().expectStatus().isOk().expectBody(String.class).returnResult();
        as(tenant[1]).get().uri("/v1/audit/requests/" + body.get("id")).exchange().expectStatus().isOk();
        as(tenant[1]).get().uri("/v1/models").exchange().expectStatus().isOk();
        admin().get().uri("/admin/api/tenants").exchange().expectStatus().isOk();
        var management = client(managementUrl(), java.time.Duration.ofSeconds(30)).mutate()
                .defaultHeader("Authorization", "Bearer " + ADMIN_TOKEN).build();
        management.get().uri("/actuator/health").exchange().expectStatus().isOk();
        management.get().uri("/actuator/prometheus").exchange().expectStatus().isOk();
        assertThat(EventLoopGuard.violations().subList(before, EventLoopGuard.violations().size())).isEmpty();
        assertThat(EventLoopGuard.violations()).as("no test saw a blocking call").isEmpty();
    }
}
