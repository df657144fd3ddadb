package dev.pagewarden.core.policy;

/** What an abort does with the decode pages of a transfer that may still be writing to them. */
@FunctionalInterface
public interface AbortRelease {

    /** Production: the pages stay out of service until the sender's ack says no write is in flight. */
    AbortRelease DEFER_UNTIL_ACK = AbortedTransfer::deferUntilAck;

    /** Settles {@code transfer} by calling exactly one of its methods. */
    void settle(AbortedTransfer transfer);

    /** An aborted transfer's pages, as the decode side offers them. */
    interface AbortedTransfer {
        /**
         * Keeps the pages from reuse until the sender's ack for this transfer (drained), or scrubs them when the
         * ack is overdue (timeout).
         */
        void deferUntilAck();

        /** Hands the request's reservation back at once, while the sender's writes may still land on its pages. */
        void releaseNow();
    }
}
