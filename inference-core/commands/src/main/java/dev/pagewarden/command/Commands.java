package dev.pagewarden.command;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.function.Predicate;

/** Runs one command of a command table: parses its options, maps failures to exit codes, prints usage. */
public final class Commands {
    /** The options that take no value, shared by every command so that {@code --json} means the same everywhere. */
    public static final Set<String> FLAGS = Set.of("json", "help", "list", "insecure-no-checksum", "no-pool-check", "bos",
            "special", "add-generation-prompt");

    private Commands() {
    }

    /** The commands other jars on the class path offer through {@link ServiceLoader}, by name. */
    public static Map<String, Command> discovered() {
        Map<String, Command> m = new LinkedHashMap<>();
        ServiceLoader.load(Command.class).stream().map(ServiceLoader.Provider::get)
                .sorted(Comparator.comparing(Command::name))
                .forEach(c -> add(m, c));
        return m;
    }

    /** Adds a command; two commands with one name are a broken installation, not a choice. */
    public static void add(Map<String, Command> commands, Command c) {
        if (commands.putIfAbsent(c.name(), c) != null) {
            throw new IllegalStateException("two commands named " + c.name() + " on the class path");
        }
    }

    /** Runs {@code argv[0]} from {@code commands}, every failure but a usage error printed as the exception. */
    public static int run(String title, Map<String, Command> commands, String[] argv, PrintStream out, PrintStream err) {
        return run(title, commands, argv, out, err, e -> false);
    }

    /**
     * Runs {@code argv[0]} from {@code commands}; returns the exit code: 0 done, 1 failed, 2 bad command line.
     * Failures {@code byMessage} accepts (bad models, bad requests) print their message only; others print the exception.
     */
    public static int run(String title, Map<String, Command> commands, String[] argv, PrintStream out, PrintStream err,
                          Predicate<Exception> byMessage) {
        if (argv.length == 0 || argv[0].equals("help") || argv[0].equals("--help")) {
            usage(title, commands, argv.length == 0 ? err : out);
            return argv.length == 0 ? 2 : 0;
        }
        Command cmd = commands.get(argv[0]);
        if (cmd == null) {
            err.println("error: unknown command '" + argv[0] + "'");
            usage(title, commands, err);
            return 2;
        }
        try {
            return cmd.run(new Args(Arrays.asList(argv).subList(1, argv.length), FLAGS, cmd.positionalArguments()), out, err);
        } catch (Args.UsageException e) {
            err.println("error: " + e.getMessage());
            err.println("usage: " + cmd.usage());
            return 2;
        } catch (Exception e) {
            if (byMessage.test(e) || e instanceof IllegalArgumentException || e instanceof IllegalStateException) {
                err.println("error: " + e.getMessage());
            } else {
                err.println("error: " + e);
            }
            return 1;
        }
    }

    private static void usage(String title, Map<String, Command> commands, PrintStream s) {
        s.println(title);
        for (Command c : commands.values()) {
            s.println("  " + c.usage());
        }
    }
}
