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
        OUTPUT("output", "classifier", false),
        // Qwen 2: biases of the Q/K/V projections (GGUF names end in .bias)
        BQ("attn_q", "bq", true, "bias"),
        BK("attn_k", "bk", true, "bias"),
        BV("attn_v", "bv", true, "bias"),
        // Qwen 3: per-head RMSNorm weights of Q and K
        Q_NORM("attn_q_norm", "q_norm", true),
        K_NORM("attn_k_norm", "k_norm", true),
        /** Llama 3.1/3.2 RoPE frequency divisors: written from {@link ModelConfig#ropeScaling}, not a weight. */
        ROPE_FREQS("rope_freqs", "rope_freqs", false);

        private final String ggufPart;
        private final String llama2cName;
        private final boolean perLayer;
        private final String suffix;

        Role(String ggufPart, String llama2cName, boolean perLayer) {
            this(ggufPart, llama2cName, perLayer, "weight");
        }

        Role(String ggufPart, String llama2cName, boolean perLayer, String suffix) {
            this.ggufPart = ggufPart;
            this.llama2cName = llama2cName;
            this.perLayer = perLayer;
            this.suffix = suffix;
        }

        public boolean perLayer() {
            return perLayer;
        }

        /** Norm weights are vectors; GGUF stores them as 1-D and keeps them in F32 whatever the model's dtype. */
        public boolean isNorm() {
            return this == ATTN_NORM || this == FFN_NORM || this == OUTPUT_NORM || this == Q_NORM || this == K_NORM;
        }

        public boolean isBias() {
            return this == BQ || this == BK || this == BV;
        }

        /** One-dimensional in GGUF and kept in F32 there: norms, biases, RoPE factors. */
        public boolean isVector() {
            return isNorm() || isBias() || this == ROPE_FREQS;
        }
    }

    /** One tensor of a concrete model: its role, layer (-1 for global tensors) and shape. */
    public record Slot(Role role, int layer, int rows, int cols) {
        /** GGUF name, e.g. {@code blk.3.attn_q.weight} or {@code token_embd.weight}. */
        public String ggufName() {
            return (role.perLayer ? "blk." + layer + "." + role.ggufPart : role.ggufPart) + "." + role.suffix;
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

    /** The tensors of one block of {@code cfg}'s architecture, in llama.cpp's order. */
    public static List<Role> blockRoles(ModelConfig cfg) {
        Architecture arch = cfg.architecture();
        List<Role> roles = new ArrayList<>(List.of(Role.ATTN_NORM, Role.WQ));
        if (arch.qkvBias()) {
            roles.add(Role.BQ);
        }
        roles.add(Role.WK);
        if (arch.qkvBias()) {
            roles.add(Role.BK);
        }
        roles.add(Role.WV);
        if (arch.qkvBias()) {
            roles.add(Role.BV);
        }
        roles.add(Role.WO);
        if (arch.qkNorm()) {
            roles.add(Role.Q_NORM);
            roles.add(Role.K_NORM);
        }
        roles.addAll(List.of(Role.FFN_NORM, Role.W1, Role.W2, Role.W3));
        return roles;
    }

    private LlamaTensors() {
    }

    /** Shape of {@code role} in a model of shape {@code cfg}. */
    public static Slot slot(ModelConfig cfg, Role role, int layer) {
        int dim = cfg.dim();
        return switch (role) {
            case TOKEN_EMBD, OUTPUT -> new Slot(role, layer, cfg.vocabSize(), dim);
            case ATTN_NORM, FFN_NORM, OUTPUT_NORM -> new Slot(role, layer, 1, dim);
            case WQ -> new Slot(role, layer, cfg.qDim(), dim);
            case WO -> new Slot(role, layer, dim, cfg.qDim());
            case WK, WV -> new Slot(role, layer, cfg.kvDim(), dim);
            case BQ -> new Slot(role, layer, 1, cfg.qDim());
            case BK, BV -> new Slot(role, layer, 1, cfg.kvDim());
            case Q_NORM, K_NORM -> new Slot(role, layer, 1, cfg.headSize());
            case ROPE_FREQS -> new Slot(role, layer, 1, cfg.headSize() / 2);
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
        if (cfg.ropeScaling() != null) {
            slots.add(slot(cfg, Role.ROPE_FREQS, -1));
        }
        List<Role> block = blockRoles(cfg);
        for (int l = 0; l < cfg.nLayers(); l++) {
            for (Role role : block) {
                slots.add(slot(cfg, role, l));
            }
        }
        return slots;
    }

    /** Builds (and shape-checks) the weights from a lookup that maps each slot to its tensor. */
    public static LlamaWeights assemble(ModelConfig cfg, Function<Slot, Tensor> lookup) {
        List<LlamaWeights.Layer> layers = new ArrayList<>();
        List<Role> block = blockRoles(cfg);
        for (int l = 0; l < cfg.nLayers(); l++) {
            int layer = l;
            // tensors the architecture does not have stay null
            Function<Role, Tensor> at = role -> block.contains(role) ? lookup.apply(slot(cfg, role, layer)) : null;
            layers.add(new LlamaWeights.Layer(at.apply(Role.ATTN_NORM), at.apply(Role.WQ), at.apply(Role.WK),
                    at.apply(Role.WV), at.apply(Role.WO), at.apply(Role.FFN_NORM), at.apply(Role.W1),
                    at.apply(Role.W2), at.apply(Role.W3), at.apply(Role.BQ), at.apply(Role.BK), at.apply(Role.BV),
                    at.apply(Role.Q_NORM), at.apply(Role.K_NORM)));
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
            case BQ -> weights.layers().get(slot.layer).bq();
            case BK -> weights.layers().get(slot.layer).bk();
            case BV -> weights.layers().get(slot.layer).bv();
            case Q_NORM -> weights.layers().get(slot.layer).qNorm();
            case K_NORM -> weights.layers().get(slot.layer).kNorm();
            case ROPE_FREQS -> throw new IllegalArgumentException(
                    "rope_freqs is derived from the model's RoPE scaling, not a weight tensor");
        };
    }
}
