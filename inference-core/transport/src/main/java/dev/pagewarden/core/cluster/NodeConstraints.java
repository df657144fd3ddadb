package dev.pagewarden.core.cluster;

import dev.pagewarden.core.grammar.GrammarConstraints;
import dev.pagewarden.core.grammar.JsonGrammar;
import dev.pagewarden.core.sampling.TokenConstraint;
import dev.pagewarden.core.tokenizer.TextTokenizer;

import java.util.function.Function;

/**
 * A node's response formats: the schema text a request carries compiled over the node's own vocabulary, as the
 * platform compiled it over the same model's (masks cached per schema, as there). Throws {@link
 * IllegalArgumentException} for a text that does not compile or a model without a tokenizer.
 */
final class NodeConstraints implements Function<String, TokenConstraint> {
    private final TextTokenizer tokenizer;
    private GrammarConstraints grammars;

    NodeConstraints(TextTokenizer tokenizer) {
        this.tokenizer = tokenizer;
    }

    @Override
    public TokenConstraint apply(String source) {
        if (tokenizer == null) {
            throw new IllegalArgumentException("response_format needs the model's tokenizer; this node's model has none");
        }
        JsonGrammar grammar = JsonGrammar.ofKey(source);
        GrammarConstraints g;
        synchronized (this) {
            if (grammars == null) {
                grammars = new GrammarConstraints(tokenizer);
            }
            g = grammars;
        }
        return g.constraint(grammar);
    }
}
