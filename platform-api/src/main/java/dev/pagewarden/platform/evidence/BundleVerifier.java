package dev.pagewarden.platform.evidence;

import com.fasterxml.jackson.databind.JsonNode;
import dev.pagewarden.core.receipt.KeyEndorsement;
import dev.pagewarden.core.receipt.Receipt;
import dev.pagewarden.core.receipt.ReceiptTrust;
import dev.pagewarden.core.receipt.TrustedKeys;
import dev.pagewarden.db.evidence.Canonical;
import dev.pagewarden.db.evidence.Checkpoints;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.MessageDigest;
import java.security.PublicKey;
import java.security.spec.X509EncodedKeySpec;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Enumeration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

/**
 * {@code evidence verify FILE [--trust FILE] [--keys JWKS_FILE]}, offline: the zip's structure (every entry once,
 * every local entry in the central directory), every file's SHA-256 against the manifest, the manifest's signature,
 * each checkpoint's and receipt's signature (a receipt also naming the request and tenant of its row), every row's
 * hash against its chain link (or its batch's row hashes), and each chain from the exported rows up to a signed
 * checkpoint. Keys come from {@code --keys} (the JSON of {@code /.well-known/pagewarden-receipt-keys}) or else from the
 * bundle's own {@code keys.json}; with {@code --trust} (the operator's pinned roots) a key counts only when it chains
 * to a root, and a signature only when made before its key was replaced. Without {@code --trust} the keys given are
 * taken as they are, which proves integrity only against them, so the output says so.
 */
final class BundleVerifier {
    private BundleVerifier() {
    }

    /** What an intact bundle holds, and what is wrong with a broken one. */
    record Report(List<String> problems, List<String> notes) {
        boolean intact() {
            return problems.isEmpty();
        }
    }

    private static final String USAGE = "usage: evidence verify FILE [--trust FILE] [--keys JWKS_FILE]";

    static int run(String[] args, PrintStream out, PrintStream err) {
        if (args.length < 3) {
            throw new EvidenceCommand.UsageException(USAGE);
        }
        Path file = Path.of(args[2]);
        Path keys = null, trustFile = null;
        for (int i = 3; i < args.length; i++) {
            if (args[i].equals("--keys")) {
                keys = Path.of(EvidenceCommand.value(args, ++i));
            } else if (args[i].equals("--trust")) {
                trustFile = Path.of(EvidenceCommand.value(args, ++i));
            } else {
                throw new EvidenceCommand.UsageException(USAGE + "; unknown '" + args[i] + "'");
            }
        }
        Report r;
        try {
            ReceiptTrust trust = trustFile == null ? null : ReceiptTrust.read(trustFile);
            r = verify(file, trust, keys == null ? null : parseKeys(BundleFormat.JSON.readTree(Files.readAllBytes(keys))));
        } catch (Unreadable e) {
            err.println("evidence verify: " + file + " is unreadable: " + e.getMessage());
            return 2;
        } catch (IOException | IllegalArgumentException e) {
            err.println("evidence verify: could not read " + (trustFile != null ? trustFile + ", " : "") + (keys != null ? keys + " or " : "")
                    + file + ": " + e.getMessage());
            return 2;
        }
        r.notes().forEach(n -> out.println("note: " + n));
        if (r.intact()) {
            out.println("intact: " + file);
            return 0;
        }
        r.problems().forEach(p -> out.println("broken: " + p));
        return 1;
    }

    static final class Unreadable extends IOException {
        Unreadable(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * {@code trust}: the pinned roots, or null to take the keys as given; {@code offered}: the keys to use (with their
     * endorsements), or null to take the bundle's own {@code keys.json}.
     */
    static Report verify(Path file, ReceiptTrust trust, Map<String, TrustedKeys.Candidate> offered) throws IOException {
        List<String> problems = new ArrayList<>(), notes = new ArrayList<>();
        Map<String, byte[]> files = new LinkedHashMap<>();
        List<String> central = new ArrayList<>();
        try (ZipFile zip = new ZipFile(file.toFile())) {
            Enumeration<? extends ZipEntry> entries = zip.entries();
            while (entries.hasMoreElements()) {
                ZipEntry e = entries.nextElement();
                central.add(e.getName());
                if (files.containsKey(e.getName())) {
                    continue; // a duplicate name: refused below, whichever copy a reader would take
                }
                try (InputStream in = zip.getInputStream(e)) {
                    files.put(e.getName(), in.readAllBytes());
                } catch (IOException | RuntimeException x) {
                    problems.add(e.getName() + ": cannot be read back (" + x.getMessage() + ")");
                    files.put(e.getName(), null); // present but corrupt: named once, not again as missing
                }
            }
        } catch (IOException e) {
            throw new Unreadable("not a zip archive (" + e.getMessage() + ")", e);
        }
        structure(file, central, problems);
        if (!problems.isEmpty()) {
            return new Report(problems, notes); // which copy of a name is "the" file is then up to the reader: judge none
        }
        byte[] manifestBytes = files.get(BundleFormat.MANIFEST);
        byte[] sig = files.get(BundleFormat.SIGNATURE);
        if (manifestBytes == null || sig == null) {
            if (!problems.isEmpty()) {
                return new Report(problems, notes);
            }
            throw new Unreadable("no " + BundleFormat.MANIFEST + " and " + BundleFormat.SIGNATURE + ": not an evidence bundle", null);
        }
        JsonNode manifest;
        try {
            manifest = BundleFormat.JSON.readTree(manifestBytes);
        } catch (IOException e) {
            problems.add(BundleFormat.MANIFEST + ": not JSON any more (" + e.getMessage() + ")");
            return new Report(problems, notes);
        }
        if (offered == null) {
            byte[] k = files.get(BundleFormat.KEYS);
            offered = k == null ? Map.of() : parseKeys(BundleFormat.JSON.readTree(k));
            if (trust == null) {
                notes.add("keys taken from the bundle's own keys.json: compare their ids with /.well-known/pagewarden-receipt-keys, "
                        + "or pass that file with --keys");
            }
        }
        TrustedKeys keys;
        if (trust == null) {
            Map<String, PublicKey> given = new LinkedHashMap<>();
            offered.forEach((id, c) -> given.put(id, c.key()));
            keys = TrustedKeys.pinned(given);
            notes.add("no --trust: the keys are taken as given, not walked from the operator's pinned roots");
        } else {
            keys = TrustedKeys.resolve(trust, offered);
        }
        String keyId = manifest.path("key_id").asText(null);
        Instant created = instantOrNull(manifest.path("created_at").asText(null));
        String refused = keys.refuse(keyId, manifestBytes, decode(sig), created);
        if (refused != null) {
            problems.add(BundleFormat.MANIFEST + ": " + refused + " (manifest, signature or keys altered)");
        }
        Set<String> listed = new HashSet<>(List.of(BundleFormat.MANIFEST, BundleFormat.SIGNATURE));
        for (JsonNode f : manifest.path("files")) {
            String name = f.path("name").asText();
            listed.add(name);
            byte[] bytes = files.get(name);
            if (bytes == null) {
                if (!files.containsKey(name)) {
                    problems.add(name + ": listed in the manifest but missing");
                }
            } else if (!HexFormat.of().formatHex(Canonical.sha256(bytes)).equals(f.path("sha256").asText())) {
                problems.add(name + ": its SHA-256 differs from the manifest (file altered)");
            }
        }
        for (String name : files.keySet()) {
            if (!listed.contains(name)) {
                problems.add(name + ": not in the manifest (file added)");
            }
        }
        if (problems.isEmpty()) {
            chains(files, keys, problems, notes);
        }
        return new Report(problems, notes);
    }

    /**
     * Refuses a zip whose entries are not exactly its central directory, each name once: a reader walking local headers
     * (from the front) and one reading the central directory (from the back) must see the same files, so an entry
     * prepended, duplicated or hidden between them cannot make one reader see other contents than the verifier.
     */
    private static void structure(Path file, List<String> central, List<String> problems) throws IOException {
        Set<String> seen = new HashSet<>();
        for (String name : central) {
            if (!seen.add(name)) {
                problems.add(name + ": the zip holds more than one entry of this name");
            }
        }
        List<String> local = new ArrayList<>();
        try (var in = new java.util.zip.ZipInputStream(Files.newInputStream(file))) {
            for (ZipEntry e; (e = in.getNextEntry()) != null; ) {
                local.add(e.getName());
            }
        } catch (IOException | RuntimeException e) {
            problems.add("the zip's entries cannot be read in order from its start (" + e.getMessage() + ")");
            return;
        }
        if (!local.equals(central)) {
            List<String> extra = new ArrayList<>(local);
            central.forEach(extra::remove);
            problems.add("the zip's local entries " + local + " are not its central directory " + central
                    + (extra.isEmpty() ? "" : " (not in the directory: " + extra + ")"));
        }
    }

    /** Rows against links and batches, links and batches up to signed checkpoints. */
    private static void chains(Map<String, byte[]> files, TrustedKeys keys, List<String> problems, List<String> notes)
            throws IOException {
        byte[] chainsBytes = files.get("chains.json");
        if (chainsBytes == null) {
            return;
        }
        JsonNode chains = BundleFormat.JSON.readTree(chainsBytes);
        JsonNode checkpoints = tree(files, "checkpoints.json").path("checkpoints");
        List<JsonNode> rows = new ArrayList<>();
        for (String f : ROW_FILES) {
            tree(files, f).path("rows").forEach(rows::add);
        }
        JsonNode lineage = tree(files, "lineage.json").path("rows");
        Map<String, JsonNode> checkpoint = new HashMap<>();
        for (JsonNode k : checkpoints) {
            String chain = k.path("chain").asText();
            long seq = k.path("seq").asLong();
            Instant at = micros(k.path("at").asText());
            byte[] msg = Checkpoints.message(chain, seq, hex(k.path("head").asText()), at);
            String refused = keys.refuse(k.path("key_id").asText(), msg, decode(k.path("signature").asText().getBytes()), at);
            if (refused != null) {
                problems.add("checkpoint " + chain + "#" + seq + ": " + refused);
            } else {
                checkpoint.put(chain, k);
            }
        }
        // row links
        Map<String, List<JsonNode>> linksByChain = new TreeMap<>();
        Map<String, JsonNode> latestLink = new HashMap<>(); // table#row -> link
        for (JsonNode l : chains.path("links")) {
            linksByChain.computeIfAbsent(l.path("chain").asText(), c -> new ArrayList<>()).add(l);
            latestLink.merge(l.path("table").asText() + "#" + l.path("row_id").asLong(), l,
                    (a, b) -> b.path("seq").asLong() > a.path("seq").asLong() ? b : a);
        }
        linksByChain.forEach((chain, list) -> walk(chain, list, checkpoint.get(chain), l -> Canonical.linkHash(chain,
                l.path("seq").asLong(), l.path("table").asText(), l.path("row_id").asLong(), hex(l.path("row_hash").asText()),
                hex(l.path("prev_hash").asText())), problems, notes));
        for (JsonNode row : rows) {
            String table = row.path("table").asText();
            String id = table + "#" + row.path("id").asLong();
            JsonNode link = latestLink.get(id);
            byte[] h = Canonical.sha256(Canonical.encode(table, values(table, row.path("values"))));
            if (link == null) {
                problems.add(table + " row " + row.path("id").asLong() + ": no chain link in the bundle");
            } else if (!Arrays.equals(h, hex(link.path("row_hash").asText()))) {
                problems.add(table + " row " + row.path("id").asLong() + ": differs from what its chain link recorded");
            }
        }
        // lineage batches
        Map<String, List<JsonNode>> batchesByChain = new TreeMap<>();
        for (JsonNode b : chains.path("batches")) {
            batchesByChain.computeIfAbsent(b.path("chain").asText(), c -> new ArrayList<>()).add(b);
        }
        Map<String, JsonNode> batchOf = new HashMap<>();
        batchesByChain.forEach((chain, list) -> {
            for (JsonNode b : list) {
                batchOf.put(chain + "#" + b.path("seq").asLong(), b);
            }
            walk(chain, list, checkpoint.get(chain), b -> Canonical.batchHash(chain, b.path("seq").asLong(), b.path("day").asText(),
                    b.path("row_count").asInt(), micros(b.path("first_time").asText()), micros(b.path("last_time").asText()),
                    hex(b.path("rows_hash").asText()), hex(b.path("prev_hash").asText())), problems, notes);
        });
        Map<String, Set<String>> hashesOf = new HashMap<>();
        chains.path("batch_row_hashes").fields().forEachRemaining(e -> {
            JsonNode batch = batchOf.get(e.getKey());
            MessageDigest d = Canonical.digest();
            Set<String> set = new HashSet<>();
            int n = 0;
            for (JsonNode h : e.getValue()) {
                d.update(hex(h.asText()));
                set.add(h.asText());
                n++;
            }
            if (batch == null) {
                problems.add("lineage batch " + e.getKey() + ": row hashes given for a batch the bundle does not have");
            } else if (n != batch.path("row_count").asInt() || !Arrays.equals(d.digest(), hex(batch.path("rows_hash").asText()))) {
                problems.add("lineage batch " + e.getKey() + ": its row hashes do not make the batch's rows hash");
            }
            hashesOf.put(e.getKey(), set);
        });
        int unchained = 0;
        for (JsonNode row : lineage) {
            if (row.path("chain").isNull()) {
                unchained++;
                continue;
            }
            String key = row.path("chain").asText() + "#" + row.path("seq").asLong();
            String h = HexFormat.of().formatHex(Canonical.sha256(Canonical.encode("kv_lineage", values("kv_lineage", row.path("values")))));
            Set<String> set = hashesOf.get(key);
            if (set == null || !set.contains(h)) {
                problems.add("lineage row " + row.path("values").path("event_id").asText() + " (" + key + "): not among its batch's rows");
            }
        }
        for (JsonNode r : tree(files, "receipts.json").path("receipts")) {
            String compact = r.path("receipt").isNull() ? null : r.path("receipt").asText(null);
            if (compact != null) {
                String why = receiptProblem(compact, r.path("request_id").asLong(), r.path("tenant").asText(), keys);
                if (why != null) {
                    problems.add("receipt of request " + r.path("request_id").asText() + ": " + why);
                }
            }
        }
        if (unchained > 0) {
            notes.add(unchained + " lineage rows were shipped by an unchained writer: covered by the manifest signature only");
        }
    }

    /** One chain's elements in order: contiguous, each hash recomputed, each linked to the previous, ending at a checkpoint. */
    private static void walk(String chain, List<JsonNode> list, JsonNode checkpoint, java.util.function.Function<JsonNode, byte[]> recompute,
                             List<String> problems, List<String> notes) {
        list.sort((a, b) -> Long.compare(a.path("seq").asLong(), b.path("seq").asLong()));
        JsonNode prev = null;
        for (JsonNode e : list) {
            long seq = e.path("seq").asLong();
            if (!Arrays.equals(recompute.apply(e), hex(e.path("hash").asText()))) {
                problems.add(chain + "#" + seq + ": hash does not match its content");
            }
            if (prev != null && (prev.path("seq").asLong() != seq - 1 || !prev.path("hash").asText().equals(e.path("prev_hash").asText()))) {
                problems.add(chain + "#" + seq + ": does not follow " + chain + "#" + prev.path("seq").asLong());
            }
            prev = e;
        }
        if (prev == null) {
            return;
        }
        if (checkpoint == null) {
            notes.add(chain + " up to #" + prev.path("seq").asLong() + " is not covered by a signed checkpoint yet");
        } else if (checkpoint.path("seq").asLong() != prev.path("seq").asLong()
                || !checkpoint.path("head").asText().equals(prev.path("hash").asText())) {
            problems.add(chain + ": does not end at its signed checkpoint #" + checkpoint.path("seq").asLong());
        }
    }

    /** Why a receipt listed for a request of a tenant does not verify as that request's, or null. */
    private static String receiptProblem(String compact, long requestId, String tenant, TrustedKeys keys) {
        Receipt receipt;
        try {
            receipt = Receipt.fromCompact(compact);
        } catch (IllegalArgumentException e) {
            return "not a receipt (" + e.getMessage() + ")";
        }
        if (receipt.body().requestId() != requestId || !receipt.body().tenant().equals(tenant)) {
            return "signed for request " + receipt.body().requestId() + " of another tenant or request, not for this row";
        }
        return keys.refuse(receipt);
    }

    private static Instant instantOrNull(String s) {
        try {
            return s == null ? null : Instant.parse(s);
        } catch (java.time.format.DateTimeParseException e) {
            return null;
        }
    }

    /** The files whose {@code rows} are rows of the row-chained tables. */
    static final List<String> ROW_FILES = List.of("timeline.json", "safety_events.json", "disclosures.json");

    private static JsonNode tree(Map<String, byte[]> files, String name) throws IOException {
        byte[] b = files.get(name);
        return b == null ? com.fasterxml.jackson.databind.node.MissingNode.getInstance() : BundleFormat.JSON.readTree(b);
    }

    private static List<String> values(String table, JsonNode values) {
        List<String> out = new ArrayList<>();
        for (String col : Canonical.COLUMNS.get(table)) {
            JsonNode v = values.path(col);
            out.add(v.isNull() || v.isMissingNode() ? null : v.asText());
        }
        return out;
    }

    /**
     * Keys of a JWKS as served at /.well-known/pagewarden-receipt-keys (or a bundle's keys.json): kid and spki (or x),
     * with the endorsement by the key it replaced when given.
     */
    static Map<String, TrustedKeys.Candidate> parseKeys(JsonNode jwks) throws IOException {
        Map<String, TrustedKeys.Candidate> out = new LinkedHashMap<>();
        try {
            KeyFactory kf = KeyFactory.getInstance("Ed25519");
            for (JsonNode k : jwks.path("keys")) {
                byte[] spki;
                if (k.hasNonNull("spki")) {
                    spki = Base64.getDecoder().decode(k.path("spki").asText());
                } else {
                    byte[] x = Base64.getUrlDecoder().decode(k.path("x").asText());
                    spki = new byte[44];
                    System.arraycopy(HexFormat.of().parseHex("302a300506032b6570032100"), 0, spki, 0, 12);
                    System.arraycopy(x, 0, spki, 12, 32);
                }
                String kid = k.path("kid").asText();
                KeyEndorsement endorsement = null;
                if (k.hasNonNull("endorsed_by") && k.hasNonNull("endorsed_at") && k.hasNonNull("endorsement")) {
                    endorsement = new KeyEndorsement(kid, k.path("endorsed_by").asText(), Instant.parse(k.path("endorsed_at").asText()),
                            Base64.getDecoder().decode(k.path("endorsement").asText()));
                }
                out.put(kid, new TrustedKeys.Candidate(kf.generatePublic(new X509EncodedKeySpec(spki)), endorsement));
            }
        } catch (GeneralSecurityException | IllegalArgumentException | java.time.DateTimeException e) {
            throw new IOException("not a key set of Ed25519 keys: " + e.getMessage(), e);
        }
        return out;
    }

    private static byte[] decode(byte[] base64) {
        try {
            return Base64.getDecoder().decode(new String(base64, java.nio.charset.StandardCharsets.US_ASCII).strip());
        } catch (IllegalArgumentException e) {
            return new byte[0];
        }
    }

    private static byte[] hex(String s) {
        try {
            return HexFormat.of().parseHex(s);
        } catch (IllegalArgumentException e) {
            return new byte[0];
        }
    }

    private static Instant micros(String s) {
        return Instant.EPOCH.plus(Long.parseLong(s), ChronoUnit.MICROS);
    }

}
