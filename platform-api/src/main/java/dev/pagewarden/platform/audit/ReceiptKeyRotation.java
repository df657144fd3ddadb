package dev.pagewarden.platform.audit;

import dev.pagewarden.core.receipt.ReceiptKeyStore;
import dev.pagewarden.db.audit.ReceiptKeyRegistry;
import dev.pagewarden.incident.audit.AdminAuditLog;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.sql.SQLException;
import java.util.Optional;

/**
 * Rotates this replica's receipt signing key and retires keys, at runtime. A new key is registered in PostgreSQL
 * before it is stored and before it signs anything (fail closed: no registration, no rotation); the key it
 * replaces is then marked superseded, which is what lets an operator retire it. Both are in the admin audit.
 * Blocking (files and JDBC): call off the event loop.
 */
final class ReceiptKeyRotation {
    private static final Logger LOG = LoggerFactory.getLogger(ReceiptKeyRotation.class);

    /** A rotation's outcome: the key signing before and the one signing now. */
    record Rotated(String previous, String current, String node) {
    }

    private final ReceiptKeyStore store;
    private final ReceiptKeyRegistry registry;
    private final String node;
    private final AdminAuditLog audit;

    ReceiptKeyRotation(ReceiptKeyStore store, ReceiptKeyRegistry registry, String node, AdminAuditLog audit) {
        this.store = store;
        this.registry = registry;
        this.node = node;
        this.audit = audit;
    }

    String currentKeyId() {
        return store.keys().currentKeyId();
    }

    /** Makes a new signing key for this replica; {@code actor} goes to the admin audit (null: none written). */
    synchronized Rotated rotate(String actor, String why) throws IOException, SQLException {
        Rotated r = rotate(store, registry, node);
        if (actor != null) {
            audit.record(actor, "receipt_key.rotate", r.current(), "node " + node + ", replaces " + r.previous()
                    + (why == null ? "" : "; " + why));
        }
        return r;
    }

    /** Rotates {@code store}'s key with the new public key registered first (also used at start). */
    static Rotated rotate(ReceiptKeyStore store, ReceiptKeyRegistry registry, String node) throws IOException, SQLException {
        String previous = store.keys().currentKeyId();
        String current;
        try {
            current = store.rotate((keyId, pair, endorsement) -> {
                try {
                    registry.register(keyId, pair.getPublic(), node, endorsement);
                } catch (SQLException | IllegalStateException e) {
                    throw new IOException("the new receipt key " + keyId + " could not be registered in PostgreSQL "
                            + "(receipt_keys), so it does not sign: " + e.getMessage(), e);
                }
            });
        } catch (IOException e) {
            if (e.getCause() instanceof SQLException sql) {
                throw sql;
            }
            throw e;
        }
        try {
            registry.supersede(previous);
        } catch (SQLException e) {
            // the old key signs nothing any more; its row says so after this replica's next start
            LOG.warn("receipt key {} replaced by {}, but not yet marked superseded in PostgreSQL: {}", previous, current,
                    e.getMessage());
        }
        LOG.info("receipt signing key of node {} rotated: {} -> {} (registered before its first signature)", node,
                previous, current);
        return new Rotated(previous, current, node);
    }

    /**
     * The key {@code store} may sign with: its current key, unless an operator retired that one (a key folder
     * restored from a backup, or retired while this replica was down) - then a new key, rotated in first.
     */
    static String neverRetired(ReceiptKeyStore store, ReceiptKeyRegistry registry, String node) throws IOException, SQLException {
        String current = store.keys().currentKeyId();
        if (registry.lookup(current).map(k -> k.retiredAt() == null).orElse(true)) {
            return current;
        }
        LOG.warn("receipt signing key {} of {} is retired in PostgreSQL; rotating before signing anything", current,
                store.directory());
        return rotate(store, registry, node).current();
    }

    /**
     * Retires {@code keyId} (any replica's): nothing signs with it again, receipts it signed still verify.
     *
     * @return empty when no replica registered it
     * @throws ReceiptKeyRegistry.StillSigning it is a replica's signing key: rotate that replica first
     */
    synchronized Optional<ReceiptKeyRegistry.RegisteredKey> retire(String actor, String keyId)
            throws SQLException, ReceiptKeyRegistry.StillSigning {
        if (keyId.equals(currentKeyId())) {
            throw new ReceiptKeyRegistry.StillSigning("receipt key " + keyId + " is this replica's signing key (node "
                    + node + "); rotate first (POST /admin/api/receipt-keys/rotate), then retire it");
        }
        Optional<ReceiptKeyRegistry.RegisteredKey> retired = registry.retire(keyId);
        retired.ifPresent(k -> audit.record(actor, "receipt_key.retire", keyId, "node " + k.node() + ", retired at "
                + k.retiredAt() + "; receipts it signed still verify"));
        return retired;
    }
}
