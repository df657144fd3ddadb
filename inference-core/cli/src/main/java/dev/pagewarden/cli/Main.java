package dev.pagewarden.cli;

import dev.pagewarden.command.Command;
import dev.pagewarden.command.Commands;
import dev.pagewarden.cli.bench.http.BenchHttpCommand;
import dev.pagewarden.cli.tools.ConvertCommand;
import dev.pagewarden.cli.tools.MakeModelCommand;
import dev.pagewarden.cli.tools.PkiCommand;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.request.InvalidRequestException;

import java.io.PrintStream;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** {@code java --add-modules jdk.incubator.vector -jar pagewarden-engine.jar COMMAND [options]}. */
public final class Main {
    private Main() {
    }

    /**
     * The built-in commands, then those other jars on the class path offer through the command SPI
     * (the GPU backend's {@code gpu-check}; the lab's {@code replay} when the lab is installed).
     */
    static Map<String, Command> commands() {
        Map<String, Command> m = new LinkedHashMap<>();
        for (Command c : List.of(new GenerateCommand(), new BenchCommand(), new MakeModelCommand(), new ConvertCommand(),
                new DownloadCommand(), new BenchHttpCommand(), new TokenizeCommand(), new ChatTemplateCommand(),
                new PkiCommand(), new NodeCommand(), new FairBenchCommand(), new BenchCapacityCommand(),
                new PrefixBenchCommand(), new GrammarBenchCommand())) {
            m.put(c.name(), c);
        }
        Commands.discovered().values().forEach(c -> Commands.add(m, c));
        return m;
    }

    public static void main(String[] argv) {
        System.exit(run(argv, System.out, System.err));
    }

    /** Runs one command; returns the exit code: 0 done, 1 failed, 2 bad command line. */
    public static int run(String[] argv, PrintStream out, PrintStream err) {
        return run(commands(), argv, out, err);
    }

    static int run(Map<String, Command> commands, String[] argv, PrintStream out, PrintStream err) {
        if (argv.length > 0 && argv[0].equals("replay") && !commands.containsKey("replay")) {
            // the lab is a jar of its own, never part of this one: say how to install it rather than "unknown command"
            err.println("error: the replay command comes with the incident-replay lab, which this jar does not hold; run it"
                    + " with the lab's jar on the class path: java --add-modules jdk.incubator.vector -cp"
                    + " pagewarden-engine.jar:pagewarden-lab.jar dev.pagewarden.cli.Main replay ... (docs/incident-replay.md)");
            return 2;
        }
        return Commands.run("Pagewarden engine. Commands:", commands, argv, out, err,
                e -> e instanceof ModelFormatException || e instanceof InvalidRequestException);
    }
}
