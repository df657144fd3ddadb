package dev.pagewarden.cuda.cli;

import dev.pagewarden.cli.command.Args;
import dev.pagewarden.cli.Main;

import java.io.PrintStream;
import java.util.Arrays;
import java.util.Set;

/**
 * Entry point of pagewarden-engine.jar: the engine's commands ({@link Main}) plus those that need
 * this module (gpu-check). Everything else is handed to {@link Main} unchanged.
 */
public final class EngineMain {
    private EngineMain() {
    }

    public static void main(String[] argv) {
        System.exit(run(argv, System.out, System.err));
    }

    public static int run(String[] argv, PrintStream out, PrintStream err) {
        GpuCheckCommand gpuCheck = new GpuCheckCommand();
        if (argv.length > 0 && argv[0].equals(gpuCheck.name())) {
            try {
                return gpuCheck.run(new Args(Arrays.asList(argv).subList(1, argv.length), Set.of("json", "help")), out, err);
            } catch (Args.UsageException e) {
                err.println("error: " + e.getMessage());
                err.println("usage: " + gpuCheck.usage());
                return 2;
            } catch (Exception e) {
                err.println("error: " + e);
                return 1;
            }
        }
        int rc = Main.run(argv, out, err);
        if (argv.length == 0 || argv[0].equals("help") || argv[0].equals("--help")) {
            (argv.length == 0 ? err : out).println("  " + gpuCheck.usage());
        }
        return rc;
    }
}
