package dev.pagewarden.platform.ops;

import org.springframework.stereotype.Component;

/** Set once shutdown begins: from then on the tenant API admits nothing (503 overloaded). */
@Component
public class Draining {
    private volatile boolean active;

    public boolean active() {
        return active;
    }

    void begin() {
        active = true;
    }

    /** A stopped context started again (Lifecycle restart) admits again. */
    void end() {
        active = false;
    }
}
