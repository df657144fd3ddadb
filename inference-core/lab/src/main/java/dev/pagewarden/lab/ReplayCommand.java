package dev.pagewarden.lab;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.lab.ReplayLab;
import dev.pagewarden.core.model.load.LoadedModel;
import dev.pagewarden.core.model.load.ModelLoader;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs incident-replay scenarios (lab mode) and prints their ground truth as a table or JSON; offered to the
 * engine jar through the command SPI when the lab's jar is on the class path.
 */
public final class ReplayCommand implements Command {

    @Override
    public String name() {
        return "replay";
    }

    @Override
    public String usage() {
        return "replay --model FILE [--tokenizer FILE] [--scenario NAME|all] [--seed S] [--json]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path modelPath = args.existingFile("model");
        Path tokPath = args.optionalExistingFile("tokenizer");
        String which = args.string("scenario", "all");
        long seed = args.longValue("seed", 2026);
        boolean json = args.flag("json");
        args.rejectUnknown();
        List<ReplayLab.Scenario> scenarios = which.equals("all") ? ReplayLab.scenarios() : List.of(ReplayLab.scenario(which));
        List<Map<String, Object>> results = new ArrayList<>();
        try (LoadedModel model = ModelLoader.load(modelPath, tokPath)) {
            ReplayLab lab = new ReplayLab(model, seed);
            if (!json) {
                out.println(ReplayLab.header());
            }
            for (ReplayLab.Scenario s : scenarios) {
                err.println("replay: scenario " + s.name() + " " + s.faults().labels());
                ReplayLab.Result r = lab.run(s);
                results.add(r.toJson());
                if (!json) {
                    out.println(ReplayLab.row(r));
                    for (String leak : r.foreignContent()) {
                        out.println("    " + leak);
                    }
                }
            }
        }
        if (json) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("seed", seed);
            doc.put("scenarios", results);
            out.println(Json.write(doc));
        }
        return 0;
    }
}
