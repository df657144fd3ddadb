package dev.pagewarden.core.backend.cpu;

import dev.pagewarden.core.tensor.HostMemory;
import dev.pagewarden.core.model.LlamaWeights;
import dev.pagewarden.core.model.Tensor;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * Uploads a model's weights into the CPU backend's own memory, as a GPU backend uploads them to
 * the device: each tensor 64-byte aligned inside one huge-page-backed block. The loader's file
 * mapping stays untouched (and can be evicted); tensors shared in the model (a tied classifier)
 * stay shared.
 */
final class ResidentWeights {
    private ResidentWeights() {
    }

    static LlamaWeights upload(LlamaWeights w, Arena arena) {
        Map<Tensor, Tensor> copies = new IdentityHashMap<>();
        List<Tensor> all = new ArrayList<>();
        all.add(w.tokenEmbedding());
        for (LlamaWeights.Layer l : w.layers()) {
            all.addAll(List.of(l.rmsAtt(), l.wq(), l.wk(), l.wv(), l.wo(), l.rmsFfn(), l.w1(), l.w2(), l.w3()));
        }
        all.add(w.rmsFinal());
        all.add(w.classifier());
        long total = 0;
        for (Tensor t : all) {
            if (copies.put(t, t) == null) {
                total += align(t.data().byteSize());
            }
        }
        copies.clear();
        MemorySegment block = HostMemory.allocate(arena, total);
        long at = 0;
        for (Tensor t : all) {
            if (!copies.containsKey(t)) {
                long n = t.data().byteSize();
                MemorySegment dst = block.asSlice(at, n);
                dst.copyFrom(t.data());
                copies.put(t, new Tensor(t.name(), t.type(), t.rows(), t.cols(), dst));
                at += align(n);
            }
        }
        List<LlamaWeights.Layer> layers = new ArrayList<>();
        for (LlamaWeights.Layer l : w.layers()) {
            layers.add(new LlamaWeights.Layer(copies.get(l.rmsAtt()), copies.get(l.wq()), copies.get(l.wk()),
                    copies.get(l.wv()), copies.get(l.wo()), copies.get(l.rmsFfn()), copies.get(l.w1()),
                    copies.get(l.w2()), copies.get(l.w3())));
        }
        return new LlamaWeights(w.config(), copies.get(w.tokenEmbedding()), layers, copies.get(w.rmsFinal()),
                copies.get(w.classifier()));
    }

    private static long align(long n) {
        return (n + 63) & ~63L;
    }
}
