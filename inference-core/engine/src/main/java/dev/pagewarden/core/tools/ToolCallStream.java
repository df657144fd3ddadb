package dev.pagewarden.core.tools;

import java.util.ArrayList;
import java.util.List;

/**
 * Reads tool calls out of an output as it streams: text goes out as soon as it is known not to begin a call, and
 * text that may begin one is held until it is known either way. A call goes out whole, once it is complete: its
 * name, then its arguments. Not thread-safe: one stream, one reader.
 */
public final class ToolCallStream {

    /** What the client gets next: text, the start of call {@code index}, or a fragment of its arguments. */
    public sealed interface Event {
        record Text(String text) implements Event {
        }

        record CallStart(int index, String name) implements Event {
        }

        record Arguments(int index, String fragment) implements Event {
        }
    }

    private final ToolCallParser parser;
    private final StringBuilder pending = new StringBuilder();
    private boolean started;
    private int calls;

    public ToolCallStream(ToolCallParser parser) {
        this.parser = parser;
    }

    /** The events {@code text} settles. */
    public List<Event> accept(String text) {
        pending.append(text);
        return drain(false);
    }

    /** The output ended: what was held, settled. */
    public List<Event> finish() {
        return drain(true);
    }

    /** Calls sent so far. */
    public int calls() {
        return calls;
    }

    private List<Event> drain(boolean finished) {
        ToolCallParser.Scan scan = parser.scan(pending.toString(), !started, finished);
        List<Event> out = new ArrayList<>();
        for (ToolCallParser.Piece p : scan.pieces()) {
            if (p.call() == null) {
                out.add(new Event.Text(p.text()));
            } else {
                out.add(new Event.CallStart(calls, p.call().name()));
                out.add(new Event.Arguments(calls, p.call().arguments()));
                calls++;
            }
        }
        if (scan.consumed() > 0) {
            started = true;
            pending.delete(0, scan.consumed());
        }
        return out;
    }
}
