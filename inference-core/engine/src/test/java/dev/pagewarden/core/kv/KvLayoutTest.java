package dev.pagewarden.core.kv;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class KvLayoutTest {

    /** Every (layer, K|V, slot, head, element) has its own float of the page, in both orders. */
    @Test
    void offsetsMapEveryVectorToItsOwnFloats() {
        for (KvLayout.Order order : KvLayout.Order.values()) {
            KvLayout l = new KvLayout(3, 12, 5, 4, order);
            int[] owner = new int[(int) l.pageFloats()];
            int id = 0;
            for (int layer = 0; layer < 3; layer++) {
                for (int kv = 0; kv < 2; kv++) {
                    for (int slot = 0; slot < 5; slot++) {
                        for (int head = 0; head < l.kvHeads(); head++) {
                            id++;
                            for (int e = 0; e < l.headDim(); e++) {
                                int at = (int) l.offset(layer, kv, slot, head) + e * l.elementStride(kv);
                                assertThat(owner[at]).as("%s float %d", order, at).isZero();
                                owner[at] = id;
                            }
                            if (slot > 0) {
                                assertThat(l.offset(layer, kv, slot, head) - l.offset(layer, kv, slot - 1, head))
                                        .isEqualTo(l.slotStride(kv));
                            }
                        }
                    }
                }
            }
            assertThat(owner).doesNotContain(0);
        }
    }

    /** The runs of a partial page cover exactly the floats of slots below the count, nothing else. */
    @Test
    void slotRunsCoverExactlyTheFirstSlots() {
        for (KvLayout.Order order : KvLayout.Order.values()) {
            KvLayout l = new KvLayout(2, 8, 4, 2, order);
            for (int slots = 0; slots <= 5; slots++) {
                boolean[] covered = new boolean[(int) l.pageFloats()];
                l.slotRuns(slots, (offset, floats) -> {
                    for (long f = offset; f < offset + floats; f++) {
                        assertThat(covered[(int) f]).as("float %d twice", f).isFalse();
                        covered[(int) f] = true;
                    }
                });
                for (int layer = 0; layer < 2; layer++) {
                    for (int kv = 0; kv < 2; kv++) {
                        for (int slot = 0; slot < 4; slot++) {
                            for (int head = 0; head < l.kvHeads(); head++) {
                                for (int e = 0; e < 2; e++) {
                                    assertThat(covered[(int) (l.offset(layer, kv, slot, head) + e * l.elementStride(kv))])
                                            .as("%s slots=%d layer %d kv %d slot %d head %d", order, slots, layer, kv, slot, head)
                                            .isEqualTo(slot < slots);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    @Test
    void headPanelPagesHaveNoContiguousRows() {
        KvLayout l = new KvLayout(1, 8, 4, 2, KvLayout.Order.HEAD_PANELS);
        assertThatThrownBy(() -> l.rowOffset(0, 0, 1)).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("HEAD_PANELS");
        assertThat(l.in(KvLayout.Order.SLOT_MAJOR).rowOffset(0, 1, 1)).isEqualTo(4 * 8 + 8);
    }

    @Test
    void refusesAHeadSizeThatDoesNotDivideTheKvWidth() {
        assertThatThrownBy(() -> new KvLayout(1, 10, 4, 4, KvLayout.Order.SLOT_MAJOR))
                .hasMessageContaining("headDim 4");
    }
}
