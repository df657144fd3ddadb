package dev.pagewarden.core.backend;

import dev.pagewarden.core.kv.PageRef;

import java.util.List;

/**
 * One sequence's share of a forward step: run {@code tokens} at positions {@code startPos ..},
 * writing their K/V into the pages of {@code pageTable} and attending over positions
 * {@code 0 .. startPos + tokens.length - 1}. A prefill chunk has many tokens; a decode step has one.
 *
 * @param requestId  owner of the pages (read checks compare it with the page tags)
 * @param tenant     the owner's tenant
 * @param tokens     input token ids
 * @param startPos   position of {@code tokens[0]}
 * @param pageTable  the sequence's pages in position order
 * @param wantLogits whether the caller needs logits of the last token
 * @param scope      the cache scope whose cached prefix pages the table may hold ({@code CacheScope.id()}); null: none
 */
public record SequenceStep(long requestId, String tenant, int[] tokens, int startPos, List<PageRef> pageTable, boolean wantLogits,
                           String scope) {
    /** A step that reads only the request's own pages. */
    public SequenceStep(long requestId, String tenant, int[] tokens, int startPos, List<PageRef> pageTable, boolean wantLogits) {
        this(requestId, tenant, tokens, startPos, pageTable, wantLogits, null);
    }

    public SequenceStep {
        if (tokens.length == 0) {
            throw new IllegalArgumentException("a step needs at least one token");
        }
        pageTable = List.copyOf(pageTable);
    }

    public int endPos() {
        return startPos + tokens.length;
    }
}
