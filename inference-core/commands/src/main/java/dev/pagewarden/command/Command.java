package dev.pagewarden.command;

import java.io.PrintStream;

/** One sub-command of {@code pagewarden-engine.jar}. Output goes to {@code out}, statistics and progress to {@code err}. */
public interface Command {
    String name();

    /** One-line usage, shown by {@code help} and on bad arguments. */
    String usage();

    /** Whether bare (non-option) arguments are accepted, read through {@link Args#positional()}. */
    default boolean positionalArguments() {
        return false;
    }

    /** Runs the command; returns the process exit code. Bad arguments throw {@link Args.UsageException}. */
    int run(Args args, PrintStream out, PrintStream err) throws Exception;
}
