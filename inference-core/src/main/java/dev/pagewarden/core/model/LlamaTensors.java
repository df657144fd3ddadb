package dev.pagewarden.core.model;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * The weight tensors of a Llama model as a list of named slots, so that every file format (llama2.c
 * legacy and v1, GGUF) and every writer walks the same table instead of repeating it. Shapes follow
 * {@link Tensor}: rows are outputs.
 */
public final class LlamaTensors {

    /** What a tensor is for, with its GGUF name part and its llama2.c name. */
    public enum Role {
        TOKEN_EMBD("token_embd", "token_embedding", false),
        ATTN_NORM("attn_norm", "rms_att", true),
        WQ("attn_q", "wq", true),
        WK("attn_k", "wk", true),
        WV("attn_v", "wv", true),
        WO("attn_output", "wo", true),
        FFN_NORM("ffn_norm", "rms_ffn", true),
        W1("ffn_gate", "w1", true),
        W2("ffn_down", "w2", true),
        W3("ffn_up", "w3", true),
        OUTPUT_NORM("output_norm", "rms_final", false),
        OUTPUT("output", "classifier", false);

        private final String ggufPart;
        private final String llama2cName;
        private final boolean perLayer;

        Role(String ggufPart, String llama2cName, boolean perLayer) {
            this.ggufPart = ggufPart;
            this.llama2cName = llama2cName;
            this.perLayer = perLayer;
        }

        public boolean perLayer() {
            return perLayer;
        }

        /** Norm weights are vectors; GGUF stores them as 1-D and keeps them in F32 whatever the model's dtype. */
        public boolean isNorm() {
            return this == ATTN_NORM || this == FFN_NORM || this == OUTPUT_NORM;
        }
    }

    /** One tensor of a concrete model: its role, layer (-1 for global tensors) and shape. */
    public record Slot(Role role, int layer, int rows, int cols) {
        /** GGUF name, e.g. {@code blk.3.attn_q.weight} or {@code token_embd.weight}. */
        public String ggufName() {
            return role.perLayer ? "blk." + layer + "." + role.ggufPart + ".weight" : role.ggufPart + ".weight";
        }

        /** llama2.c name as {@link Llama2cLoader} reports it, e.g. {@code wq.3}. */
        public String llama2cName() {
            return role.perLayer ? role.llama2cName + "." + layer : role.llama2cName;
        }

        public long elements() {
            return (long) rows * cols;
        }
    }

    /** llama2.c legacy order (the legacy RoPE tables sit between OUTPUT_NORM and OUTPUT). */
    public static final List<Role> LLAMA2C_LEGACY_ORDER = List.of(Role.TOKEN_EMBD, Role.ATTN_NORM, Role.WQ, Role.WK,
            Role.WV, Role.WO, Role.FFN_NORM, Role.W1, Role.W2, Role.W3, Role.OUTPUT_NORM, Role.OUTPUT);

    /** llama2.c v1 ("ak42") order: all norms first, then the matrices; no RoPE tables. */
    public static final List<Role> LLAMA2C_V1_ORDER = List.of(Role.ATTN_NORM, Role.FFN_NORM, Role.OUTPUT_NORM,
            Role.TOKEN_EMBD, Role.WQ, Role.WK, Role.WV, Role.WO, Role.W1, Role.W2, Role.W3, Role.OUTPUT);

    private static final List<Role> BLOCK_ROLES = List.of(Role.ATTN_NORM, Role.WQ, Role.WK, Role.WV, Role.WO,
            Role.FFN_NORM, Role.W1, Role.W2, Role.W3);

    private LlamaTensors() {
    }

    /** Shape of {@code role} in a model of shape {@code cfg}. */
    public static Slot slot(ModelConfig cfg, Role role, int layer) {
        int dim = cfg.dim();
        return switch (role) {
            case TOKEN_EMBD, OUTPUT -> new Slot(role, layer, cfg.vocabSize(), dim);
            case ATTN_NORM, FFN_NORM, OUTPUT_NORM -> new Slot(role, layer, 1, dim);
            case WQ, WO -> new Slot(role, layer, dim, dim);
            case WK, WV -> new Slot(role, layer, cfg.kvDim(), dim);
            case W1, W3 -> new Slot(role, layer, cfg.hiddenDim(), dim);
            case W2 -> new Slot(role, layer, dim, cfg.hiddenDim());
        };
    }

    /**
     * Slots role by role in {@code order} (all layers of one role, then the next role), as llama2.c
     * files store them. OUTPUT is left out when the classifier is shared.
     */
    public static List<Slot> roleMajor(ModelConfig cfg, List<Role> order) {
        List<Slot> slots = new ArrayList<>();
        for (Role role : order) {
            if (role == Role.OUTPUT && cfg.sharedClassifier()) {
                continue;
            }
            if (role.perLayer) {
                for (int l = 0; l < cfg.nLayers(); l++) {
                    slots.add(slot(cfg, role, l));
                }
            } else {
                slots.add(slot(cfg, role, -1));
            }
        }
        return slots;
    }

    /** Slots in the order llama.cpp writes GGUF files: globals first, then block by block. */
    public static List<Slot> ggufOrder(ModelConfig cfg) {
        List<Slot> slots = new ArrayList<>();
        slots.add(slot(cfg, Role.TOKEN_EMBD, -1));
        slots.add(slot(cfg, Role.OUTPUT_NORM, -1));
        if (!cfg.sharedClassifier()) {
            slots.add(slot(cfg, Role.OUTPUT, -1));
        }
        for (int l = 0; l < cfg.nLayers(); l++) {
            for (Role role : BLOCK_ROLES) {
                slots.add(slot(cfg, role, l));
            }
        }
        return slots;
    }

    /** Builds (and shape-checks) the weights from a lookup that maps each slot to its tensor. */
    public static LlamaWeights assemble(ModelConfig cfg, Function<Slot, Tensor> lookup) {
        List<LlamaWeights.Layer> layers = new ArrayList<>();
        for (int l = 0; l < cfg.nLayers(); l++) {
            int layer = l;
            Function<Role, Tensor> at = role -> lookup.apply(slot(cfg, role, layer));
            layers.add(new LlamaWeights.Layer(at.apply(Role.ATTN_NORM), at.apply(Role.WQ), at.apply(Role.WK),
                    at.apply(Role.WV), at.apply(Role.WO), at.apply(Role.FFN_NORM), at.apply(Role.W1),
                    at.apply(Role.W2), at.apply(Role.W3)));
        }
        Tensor emb = lookup.apply(slot(cfg, Role.TOKEN_EMBD, -1));
        Tensor cls = cfg.sharedClassifier() ? emb : lookup.apply(slot(cfg, Role.OUTPUT, -1));
        return new LlamaWeights(cfg, emb, layers, lookup.apply(slot(cfg, Role.OUTPUT_NORM, -1)), cls);
    }

    /** The tensor of {@code weights} that fills {@code slot}. */
    public static Tensor tensor(LlamaWeights weights, Slot slot) {
        return switch (slot.role) {
            case TOKEN_EMBD -> weights.tokenEmbedding();
            case OUTPUT -> weights.classifier();
            case OUTPUT_NORM -> weights.rmsFinal();
            case ATTN_NORM -> weights.layers().get(slot.layer).rmsAtt();
            case WQ -> weights.layers().get(slot.layer).wq();
            case WK -> weights.layers().get(slot.layer).wk();
            case WV -> weights.layers().get(slot.layer).wv();
            case WO -> weights.layers().get(slot.layer).wo();
            case FFN_NORM -> weights.layers().get(slot.layer).rmsFfn();
            case W1 -> weights.layers().get(slot.layer).w1();
            case W2 -> weights.layers().get(slot.layer).w2();
            case W3 -> weights.layers().get(slot.layer).w3();
        };
    }
}
