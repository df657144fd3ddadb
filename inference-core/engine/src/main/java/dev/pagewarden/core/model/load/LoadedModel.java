package dev.pagewarden.core.model.load;

import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.ModelConfig;
import dev.pagewarden.core.model.gguf.GgufLlama;
import dev.pagewarden.core.template.ChatTemplate;
import dev.pagewarden.core.tokenizer.TextTokenizer;
import dev.pagewarden.core.tokenizer.Vocabulary;

import java.lang.foreign.Arena;
import java.nio.file.Path;

/**
 * A model ready for a backend: its weights (views over memory-mapped files that {@code arena} owns),
 * and, when one was found, its tokenizer and chat template. Closing it unmaps the files; no tensor
 * may be used after.
 *
 * @param vocabulary   a llama2.c-style vocabulary (SentencePiece models), null for byte-level BPE ones
 * @param tokenizer    the model's own tokenizer, null when the model carries none
 * @param chatTemplate the model's chat template, the plain fallback when it has none (null without a tokenizer)
 */
public record LoadedModel(Path source, String format, LlamaWeights weights, Vocabulary vocabulary,
                          TextTokenizer tokenizer, ChatTemplate chatTemplate, Arena arena) implements AutoCloseable {

    /** A model with a llama2.c vocabulary (or none): its tokenizer is that vocabulary's SentencePiece, its template the fallback. */
    public LoadedModel(Path source, String format, LlamaWeights weights, Vocabulary vocabulary, Arena arena) {
        this(source, format, weights, vocabulary, vocabulary == null ? null : GgufLlama.sentencePiece(vocabulary).build(),
                vocabulary == null ? null : ChatTemplate.fallback(piece(vocabulary, vocabulary.bosId()),
                        piece(vocabulary, vocabulary.eosId())), arena);
    }

    private static String piece(Vocabulary v, int id) {
        return id >= 0 && id < v.size() ? v.tokens().get(id) : null;
    }

    public ModelConfig config() {
        return weights.config();
    }

    @Override
    public void close() {
        arena.close();
    }
}
