package dev.pagewarden.platform.completion;

import org.springframework.stereotype.Component;

/** Set once shutdown begins: from then on the tenant API admits nothing (503 overloaded). */
@Component
public class Draining {
    private volatile boolean active;

    public boolean active() {
        return active;
    }

    public void begin() {
        active = true;
    }

    /** A stopped context started again (Lifecycle restart) admits again. */
    public void end() {
        active = false;
    }
}
