package dev.pagewarden.cli;

import dev.pagewarden.command.Args;
import dev.pagewarden.command.Command;
import dev.pagewarden.command.Json;
import dev.pagewarden.core.model.ModelFormatException;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.model.gguf.GgufReader;
import dev.pagewarden.core.tokenizer.HfTokenizer;
import dev.pagewarden.core.tokenizer.TextTokenizer;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.StringJoiner;

/**
 * {@code tokenize}: a model's own tokenizer on a text. No BOS unless {@code --bos}; special tokens
 * parsed only with {@code --special}, so by default {@code <|im_end|>} in the text stays text.
 */
public final class TokenizeCommand implements Command {

    @Override
    public String name() {
        return "tokenize";
    }

    @Override
    public String usage() {
        return "tokenize --model FILE.gguf|HF_DIR|tokenizer.json (--text T | --text-file F) [--json] [--bos] [--special]";
    }

    @Override
    public int run(Args args, PrintStream out, PrintStream err) throws Exception {
        Path model = Path.of(args.required("model"));
        String text = text(args);
        boolean json = args.flag("json");
        boolean bos = args.flag("bos");
        boolean special = args.flag("special");
        args.rejectUnknown();
        if (!Files.exists(model)) {
            throw new Args.UsageException("--model: no such file or folder: " + model);
        }
        try (Arena arena = Arena.ofConfined()) {
            TextTokenizer tok = open(model, arena);
            if (bos && tok.bos() < 0) {
                throw new IllegalArgumentException(model + ": --bos given but the vocabulary has no BOS token");
            }
            int[] ids = tok.encode(text, bos, special);
            if (json) {
                List<Integer> idList = new ArrayList<>(ids.length);
                List<String> pieces = new ArrayList<>(ids.length);
                for (int id : ids) {
                    idList.add(id);
                    pieces.add(tok.piece(id));
                }
                Map<String, Object> m = new LinkedHashMap<>();
                m.put("ids", idList);
                m.put("pieces", pieces);
                out.println(Json.write(m));
            } else {
                StringJoiner line = new StringJoiner(" ");
                for (int id : ids) {
                    line.add(Integer.toString(id));
                }
                out.println(line);
            }
        }
        return 0;
    }

    private static String text(Args args) throws IOException {
        boolean inline = args.has("text");
        boolean file = args.has("text-file");
        if (inline == file) {
            throw new Args.UsageException("give exactly one of --text and --text-file");
        }
        if (inline) {
            return args.required("text");
        }
        Path f = args.existingFile("text-file");
        try {
            return StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(Files.readAllBytes(f))).toString();
        } catch (CharacterCodingException e) {
            throw new IllegalArgumentException("--text-file " + f + " is not valid UTF-8");
        }
    }

    /** A GGUF file's tokenizer, or a Hugging Face folder's (or {@code tokenizer.json}'s). */
    static TextTokenizer open(Path model, Arena arena) {
        if (Files.isDirectory(model) || model.getFileName().toString().endsWith(".json")) {
            if (Files.isDirectory(model) && !Files.isRegularFile(model.resolve("tokenizer.json"))) {
                throw new ModelFormatException(model + ": no tokenizer.json in this folder");
            }
            return HfTokenizer.load(model).build();
        }
        return GgufLlama.tokenizer(GgufReader.read(model, arena));
    }
}
