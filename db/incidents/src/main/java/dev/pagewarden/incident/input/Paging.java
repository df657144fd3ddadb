package dev.pagewarden.incident.input;

import java.util.List;

/** One page of a list: page numbers from 1; sizes capped so one page can never be the whole table. */
public record Paging(int page, int size) {
    public static final int DEFAULT_SIZE = 25;
    public static final int MAX_SIZE = 200;

    public Paging {
        if (page < 1) {
            throw new IllegalArgumentException("'page' must be 1 or more");
        }
        if (size < 1 || size > MAX_SIZE) {
            throw new IllegalArgumentException("'size' must be between 1 and " + MAX_SIZE);
        }
    }

    /** From request parameters: absent means the first page of {@link #DEFAULT_SIZE}. */
    public static Paging of(Integer page, Integer size) {
        return new Paging(page == null ? 1 : page, size == null ? DEFAULT_SIZE : size);
    }

    public long offset() {
        return (long) (page - 1) * size;
    }

    /** This page of an in-memory list (for lists built in memory, such as grouped results). */
    public <T> Page<T> slice(List<T> all) {
        int from = (int) Math.min(offset(), all.size());
        return new Page<>(all.subList(from, Math.min(from + size, all.size())), all.size(), this);
    }

    /** The rows of one page and how many there are in all. */
    public record Page<T>(List<T> rows, long total, Paging paging) {
        public Page {
            rows = List.copyOf(rows);
        }

        public int pages() {
            return (int) Math.max(1, (total + paging.size() - 1) / paging.size());
        }

        public boolean hasPrevious() {
            return paging.page() > 1;
        }

        public boolean hasNext() {
            return paging.page() < pages();
        }

        /** 1-based position of the first row shown (0 when none). */
        public long firstShown() {
            return rows.isEmpty() ? 0 : paging.offset() + 1;
        }

        public long lastShown() {
            return paging.offset() + rows.size();
        }
    }
}
