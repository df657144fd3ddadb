package dev.pagewarden.cli;

import dev.pagewarden.cli.command.Args;
import dev.pagewarden.cli.command.Command;
import dev.pagewarden.cli.bench.http.BenchHttpCommand;
import dev.pagewarden.cli.tools.ConvertCommand;
import dev.pagewarden.cli.tools.MakeModelCommand;
import dev.pagewarden.cli.tools.PkiCommand;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.request.InvalidRequestException;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/** {@code java --add-modules jdk.incubator.vector -jar pagewarden-engine.jar COMMAND [options]}. */
public final class Main {
    private Main() {
    }

    static Map<String, Command> commands() {
        Map<String, Command> m = new LinkedHashMap<>();
        for (Command c : List.of(new GenerateCommand(), new BenchCommand(), new ReplayCommand(), new MakeModelCommand(), new ConvertCommand(),
                new DownloadCommand(), new BenchHttpCommand(), new TokenizeCommand(), new ChatTemplateCommand(),
                new PkiCommand(), new NodeCommand())) {
            m.put(c.name(), c);
        }
        return m;
    }

    public static void main(String[] argv) {
        System.exit(run(argv, System.out, System.err));
    }

    /** Runs one command; returns the exit code: 0 done, 1 failed, 2 bad command line. */
    public static int run(String[] argv, PrintStream out, PrintStream err) {
        Map<String, Command> commands = commands();
        if (argv.length == 0 || argv[0].equals("help") || argv[0].equals("--help")) {
            usage(commands, argv.length == 0 ? err : out);
            return argv.length == 0 ? 2 : 0;
        }
        Command cmd = commands.get(argv[0]);
        if (cmd == null) {
            err.println("error: unknown command '" + argv[0] + "'");
            usage(commands, err);
            return 2;
        }
        try {
            return cmd.run(new Args(Arrays.asList(argv).subList(1, argv.length), Set.of("json", "help", "list", "insecure-no-checksum", "no-pool-check", "bos", "special", "add-generation-prompt"),
                    cmd.positionalArguments()), out, err);
        } catch (Args.UsageException e) {
            err.println("error: " + e.getMessage());
            err.println("usage: " + cmd.usage());
            return 2;
        } catch (ModelFormatException | InvalidRequestException | IllegalArgumentException | IllegalStateException e) {
            err.println("error: " + e.getMessage());
            return 1;
        } catch (Exception e) {
            err.println("error: " + e);
            return 1;
        }
    }

    private static void usage(Map<String, Command> commands, PrintStream s) {
        s.println("Pagewarden engine. Commands:");
        for (Command c : commands.values()) {
            s.println("  " + c.usage());
        }
    }
}
