package dev.pagewarden.db.audit;

import java.time.Instant;

/**
 * A read of KV data last written by a request of another tenant: {@code slots} slots of page
 * (node, worker, page, readEpoch) read by {@code readerRequest}, holding data {@code exposingRequest} wrote in
 * {@code writerEpoch} (the previous owner's epoch in the 2026 bug).
 */
public record Exposure(String exposedTenant, long exposingRequest, String readerTenant, long readerRequest, String node, String worker,
                       int page, long readEpoch, long writerEpoch, int slots, Instant readAt, Instant writtenAt) {
}
