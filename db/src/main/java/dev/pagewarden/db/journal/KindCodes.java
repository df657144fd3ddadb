package dev.pagewarden.db.journal;

import dev.pagewarden.core.lineage.LineageEvent.Kind;

/**
 * Stable numeric codes of lineage kinds, shared by the journal encoding and the {@code kv_lineage.kind}
 * column (see the V1, V4.5, V7.7.1 and V7.7.2 migrations, table {@code lineage_kinds}). Written out, not {@code ordinal()}: reordering
 * the engine's enum must not relabel journals on disk or history in the database.
 */
public final class KindCodes {
    public static final short ALLOCATE = 0, WRITE = 1, TRANSFER_OUT = 2, TRANSFER_IN = 3, VERIFY = 4, BIND_READ = 5,
            RELEASE = 6, DEFER = 7, DRAIN = 8, QUARANTINE = 9, SCRUB = 10, READ_FINAL = 11,
            PREEMPT = 12, CACHE = 13, REUSE = 14;

    private KindCodes() {
    }

    public static short code(Kind kind) {
        return switch (kind) {
            case ALLOCATE -> ALLOCATE;
            case WRITE -> WRITE;
            case TRANSFER_OUT -> TRANSFER_OUT;
            case TRANSFER_IN -> TRANSFER_IN;
            case VERIFY -> VERIFY;
            case BIND_READ -> BIND_READ;
            case RELEASE -> RELEASE;
            case DEFER -> DEFER;
            case DRAIN -> DRAIN;
            case QUARANTINE -> QUARANTINE;
            case SCRUB -> SCRUB;
            case READ_FINAL -> READ_FINAL;
            case PREEMPT -> PREEMPT;
            case CACHE -> CACHE;
            case REUSE -> REUSE;
        };
    }

    public static Kind kind(int code) {
        return switch (code) {
            case ALLOCATE -> Kind.ALLOCATE;
            case WRITE -> Kind.WRITE;
            case TRANSFER_OUT -> Kind.TRANSFER_OUT;
            case TRANSFER_IN -> Kind.TRANSFER_IN;
            case VERIFY -> Kind.VERIFY;
            case BIND_READ -> Kind.BIND_READ;
            case RELEASE -> Kind.RELEASE;
            case DEFER -> Kind.DEFER;
            case DRAIN -> Kind.DRAIN;
            case QUARANTINE -> Kind.QUARANTINE;
            case SCRUB -> Kind.SCRUB;
            case READ_FINAL -> Kind.READ_FINAL;
            case PREEMPT -> Kind.PREEMPT;
            case CACHE -> Kind.CACHE;
            case REUSE -> Kind.REUSE;
            default -> throw new IllegalArgumentException("unknown lineage kind code " + code);
        };
    }
}
