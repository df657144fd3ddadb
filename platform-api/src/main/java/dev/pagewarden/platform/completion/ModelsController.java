package dev.pagewarden.platform.completion;

import dev.pagewarden.platform.engine.EngineHost;
import dev.pagewarden.platform.engine.ServedModel;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.RestController;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /v1/models}: the served models with their <em>effective</em> context window - what
 * admission accepts, never more than the KV pools can hold. Private models are not listed.
 */
@RestController
class ModelsController {
    private final EngineHost host;

    ModelsController(EngineHost host) {
        this.host = host;
    }

    @GetMapping("/v1/models")
    Map<String, Object> list() {
        List<Map<String, Object>> data = host.served().filter(m -> !host.isPrivate(m.id())).map(ModelsController::describe)
                .map(List::of).orElse(List.of());
        return Map.of("object", "list", "data", data);
    }

    @GetMapping("/v1/models/{id}")
    Map<String, Object> one(@PathVariable String id) {
        return describe(host.require(id));
    }

    private static Map<String, Object> describe(ServedModel m) {
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("id", m.id());
        out.put("object", "model");
        out.put("created", 0);
        out.put("owned_by", "pagewarden");
        out.put("context_window", m.contextWindow());
        out.put("max_model_len", m.contextWindow());
        return out;
    }
}
