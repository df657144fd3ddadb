package dev.pagewarden.core.transfer;

import dev.pagewarden.core.kv.PageRef;

import java.lang.foreign.MemorySegment;

/**
 * One page on the wire from prefill to decode, tagged so that the receiver can tell exactly which
 * request, which transfer attempt and which page of the reservation it belongs to.
 *
 * @param requestId  owner request
 * @param generation transfer attempt; frames of an older attempt are stale
 * @param pageIndex  index in the request's page table (not a physical page number)
 * @param tokens     token slots of the page this frame fills
 * @param crc32c     CRC32C of {@code bytes}, computed at the sender
 * @param bytes      the page contents
 * @param writers    the source page's writer shadow, travelling with its bytes (see {@code KvStorage})
 * @param source     the sending pool's page (with its epoch), for the lineage of the copy
 * @param sourcePool the sending pool's name
 */
public record PageFrame(long requestId, int generation, int pageIndex, int tokens, int crc32c, MemorySegment bytes,
                        long[] writers, PageRef source, String sourcePool) {
}
