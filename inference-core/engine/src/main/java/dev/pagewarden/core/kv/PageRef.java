package dev.pagewarden.core.kv;

/** A page table entry: a page and the epoch of the allocation it belongs to. A read checks both. */
public record PageRef(int page, long epoch) {
}
