package dev.pagewarden.command;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code --name value} and {@code --flag} arguments; every option a command reads is checked, unknown ones are errors. */
public final class Args {

    /** A bad command line; the message names the option and the problem. */
    public static final class UsageException extends RuntimeException {
        public UsageException(String message) {
            super(message);
        }
    }

    private final Map<String, String> values = new HashMap<>();
    private final Set<String> read = new HashSet<>();
    /** Bare arguments; only commands that ask for them ({@link #positional}) accept any. */
    private final List<String> positional = new ArrayList<>();
    private boolean positionalRead;

    public Args(List<String> argv, Set<String> flags) {
        this(argv, flags, false);
    }

    /** With {@code positional}, bare arguments are collected for {@link #positional()}; otherwise the first is an error. */
    public Args(List<String> argv, Set<String> flags, boolean positional) {
        for (int i = 0; i < argv.size(); i++) {
            String a = argv.get(i);
            if (!a.startsWith("--") || a.length() == 2) {
                if (!positional) {
                    throw new UsageException("unexpected argument '" + a + "'");
                }
                this.positional.add(a);
                continue;
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (flags.contains(name)) {
                value = "true";
            } else {
                if (i + 1 >= argv.size()) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = argv.get(++i);
            }
            if (values.put(name, value) != null) {
                throw new UsageException("--" + name + " given twice");
            }
        }
    }

    public boolean has(String name) {
        read.add(name);
        return values.containsKey(name);
    }

    public String string(String name, String def) {
        read.add(name);
        return values.getOrDefault(name, def);
    }

    public String required(String name) {
        read.add(name);
        String v = values.get(name);
        if (v == null) {
            throw new UsageException("missing --" + name);
        }
        return v;
    }

    public boolean flag(String name) {
        read.add(name);
        return Boolean.parseBoolean(values.getOrDefault(name, "false"));
    }

    public int integer(String name, int def) {
        String v = string(name, null);
        try {
            return v == null ? def : Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be an integer, got '" + v + "'");
        }
    }

    public long longValue(String name, long def) {
        String v = string(name, null);
        try {
            return v == null ? def : Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be an integer, got '" + v + "'");
        }
    }

    public float floating(String name, float def) {
        String v = string(name, null);
        try {
            float f = v == null ? def : Float.parseFloat(v.trim());
            if (!Float.isFinite(f)) {
                throw new NumberFormatException();
            }
            return f;
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a finite number, got '" + v + "'");
        }
    }

    /** A path that must exist as a regular file. */
    public Path existingFile(String name) {
        Path p = Path.of(required(name));
        if (!Files.isRegularFile(p)) {
            throw new UsageException("--" + name + ": no such file: " + p);
        }
        return p;
    }

    /** A model: a file, or a Hugging Face folder (holding config.json). */
    public Path existingModel(String name) {
        Path p = Path.of(required(name));
        if (!Files.isDirectory(p)) {
            return existingFile(name);
        }
        if (!Files.isRegularFile(p.resolve("config.json"))) {
            throw new UsageException("--" + name + ": " + p + " is a folder without config.json (not a Hugging Face model folder)");
        }
        return p;
    }

    /** Like {@link #existingFile}, but the option may be absent (then null). */
    public Path optionalExistingFile(String name) {
        return has(name) ? existingFile(name) : null;
    }

    /** The bare (non-option) arguments, in order; a command that never asks rejects them. */
    public List<String> positional() {
        positionalRead = true;
        return List.copyOf(positional);
    }

    /** Call after reading every option: anything not read is a typo the user should hear about. */
    public void rejectUnknown() {
        if (!positionalRead && !positional.isEmpty()) {
            throw new UsageException("unexpected argument '" + positional.getFirst() + "'");
        }
        for (String k : values.keySet()) {
            if (!read.contains(k)) {
                throw new UsageException("unknown option --" + k);
            }
        }
    }
}
