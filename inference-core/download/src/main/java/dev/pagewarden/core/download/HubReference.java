package dev.pagewarden.core.download;

import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * A model on a Hugging Face repository: {@code org/repo:file.gguf} (one file), {@code org/repo} (a
 * whole safetensors repository), either with an optional revision, {@code org/repo@<commit>:file}.
 * A 40-digit commit hash pins the content; a branch or tag name follows it.
 *
 * @param repo     {@code org/name}
 * @param revision the revision asked for ({@code main} when none was given)
 * @param file     the repository path of the one file wanted, or null for the whole repository
 */
public record HubReference(String repo, String revision, String file) {
    public static final String DEFAULT_REVISION = "main";
    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,95}");
    private static final Pattern REVISION = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._-]{0,99}");
    private static final Pattern COMMIT = Pattern.compile("[0-9a-f]{40}");
    private static final Pattern FILE_SEGMENT = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._+-]*");

    public HubReference {
        String[] parts = repo == null ? new String[0] : repo.split("/", -1);
        if (parts.length != 2 || !NAME.matcher(parts[0]).matches() || !NAME.matcher(parts[1]).matches()
                || repo.contains("..")) {
            throw new IllegalArgumentException("bad Hugging Face repository '" + printable(repo) + "': expected ORG/NAME "
                    + "(letters, digits, '.', '_', '-')");
        }
        if (revision == null || !REVISION.matcher(revision).matches() || revision.contains("..")) {
            throw new IllegalArgumentException("bad revision '" + printable(revision) + "' in " + repo
                    + ": expected a commit hash (40 hex digits) or a branch or tag name");
        }
        if (file != null) {
            for (String seg : file.split("/", -1)) {
                if (!FILE_SEGMENT.matcher(seg).matches()) {
                    throw new IllegalArgumentException("bad file '" + printable(file) + "' in " + repo
                            + ": expected a repository path such as model-Q4_K_M.gguf");
                }
            }
        }
    }

    /** Whether {@code s} is meant as a Hub reference rather than a registry name (those never hold '/'). */
    public static boolean looksLike(String s) {
        return s != null && s.indexOf('/') > 0;
    }

    /**
     * Parses {@code org/repo[@revision][:file]}; anything else is an IllegalArgumentException saying
     * which part is wrong and what the forms are.
     */
    public static HubReference parse(String s) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("empty model reference; expected ORG/REPO[@REVISION][:FILE]");
        }
        String rest = s.trim();
        String file = null;
        int colon = rest.indexOf(':');
        if (colon >= 0) {
            file = rest.substring(colon + 1);
            rest = rest.substring(0, colon);
            if (file.isEmpty()) {
                throw new IllegalArgumentException("model reference '" + printable(s) + "' ends with ':' but names no file; "
                        + "expected ORG/REPO:FILE.gguf or ORG/REPO for a whole safetensors repository");
            }
        }
        String revision = DEFAULT_REVISION;
        int at = rest.indexOf('@');
        if (at >= 0) {
            revision = rest.substring(at + 1);
            rest = rest.substring(0, at);
        }
        return new HubReference(rest, revision, file);
    }

    /** True when the revision is a commit hash, whose content can never change. */
    public boolean pinned() {
        return COMMIT.matcher(revision).matches();
    }

    /** The served model's id: the file name without its extension, or the repository's name. */
    public String id() {
        if (file == null) {
            return repo.substring(repo.indexOf('/') + 1);
        }
        String name = fileName();
        int dot = name.lastIndexOf('.');
        return dot > 0 ? name.substring(0, dot) : name;
    }

    /** The name the one file gets on disk (its last path segment). */
    public String fileName() {
        if (file == null) {
            throw new IllegalStateException(repo + " names no single file");
        }
        return file.substring(file.lastIndexOf('/') + 1);
    }

    /** {@code dir/org/name}: the repository's files, and the folder an HF model loads from. */
    public Path folder(Path dir) {
        int slash = repo.indexOf('/');
        return dir.resolve(repo.substring(0, slash)).resolve(repo.substring(slash + 1));
    }

    @Override
    public String toString() {
        return repo + (revision.equals(DEFAULT_REVISION) ? "" : "@" + revision) + (file == null ? "" : ":" + file);
    }

    private static String printable(String s) {
        return s == null ? "null" : s.replaceAll("\\p{Cntrl}", "?");
    }
}
