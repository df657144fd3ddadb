package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.core.template.ChatMessage;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.template.ChatTemplates;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code chat-template --model M --messages FILE [--add-generation-prompt]}: renders a conversation with
 * the model's own chat template (a GGUF file's or an HF folder's) and prints the prompt exactly: UTF-8,
 * no newline added.
 */
public final class ChatTemplateCommand implements Command {
    @Override
    public String name() {
        return "chat-template";
    }

    @Override
    public String usage() {
        return "chat-template --model FILE.gguf|HF_DIR --messages FILE.json ([{\"role\": ..., \"content\": ...}, ...]) [--add-generation-prompt]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path model = Path.of(args.required("model"));
        Path messagesFile = args.existingFile("messages");
        boolean addGenerationPrompt = args.flag("add-generation-prompt");
        args.rejectUnknown();
        if (!Files.exists(model)) {
            throw new Args.UsageException("--model: no such file or folder: " + model);
        }
        List<ChatMessage> messages = parseMessages(messagesFile, Files.readString(messagesFile, StandardCharsets.UTF_8));
        ChatTemplate template = ChatTemplates.load(model);
        // raw bytes: the prompt is printed as rendered, whatever the console's charset
        out.write(template.render(messages, addGenerationPrompt).getBytes(StandardCharsets.UTF_8));
        out.flush();
        return 0;
    }

    /** A JSON array of {@code {"role": string, "content": string}}; anything else is refused naming the entry. */
    static List<ChatMessage> parseMessages(Path file, String json) {
        Object parsed;
        try {
            parsed = Json.parse(json);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(file + ": not valid JSON: " + e.getMessage(), e);
        }
        if (!(parsed instanceof List<?> list)) {
            throw new IllegalArgumentException(file + ": should hold a JSON array of {\"role\", \"content\"} objects");
        }
        List<ChatMessage> messages = new ArrayList<>();
        for (int i = 0; i < list.size(); i++) {
            if (!(list.get(i) instanceof Map<?, ?> m)) {
                throw new IllegalArgumentException(file + ": entry " + i + " should be an object with \"role\" and \"content\"");
            }
            for (Object key : m.keySet()) {
                if (!key.equals("role") && !key.equals("content")) {
                    throw new IllegalArgumentException(file + ": entry " + i + " has an unknown field \"" + key + "\"");
                }
            }
            if (!(m.get("role") instanceof String role) || role.isEmpty()) {
                throw new IllegalArgumentException(file + ": entry " + i + " needs \"role\", a non-empty string");
            }
            if (!(m.get("content") instanceof String content)) {
                throw new IllegalArgumentException(file + ": entry " + i + " needs \"content\", a string");
            }
            messages.add(new ChatMessage(role, content));
        }
        return messages;
    }
}
