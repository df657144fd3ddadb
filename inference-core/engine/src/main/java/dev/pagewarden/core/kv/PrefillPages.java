package dev.pagewarden.core.kv;

/** The prefill stage's view of its pool: pages for a prompt while it is prefilled and sent, then back. */
public interface PrefillPages extends StagePages, PageGrants {
    int capacityPages();
}
