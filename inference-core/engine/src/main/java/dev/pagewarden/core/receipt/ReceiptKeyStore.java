package dev.pagewarden.core.receipt;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFileAttributeView;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyFactory;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.spec.PKCS8EncodedKeySpec;
import java.security.spec.X509EncodedKeySpec;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.logging.Logger;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The receipt key set kept in a directory (default {@code ~/.pagewarden/keys}), so receipts signed before a
 * restart still verify after it. Layout, all PEM so {@code openssl} reads them:
 * <ul>
 *   <li>{@code <keyId>.pub} - X.509 SubjectPublicKeyInfo of every retained key (current included);</li>
 *   <li>{@code <keyId>.key} - PKCS#8 private key of the current key only;</li>
 *   <li>{@code <keyId>.endorsement} - for every key after the first, its {@link KeyEndorsement} by the key it
 *   replaced ({@code previous-id millis signature-base64}).</li>
 * </ul>
 * The directory is {@code rwx------} and every file {@code rw-------}; a private key file that group or others
 * can read is refused at open (like ssh does), because anyone holding it can forge receipts.
 *
 * <p>{@link #open} creates the first key when the directory holds none. {@link #rotate} writes the new pair
 * (public first, then private, each via an fsynced temp file and an atomic rename) before the key set switches
 * to it, then deletes the old private key; a crash in between leaves two private keys and the next open takes
 * the newest. Opening, rotating and retiring hold a file lock, so two processes sharing the directory do not
 * both create a "first" key.
 */
public final class ReceiptKeyStore {
    private static final Logger LOG = Logger.getLogger(ReceiptKeyStore.class.getName());
    private static final Pattern ID = Pattern.compile("[A-Za-z0-9_-]+");
    private static final String PUB = ".pub";
    private static final String KEY = ".key";
    private static final String LOCK = ".lock";
    private static final String ENDORSEMENT = ".endorsement";
    private static final Set<PosixFilePermission> OWNER_FILE = PosixFilePermissions.fromString("rw-------");
    private static final Set<PosixFilePermission> OWNER_DIR = PosixFilePermissions.fromString("rwx------");
    // A file lock is per process; threads of one JVM taking it twice would get OverlappingFileLockException.
    private static final Object JVM_LOCK = new Object();

    private final Path dir;
    private final ReceiptKeys keys;
    private final boolean created;

    private ReceiptKeyStore(Path dir, ReceiptKeys keys, boolean created) {
        this.dir = dir;
        this.keys = keys;
        this.created = created;
    }

    /** {@code ~/.pagewarden/keys}. */
    public static Path defaultDirectory() {
        return Path.of(System.getProperty("user.home"), ".pagewarden", "keys");
    }

    /**
     * Loads the key set from {@code dir}, or creates the directory and a first key {@code prefix-1-F} when it
     * holds no key. New keys are named {@code prefix-N-F} ({@link ReceiptKeys#fingerprint}); a current key of
     * the older form {@code prefix-N} is rotated to one at open (its public key stays).
     *
     * @throws IOException              the directory cannot be read or written
     * @throws IllegalStateException    the directory is unsafe (a private key readable by others) or its
     *                                  contents do not make a key set (a private key without its public key,
     *                                  a file that is not an Ed25519 key)
     */
    public static ReceiptKeyStore open(Path dir, String prefix) throws IOException {
        if (!ID.matcher(prefix).matches()) {
            throw new IllegalArgumentException("key id prefix must match " + ID + ": '" + prefix + "'");
        }
        Path d = dir.toAbsolutePath();
        synchronized (JVM_LOCK) {
            createPrivateDirectory(d);
            return openLocked(d, prefix);
        }
    }

    private static ReceiptKeyStore openLocked(Path d, String prefix) throws IOException {
        try (FileChannel lockFile = lockFile(d); FileLock ignored = lockFile.lock()) {
            Map<String, PublicKey> publics = readPublics(d);
            List<String> privates = privateKeyIds(d);
            if (privates.isEmpty()) {
                if (!publics.isEmpty()) {
                    // Never mint a new key silently next to orphaned publics: the private key went missing.
                    throw new IllegalStateException("receipt key directory " + d + " holds public keys " + publics.keySet()
                            + " but no private key (*.key); restore it or move the directory away to start a new key set");
                }
                ReceiptKeys keys = ReceiptKeys.unkeyed(prefix);
                String id = keys.rotate((keyId, pair, endorsement) -> writePair(d, keyId, pair, endorsement));
                LOG.info(() -> "receipt keys: created " + id + " in " + d);
                return new ReceiptKeyStore(d, keys, true);
            }
            privates.sort(Comparator.comparingInt((String id) -> ReceiptKeys.serialOf(prefix, id))
                    .thenComparing(Comparator.naturalOrder()));
            String currentId = privates.getLast();
            if (!publics.containsKey(currentId)) {
                throw new IllegalStateException("receipt key " + currentId + ": " + d.resolve(currentId + KEY)
                        + " has no public key " + currentId + PUB);
            }
            PrivateKey priv = readPrivate(d.resolve(currentId + KEY));
            ReceiptKeys keys;
            try {
                keys = ReceiptKeys.restore(prefix, publics, readEndorsements(d, publics.keySet()), currentId, priv);
            } catch (IllegalArgumentException e) {
                throw new IllegalStateException("receipt key directory " + d + ": " + e.getMessage(), e);
            }
            // Older private keys are left over from a rotation that crashed before deleting them.
            for (String old : privates.subList(0, privates.size() - 1)) {
                Files.deleteIfExists(d.resolve(old + KEY));
            }
            LOG.info(() -> "receipt keys: loaded " + publics.size() + " public key(s) from " + d + ", signing with " + currentId);
            ReceiptKeyStore store = new ReceiptKeyStore(d, keys, false);
            if (!ReceiptKeys.namesKey(currentId, publics.get(currentId))) {
                // an id of the older form (prefix-N) is the same in every replica's key set: sign on with a
                // key whose id names it; the old public key stays for the receipts it signed
                store.rotateUnderLock();
            }
            return store;
        }
    }

    /** The key set: a {@link ReceiptSigner} with every retained public key (publish {@link ReceiptKeys#publishedKeys()}). */
    public ReceiptKeys keys() {
        return keys;
    }

    public Path directory() {
        return dir;
    }

    /** True when {@link #open} found no key and created the first one. */
    public boolean created() {
        return created;
    }

    /** Makes a new current key, stored before it signs anything; older public keys stay. Returns its id. */
    public String rotate() throws IOException {
        return rotate((keyId, pair) -> { });
    }

    /**
     * Like {@link #rotate()}, with {@code first} given the new pair before anything else (e.g. to register its
     * public key elsewhere): when it throws, nothing changes and the current key stays.
     */
    public String rotate(ReceiptKeys.Persister first) throws IOException {
        return rotate((keyId, pair, endorsement) -> first.persist(keyId, pair));
    }

    /** Like {@link #rotate(ReceiptKeys.Persister)}, with {@code first} also given the new key's endorsement. */
    public String rotate(ReceiptKeys.EndorsedPersister first) throws IOException {
        synchronized (JVM_LOCK) {
            try (FileChannel lockFile = lockFile(dir); FileLock ignored = lockFile.lock()) {
                return rotateUnderLock(first);
            }
        }
    }

    private String rotateUnderLock() throws IOException {
        return rotateUnderLock((keyId, pair, endorsement) -> { });
    }

    private String rotateUnderLock(ReceiptKeys.EndorsedPersister first) throws IOException {
        String previous = keys.currentKeyId();
        String id = keys.rotate((keyId, pair, endorsement) -> {
            first.persist(keyId, pair, endorsement);
            writePair(dir, keyId, pair, endorsement);
        });
        Files.deleteIfExists(dir.resolve(previous + KEY));
        syncDirectory(dir);
        LOG.info(() -> "receipt keys: rotated " + previous + " -> " + id + "; " + previous + " kept for verification");
        return id;
    }

    /** Drops an old public key for good: receipts signed with it no longer verify. The current key cannot be retired. */
    public void retire(String keyId) throws IOException {
        synchronized (JVM_LOCK) {
            try (FileChannel lockFile = lockFile(dir); FileLock ignored = lockFile.lock()) {
                keys.retire(keyId);
                Files.deleteIfExists(dir.resolve(keyId + PUB));
                Files.deleteIfExists(dir.resolve(keyId + ENDORSEMENT));
                syncDirectory(dir);
            }
        }
    }

    private static void writePair(Path dir, String keyId, KeyPair pair, KeyEndorsement endorsement) throws IOException {
        if (endorsement != null) {
            writeAtomically(dir, keyId + ENDORSEMENT, endorsement.toLine() + "\n");
        }
        writeAtomically(dir, keyId + PUB, pem("PUBLIC KEY", pair.getPublic().getEncoded()));
        writeAtomically(dir, keyId + KEY, pem("PRIVATE KEY", pair.getPrivate().getEncoded()));
    }

    private static Map<String, PublicKey> readPublics(Path dir) throws IOException {
        List<String> ids = idsWithSuffix(dir, PUB);
        // creation order: by serial where ids have one, then by name
        ids.sort(Comparator.comparingInt(ReceiptKeyStore::trailingNumber).thenComparing(Comparator.naturalOrder()));
        Map<String, PublicKey> out = new LinkedHashMap<>();
        for (String id : ids) {
            Path p = dir.resolve(id + PUB);
            try {
                out.put(id, KeyFactory.getInstance("Ed25519").generatePublic(new X509EncodedKeySpec(unpem(p, "PUBLIC KEY"))));
            } catch (GeneralSecurityException | IllegalArgumentException e) {
                throw new IllegalStateException("receipt key file " + p + " is not an Ed25519 public key (X.509 PEM)", e);
            }
        }
        return out;
    }

    private static Map<String, KeyEndorsement> readEndorsements(Path dir, java.util.Collection<String> ids) throws IOException {
        Map<String, KeyEndorsement> out = new LinkedHashMap<>();
        for (String id : ids) {
            Path p = dir.resolve(id + ENDORSEMENT);
            if (Files.isRegularFile(p)) {
                try {
                    out.put(id, KeyEndorsement.fromLine(id, Files.readString(p, StandardCharsets.US_ASCII)));
                } catch (IllegalArgumentException e) {
                    throw new IllegalStateException("receipt key file " + p + " is not an endorsement "
                            + "('previous-key-id millis signature-base64')", e);
                }
            }
        }
        return out;
    }

    private static PrivateKey readPrivate(Path p) throws IOException {
        requireOwnerOnly(p);
        try {
            return KeyFactory.getInstance("Ed25519").generatePrivate(new PKCS8EncodedKeySpec(unpem(p, "PRIVATE KEY")));
        } catch (GeneralSecurityException | IllegalArgumentException e) {
            throw new IllegalStateException("receipt key file " + p + " is not an Ed25519 private key (PKCS#8 PEM)", e);
        }
    }

    private static List<String> privateKeyIds(Path dir) throws IOException {
        return idsWithSuffix(dir, KEY);
    }

    private static List<String> idsWithSuffix(Path dir, String suffix) throws IOException {
        List<String> ids = new ArrayList<>();
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.toList()) {
                String name = p.getFileName().toString();
                if (name.endsWith(suffix) && Files.isRegularFile(p)) {
                    String id = name.substring(0, name.length() - suffix.length());
                    if (ID.matcher(id).matches()) {
                        ids.add(id);
                    }
                }
            }
        }
        return ids;
    }

    // N of any "...-N" or "...-N-F" id: creation order among the files, whatever their prefix
    private static final Pattern SERIAL = Pattern.compile(".*?-(\\d{1,9})(?:-[0-9a-f]{16})?");

    private static int trailingNumber(String id) {
        var m = SERIAL.matcher(id);
        return m.matches() ? Integer.parseInt(m.group(1)) : 0;
    }

    private static String pem(String type, byte[] der) {
        return "-----BEGIN " + type + "-----\n"
                + Base64.getMimeEncoder(64, new byte[] {'\n'}).encodeToString(der)
                + "\n-----END " + type + "-----\n";
    }

    private static byte[] unpem(Path p, String type) throws IOException {
        String text = Files.readString(p, StandardCharsets.US_ASCII).strip();
        String begin = "-----BEGIN " + type + "-----", end = "-----END " + type + "-----";
        if (!text.startsWith(begin) || !text.endsWith(end)) {
            throw new IllegalArgumentException("expected a PEM " + type + " block");
        }
        return Base64.getMimeDecoder().decode(text.substring(begin.length(), text.length() - end.length()));
    }

    private static void writeAtomically(Path dir, String name, String content) throws IOException {
        Path tmp = dir.resolve(name + ".tmp");
        Files.deleteIfExists(tmp);
        try (FileChannel ch = FileChannel.open(tmp, Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE),
                ownerOnly(OWNER_FILE, dir))) {
            ch.write(StandardCharsets.US_ASCII.encode(content));
            ch.force(true);
        }
        try {
            Files.move(tmp, dir.resolve(name), StandardCopyOption.ATOMIC_MOVE);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(tmp, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        }
        syncDirectory(dir);
    }

    private static void createPrivateDirectory(Path d) throws IOException {
        if (!Files.isDirectory(d)) {
            Files.createDirectories(d.getParent());
            try {
                Files.createDirectory(d, ownerOnly(OWNER_DIR, d.getParent()));
            } catch (FileAlreadyExistsException raced) {
                // another process created it first
            }
        }
        if (isPosix(d)) {
            Files.setPosixFilePermissions(d, OWNER_DIR);
        }
    }

    private static FileChannel lockFile(Path d) throws IOException {
        Path p = d.resolve(LOCK);
        if (!Files.exists(p)) {
            try {
                Files.createFile(p, ownerOnly(OWNER_FILE, d));
            } catch (FileAlreadyExistsException raced) {
                // another process created it first
            }
        }
        return FileChannel.open(p, StandardOpenOption.WRITE);
    }

    private static void requireOwnerOnly(Path p) throws IOException {
        if (!isPosix(p)) {
            return;
        }
        Set<PosixFilePermission> perms = Files.getPosixFilePermissions(p);
        Set<PosixFilePermission> others = EnumSet.copyOf(perms);
        others.removeAll(EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE,
                PosixFilePermission.OWNER_EXECUTE));
        if (!others.isEmpty()) {
            throw new IllegalStateException("receipt private key " + p + " is accessible by others ("
                    + PosixFilePermissions.toString(perms) + "); run: chmod 600 " + p);
        }
    }

    private static FileAttribute<?>[] ownerOnly(Set<PosixFilePermission> perms, Path where) {
        return isPosix(where) ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(perms)} : new FileAttribute<?>[0];
    }

    private static boolean isPosix(Path p) {
        return Files.getFileAttributeView(p, PosixFileAttributeView.class) != null;
    }

    private static void syncDirectory(Path dir) {
        try (FileChannel d = FileChannel.open(dir, StandardOpenOption.READ)) {
            d.force(true);
        } catch (IOException ignored) {
            // Some file systems refuse fsync on a directory; the files themselves were fsynced.
        }
    }
}
