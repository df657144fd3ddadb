package dev.pagewarden.core.request;

import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sequence.Sequence;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Every pair of states: exactly the drawn transitions exist. */
class RequestStateTest {
    static final RequestState Q = new RequestState.Queued();
    static final RequestState AD = new RequestState.Admitted();
    static final RequestState RS = new RequestState.Reserved();
    static final RequestState PF = new RequestState.Prefilling();
    static final RequestState TR = new RequestState.Transferring();
    static final RequestState RD = new RequestState.Ready();
    static final RequestState DC = new RequestState.Decoding();
    static final RequestState PM = new RequestState.Preempted(1);
    static final RequestState FI = new RequestState.Finished(FinishReason.STOP);
    static final RequestState RJ = new RequestState.Rejected("c", "m");
    static final RequestState AB = new RequestState.Aborted("r");
    static final RequestState FA = new RequestState.Failed("c", "m");
    static final List<RequestState> ALL = List.of(Q, AD, RS, PF, TR, RD, DC, PM, FI, RJ, AB, FA);

    static final Map<RequestState, Set<RequestState>> ALLOWED = Map.ofEntries(
            Map.entry(Q, Set.of(AD, RJ, AB)),
            Map.entry(AD, Set.of(RS, RJ, AB)),
            Map.entry(RS, Set.of(PF, AB, FA)),
            Map.entry(PF, Set.of(TR, AB, FA)),
            Map.entry(TR, Set.of(RD, AB, FA)),
            Map.entry(RD, Set.of(DC, FI, AB, FA)),
            Map.entry(DC, Set.of(FI, PM, AB, FA)),
            Map.entry(PM, Set.of(RS, AB, FA)),
            Map.entry(FI, Set.of()), Map.entry(RJ, Set.of()), Map.entry(AB, Set.of()), Map.entry(FA, Set.of()));

    @Test
    void exactlyTheDrawnTransitionsExist() {
        for (RequestState from : ALL) {
            for (RequestState to : ALL) {
                assertThat(from.canMoveTo(to)).as(from + " -> " + to).isEqualTo(ALLOWED.get(from).contains(to));
            }
        }
    }

    @Test
    void rejectedOnlyBeforeReservation() {
        for (RequestState s : List.of(RS, PF, TR, RD, DC, PM)) {
            assertThat(s.canMoveTo(RJ)).as(s + " -> Rejected").isFalse();
        }
    }

    @Test
    void terminalStatesAreTerminal() {
        assertThat(ALL.stream().filter(RequestState::isTerminal)).containsExactlyInAnyOrder(FI, RJ, AB, FA);
    }

    @Test
    void illegalMoveOnASequenceThrows() {
        Sequence seq = new Sequence(1, new GenerationRequest("t", new int[]{1}, 3, SamplingParams.greedy()),
                TokenListener.NONE, 0);
        seq.reject("context_length_exceeded", "too long");
        assertThatThrownBy(() -> seq.moveTo(new RequestState.Reserved())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("Rejected").hasMessageContaining("Reserved");
        assertThatThrownBy(() -> seq.moveTo(new RequestState.Decoding())).isInstanceOf(IllegalStateException.class);
    }
}
