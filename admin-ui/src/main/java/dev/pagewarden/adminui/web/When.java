package dev.pagewarden.adminui.web;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;

/**
 * Times as an operator reads them: local clock time (with the date when it is not today) and how long ago,
 * with the exact ISO instant kept for hover and machines. In templates: {@code #when.tag(t)}, {@code #when.at(t)}.
 */
public final class When {
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");
    private static final DateTimeFormatter DATE_TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss");

    private final Clock clock;
    private final ZoneId zone;

    public When(Clock clock, ZoneId zone) {
        this.clock = clock;
        this.zone = zone;
    }

    public ZoneId zone() {
        return zone;
    }

    /** Clock time in the operator's zone; the date is added when the instant is not today. */
    public String local(Instant t) {
        if (t == null) {
            return "";
        }
        ZonedDateTime at = t.atZone(zone);
        boolean today = at.toLocalDate().equals(clock.instant().atZone(zone).toLocalDate());
        return (today ? TIME : DATE_TIME).format(at);
    }

    /** "12 min ago", "in 3 s" for a time still ahead. */
    public String ago(Instant t) {
        return t == null ? "" : relative(Duration.between(t, clock.instant()));
    }

    /** "19:36:30 (12 min ago)". */
    public String at(Instant t) {
        return t == null ? "" : local(t) + " (" + ago(t) + ")";
    }

    /** A {@code <time>} element: the local and relative time shown, the ISO instant in datetime and on hover. */
    public String tag(Instant t) {
        if (t == null) {
            return "";
        }
        String iso = t.toString();
        return "<time datetime=\"" + iso + "\" title=\"" + iso + " · shown in " + zone.getId() + "\">" + Svg.escape(at(t)) + "</time>";
    }

    /** As {@link #tag}, the clock time only (no "ago"), for a second time in the same sentence. */
    public String clockTag(Instant t) {
        if (t == null) {
            return "";
        }
        String iso = t.toString();
        return "<time datetime=\"" + iso + "\" title=\"" + iso + " (" + Svg.escape(ago(t)) + ") · shown in " + zone.getId() + "\">"
                + Svg.escape(local(t)) + "</time>";
    }

    /** How long ago an elapsed duration is, in its largest whole unit; negative durations lie ahead. */
    static String relative(Duration elapsed) {
        boolean ahead = elapsed.isNegative();
        long s = elapsed.abs().toSeconds();
        String amount;
        if (s < 1) {
            return "just now";
        } else if (s < 60) {
            amount = s + " s";
        } else if (s < 3600) {
            amount = s / 60 + " min";
        } else if (s < 86_400) {
            amount = s / 3600 + " h";
        } else {
            amount = s / 86_400 + " d";
        }
        return ahead ? "in " + amount : amount + " ago";
    }
}
