package dev.pagewarden.platform.tenant;

import dev.pagewarden.db.embedded.EmbeddedPostgresServer;
import dev.pagewarden.db.schema.Migrations;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import org.postgresql.ds.PGSimpleDataSource;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Two replicas' {@link Quotas} over one real PostgreSQL (Bucket4j's backend): they share one limit; with the
 * database gone, each falls back to its half of the limit, answering within the shared-check timeout.
 */
class SharedQuotasTest {
    @TempDir
    Path tmp;

    private static TenantPrincipal tenant(String id, TenantLimits limits) {
        return new TenantPrincipal(id, "pw_x", limits);
    }

    private static int admitted(Quotas[] replicas, TenantPrincipal t, int attempts) {
        int admitted = 0;
        for (int i = 0; i < attempts; i++) {
            try {
                replicas[i % replicas.length].acquire(t, 1).close();
                admitted++;
            } catch (QuotaExceededException e) {
                assertThat(e.retryAfter()).as("a refusal says when to retry").isPositive();
            }
        }
        return admitted;
    }

    @Test
    void twoReplicasShareOneLimitAndFallBackToHalfEachWhenTheDatabaseIsGone() throws Exception {
        EmbeddedPostgresServer pg = EmbeddedPostgresServer.start(
                EmbeddedPostgresServer.Config.defaults().withDataDirectory(tmp.resolve("pg")));
        try (pg) {
            Migrations.migrate(pg.dataSource());
            Quotas a = new Quotas(new SharedBuckets(pg.dataSource(), Quotas.SHARED_TIMEOUT), 2, System::nanoTime);
            Quotas b = new Quotas(new SharedBuckets(pg.dataSource(), Quotas.SHARED_TIMEOUT), 2, System::nanoTime);
            try (a; b) {
                Quotas[] both = {a, b};
                TenantPrincipal ten = tenant("t_shared", new TenantLimits(10, null, null, null));
                assertThat(admitted(both, ten, 30)).as("10 requests a minute across both replicas").isEqualTo(10);
                for (Quotas q : both) { // each replica reports the shared bucket as its last check saw it
                    assertThat(q.rateLimits(ten).requests().limit()).isEqualTo(10);
                    assertThat(q.rateLimits(ten).requests().remaining()).isLessThanOrEqualTo(1);
                }

                // tokens: one replica's charge is seen by the other; unused tokens come back to both
                TenantPrincipal tok = tenant("t_tokens", new TenantLimits(null, 100, null, null));
                Quotas.Permit big = a.acquire(tok, 90);
                assertThatThrownBy(() -> b.acquire(tok, 20)).isInstanceOf(QuotaExceededException.class)
                        .hasMessageContaining("100 tokens per minute");
                assertThat(b.rateLimits(tok).tokens().remaining()).as("what B's refused check saw").isBetween(10L, 19L);
                big.release(10);
                long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
                boolean refunded = false;
                while (!refunded && System.nanoTime() < deadline) { // the refund is written in the background
                    try {
                        b.acquire(tok, 60).close();
                        refunded = true;
                    } catch (QuotaExceededException e) {
                        Thread.sleep(20);
                    }
                }
                assertThat(refunded).as("80 unused tokens given back through replica A, used through B").isTrue();

                pg.close();
                TenantPrincipal down = tenant("t_down", new TenantLimits(10, null, null, null));
                long worst = 0;
                int admittedDown = 0;
                for (int i = 0; i < 10; i++) {
                    long t0 = System.nanoTime();
                    try {
                        a.acquire(down, 1).close();
                        admittedDown++;
                    } catch (QuotaExceededException e) {
                        assertThat(e.getMessage()).contains("this replica's share");
                    }
                    worst = Math.max(worst, System.nanoTime() - t0);
                }
                assertThat(admittedDown).as("replica A's half of 10 while PostgreSQL is gone").isEqualTo(5);
                assertThat(Duration.ofNanos(worst)).as("no check waits past the shared timeout (+ scheduling slack)")
                        .isLessThan(Quotas.SHARED_TIMEOUT.plusSeconds(2));
            }
        }
    }

    @Test
    void aDatabaseThatNeverAnswersCostsEachCheckAtMostTheTimeoutThenTheShareApplies() throws Exception {
        // accepts connections and never says a word: a frozen server as the driver sees it
        try (ServerSocket silent = new ServerSocket(0)) {
            Thread.ofPlatform().daemon().start(() -> {
                java.util.List<java.net.Socket> held = new java.util.ArrayList<>();
                try {
                    while (true) {
                        held.add(silent.accept());
                    }
                } catch (java.io.IOException closed) {
                    held.forEach(sock -> {
                        try {
                            sock.close();
                        } catch (java.io.IOException ignored) {
                            // closing anyway
                        }
                    });
                }
            });
            PGSimpleDataSource frozen = new PGSimpleDataSource();
            frozen.setUrl("jdbc:postgresql://127.0.0.1:" + silent.getLocalPort() + "/postgres");
            frozen.setUser("postgres");
            try (Quotas q = new Quotas(new SharedBuckets(frozen, Quotas.SHARED_TIMEOUT), 4, System::nanoTime)) {
                TenantPrincipal t = tenant("t_frozen", new TenantLimits(8, null, null, null));
                long t0 = System.nanoTime();
                q.acquire(t, 1).close();
                q.acquire(t, 1).close();
                assertThatThrownBy(() -> q.acquire(t, 1)).isInstanceOf(QuotaExceededException.class)
                        .hasMessageContaining("8 requests per minute").hasMessageContaining("this replica's share");
                assertThat(q.rateLimits(t).requests()).as("the share in force is what the headers report")
                        .extracting(Quotas.RateWindow::limit, Quotas.RateWindow::remaining).containsExactly(2L, 0L);
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("three checks, each bounded by the timeout")
                        .isLessThan(Quotas.SHARED_TIMEOUT.multipliedBy(3).plusSeconds(2));
            }
        }
    }
}
