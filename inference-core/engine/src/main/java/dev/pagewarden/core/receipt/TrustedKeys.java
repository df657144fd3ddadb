package dev.pagewarden.core.receipt;

import java.security.GeneralSecurityException;
import java.security.PublicKey;
import java.security.Signature;
import java.time.Duration;
import java.time.Instant;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The receipt keys a verifier trusts: the pinned roots ({@link ReceiptTrust}) and every key reached from one through
 * {@link KeyEndorsement}s, each with the time its successor replaced it; plus every other key offered (by the
 * database, a key list, a bundle) with why it is not trusted.
 */
public final class TrustedKeys {
    /**
     * How long after its successor's endorsement a key's signature is still accepted: a receipt being signed while the
     * key rotates may carry a time just after the switch. Never a way around the rule: a forger picks the time anyway.
     */
    public static final Duration GRACE = Duration.ofMinutes(1);

    /**
     * A trusted key. {@code supersededAt}: when its successor (endorsed by it) replaced it, null while it is the end
     * of its chain; {@code legacy}: a pinned root that may have signed receipts without issue time; {@code endorsement}:
     * how it chains (null for a root).
     */
    public record TrustedKey(String keyId, PublicKey key, boolean root, boolean legacy, Instant supersededAt,
                             KeyEndorsement endorsement) {
    }

    /** A key offered for trust, with the endorsement by its predecessor (null for a chain's first key). */
    public record Candidate(PublicKey key, KeyEndorsement endorsement) {
    }

    private final Map<String, TrustedKey> trusted;
    private final Map<String, String> untrusted;

    private TrustedKeys(Map<String, TrustedKey> trusted, Map<String, String> untrusted) {
        this.trusted = Collections.unmodifiableMap(trusted);
        this.untrusted = Collections.unmodifiableMap(untrusted);
    }

    /** Keys a caller vouches for directly (tests, an explicit key list): every one a legacy root. */
    public static TrustedKeys pinned(Map<String, PublicKey> keys) {
        Map<String, TrustedKey> out = new LinkedHashMap<>();
        keys.forEach((id, k) -> out.put(id, new TrustedKey(id, k, true, true, null, null)));
        return new TrustedKeys(out, Map.of());
    }

    /**
     * Walks the key chains from {@code trust}'s roots through {@code candidates}' endorsements. A candidate is trusted
     * when it is a root with the root's public key, or its endorsement names a trusted key that signed it; the
     * endorsement's time ends the endorsing key's signing. Everything else lands in {@link #untrusted} with why.
     */
    public static TrustedKeys resolve(ReceiptTrust trust, Map<String, Candidate> candidates) {
        Map<String, TrustedKey> trusted = new LinkedHashMap<>();
        trust.roots().forEach((id, r) -> trusted.put(id, new TrustedKey(id, r.key(), true, r.legacy(), null, null)));
        Map<String, String> untrusted = new TreeMap<>();
        for (boolean grew = true; grew; ) {
            grew = false;
            for (var e : candidates.entrySet()) {
                String id = e.getKey();
                KeyEndorsement en = e.getValue().endorsement();
                if (trusted.containsKey(id) || en == null || !en.keyId().equals(id)) {
                    continue;
                }
                TrustedKey previous = trusted.get(en.previousId());
                if (previous != null && en.verifies(e.getValue().key(), previous.key())) {
                    trusted.put(id, new TrustedKey(id, e.getValue().key(), false, false, null, en));
                    Instant end = previous.supersededAt() == null || en.at().isBefore(previous.supersededAt())
                            ? en.at() : previous.supersededAt();
                    trusted.put(previous.keyId(), new TrustedKey(previous.keyId(), previous.key(), previous.root(),
                            previous.legacy(), end, previous.endorsement()));
                    grew = true;
                }
            }
        }
        for (var e : candidates.entrySet()) {
            String id = e.getKey();
            TrustedKey t = trusted.get(id);
            KeyEndorsement en = e.getValue().endorsement();
            if (t != null) {
                if (!Arrays.equals(t.key().getEncoded(), e.getValue().key().getEncoded())) {
                    untrusted.put(id, "the id of a pinned key, with another public key");
                }
            } else if (en == null) {
                untrusted.put(id, "not a pinned root and endorsed by no key");
            } else if (!trusted.containsKey(en.previousId())) {
                untrusted.put(id, "endorsed by " + en.previousId() + ", which does not chain to a pinned root");
            } else {
                untrusted.put(id, "its endorsement by " + en.previousId() + " does not verify");
            }
        }
        return new TrustedKeys(trusted, untrusted);
    }

    /** The trusted key {@code keyId}, or null. */
    public TrustedKey get(String keyId) {
        return trusted.get(keyId);
    }

    public Map<String, TrustedKey> trusted() {
        return trusted;
    }

    /** Offered keys that do not chain to a pinned root, by id, with why. */
    public Map<String, String> untrusted() {
        return untrusted;
    }

    /** Every trusted public key by id. */
    public Map<String, PublicKey> publicKeys() {
        Map<String, PublicKey> out = new LinkedHashMap<>();
        trusted.forEach((id, k) -> out.put(id, k.key()));
        return out;
    }

    /**
     * Why {@code receipt} does not verify, or null when it does: its key must be trusted, its digest and signature
     * right, and it must have been issued before its key was replaced (within {@link #GRACE}). A receipt without issue
     * time (version 1 or 2) verifies only against a legacy root.
     */
    public String refuse(Receipt receipt) {
        TrustedKey key = trusted.get(receipt.keyId());
        if (key == null) {
            String why = untrusted.get(receipt.keyId());
            return "receipt key " + receipt.keyId() + " does not chain to the pinned trust" + (why == null ? "" : ": " + why);
        }
        if (!ReceiptVerifier.verifySignature(receipt, Map.of(key.keyId(), key.key()))) {
            return "signature or digest invalid for key " + receipt.keyId();
        }
        Instant issued = receipt.body().issuedAt();
        if (issued == null) {
            return key.legacy() ? null : "a version " + receipt.body().version() + " receipt carries no issue time, and key "
                    + key.keyId() + " is not pinned as legacy: only keys from before issue times verify such receipts";
        }
        return late(key, issued, "issued");
    }

    /**
     * Why a signature made at {@code at} by {@code keyId} over {@code message} (a checkpoint, a summary, a manifest)
     * does not verify, or null when it does; same rules as {@link #refuse(Receipt)} ({@code at} null: a replaced key's
     * signature is refused).
     */
    public String refuse(String keyId, byte[] message, byte[] signature, Instant at) {
        TrustedKey key = keyId == null ? null : trusted.get(keyId);
        if (key == null) {
            String why = keyId == null ? null : untrusted.get(keyId);
            return "key " + keyId + " does not chain to the pinned trust" + (why == null ? "" : ": " + why);
        }
        try {
            Signature v = Signature.getInstance("Ed25519");
            v.initVerify(key.key());
            v.update(message);
            if (!v.verify(signature)) {
                return "signature does not verify with key " + keyId;
            }
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            return "signature does not verify with key " + keyId;
        }
        if (at == null) {
            // no signing time to hold against a replaced key: only the end of a chain signs undated
            return key.supersededAt() == null ? null : "signed at no stated time by key " + keyId + ", which was replaced at "
                    + key.supersededAt();
        }
        return late(key, at, "signed");
    }

    private static String late(TrustedKey key, Instant at, String what) {
        if (key.supersededAt() != null && at.isAfter(key.supersededAt().plus(GRACE))) {
            return what + " at " + at + " by key " + key.keyId() + ", which was replaced at " + key.supersededAt()
                    + " (a replaced key signs nothing new)";
        }
        return null;
    }
}
