package dev.pagewarden.lab;

import dev.pagewarden.core.request.GenerationRequest;
import dev.pagewarden.core.request.PrefixCaching;
import dev.pagewarden.core.sampling.SamplingParams;
import dev.pagewarden.core.sampling.TokenConstraint;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;

/**
 * The lab's seeded multi-tenant workload: four tenants with their own stories, and the waves of
 * requests built from them. Shared by the offline {@link ReplayLab} and the platform's replay, so
 * both send the same traffic for the same seed.
 */
public final class LabWorkload {

    /** Prompt length of the over-capacity wave: more than the prefill pool holds. */
    public static final int OVER_CAPACITY_PROMPT = 250;

    /** Each tenant's stories have their own hero, so foreign content is visible in text. */
    public static final Map<String, String> TENANTS;

    static {
        Map<String, String> t = new LinkedHashMap<>();
        t.put("acme", "Once upon a time, there was a big dragon named Spark. Spark lived in a cave");
        t.put("globex", "One day, a little princess named Mia went to the sea with her red boat");
        t.put("initech", "Tom the cat had a shiny blue car. Every morning Tom drove the car to the farm");
        t.put("umbrella", "Sue and Ben found a magic tree in the garden. The tree had golden apples");
        TENANTS = Collections.unmodifiableMap(t);
    }

    /**
     * One planned request of the workload; {@code cacheKey}: its prompt cache key (null: none); {@code sampling}: how
     * it samples - greedy, or seeded, penalised or constrained, all reproducible, so the same request alone on a fresh
     * engine is the oracle for every one of them.
     */
    public record Planned(String tenant, int[] prompt, int maxNew, boolean overCapacity, boolean abortInTransfer,
                          String cacheKey, SamplingParams sampling) {

        public Planned(String tenant, int[] prompt, int maxNew, boolean overCapacity, boolean abortInTransfer) {
            this(tenant, prompt, maxNew, overCapacity, abortInTransfer, null, SamplingParams.greedy());
        }

        public Planned(String tenant, int[] prompt, int maxNew, boolean overCapacity, boolean abortInTransfer,
                       String cacheKey) {
            this(tenant, prompt, maxNew, overCapacity, abortInTransfer, cacheKey, SamplingParams.greedy());
        }

        /** The request as the engine takes it, under {@code tenantId}. */
        public GenerationRequest request(String tenantId) {
            return new GenerationRequest(tenantId, prompt, maxNew, sampling, PrefixCaching.on(cacheKey, null));
        }
    }

    /**
     * The ways the normal waves' requests sample, in turn: greedy; greedy with the penalties and a logit bias;
     * seeded sampling through top_k, top_p and min_p; greedy constrained to a JSON object (when the lab has a
     * constraint to give). Each is reproducible, so batch invariance is checked for all of them.
     */
    private SamplingParams variant(int n) {
        return switch (n % 4) {
            case 0 -> SamplingParams.greedy();
            case 1 -> SamplingParams.greedy().withPenalties(0.6f, 0.4f, 1.3f).withLogitBias(Map.of(13, -5f, 29, 3f));
            case 2 -> new SamplingParams(0.9f, 0.9f, 1_000L + n).withFilters(40, 0.05f);
            default -> json == null ? SamplingParams.greedy() : SamplingParams.greedy().withConstraint(json);
        };
    }

    /**
     * The system prompt that acme and globex both send in the prefix cache rounds: the same tokens in two
     * tenants' scopes, which only a lookup that ignores the scope would let one reuse from the other.
     */
    static final String SHARED_SYSTEM_PROMPT = "Once upon a time there was a wise old owl who lived in a tall tree."
            + " Every night the owl told the animals of the forest a story about the moon and the stars";

    /** Rounds of {@link #prefixWave}. */
    public static final int PREFIX_ROUNDS = 3;

    /** How the requests of one tenant go on after their common system prompt, one per request of the rounds. */
    private static final List<String> CONTINUATIONS = List.of("Then the wind", "One day a little boy", "The fox asked",
            "After lunch they", "At night the sky", "Later that day", "The next morning", "Suddenly a bird",
            "In the end they");

    /** A prompt cache key some of each tenant's requests carry: a second scope inside the tenant. */
    static final String SECOND_KEY = "team-b";

    /** Text to prompt tokens, BOS first, as the engine under test reads a client's text. */
    private final Function<String, int[]> tokenizer;

    /** Greedy JSON objects for the constrained variant (null: that variant is plain greedy). */
    private final TokenConstraint json;

    public LabWorkload(Function<String, int[]> tokenizer) {
        this(tokenizer, null);
    }

    public LabWorkload(Function<String, int[]> tokenizer, TokenConstraint json) {
        this.tokenizer = tokenizer;
        this.json = json;
    }

    /** Normal traffic: {@code perTenant} short prompts from every tenant. */
    public List<Planned> normalWave(SplittableRandom rnd, int perTenant) {
        List<Planned> plans = new ArrayList<>();
        int k = 0;
        for (int i = 0; i < perTenant; i++) {
            for (Map.Entry<String, String> t : TENANTS.entrySet()) {
                int[] full = tokenizer.apply(t.getValue());
                int len = Math.min(full.length, 10 + rnd.nextInt(20));
                plans.add(new Planned(t.getKey(), Arrays.copyOf(full, len), 12 + rnd.nextInt(20), false, false, null,
                        variant(i + k++)));
            }
        }
        return plans;
    }

    /** One prompt per tenant over the pool capacity. */
    public List<Planned> overCapacityWave() {
        List<Planned> plans = new ArrayList<>();
        for (Map.Entry<String, String> t : TENANTS.entrySet()) {
            StringBuilder text = new StringBuilder(t.getValue());
            while (tokenizer.apply(text.toString()).length < OVER_CAPACITY_PROMPT) {
                text.append(". ").append(t.getValue());
            }
            int[] prompt = Arrays.copyOf(tokenizer.apply(text.toString()), OVER_CAPACITY_PROMPT);
            plans.add(new Planned(t.getKey(), prompt, 40, true, false));
        }
        return plans;
    }

    /** The request a tenant aborts while its KV is in transfer. */
    public Planned abortWave(String tenant) {
        int[] full = tokenizer.apply(TENANTS.get(tenant) + ". " + TENANTS.get(tenant));
        return new Planned(tenant, Arrays.copyOf(full, Math.min(full.length, 46)), 16, false, true);
    }

    /**
     * Requests of the other tenants, submitted right after the abort. Their prompts span two pages:
     * the first of them reserves the aborted request's freed pages (LIFO), and its second prompt page
     * is the aborted request's third, whose delayed frame lands after the victim's own frame did -
     * while the victim, with a long answer to write, is still decoding from it.
     */
    public List<Planned> victims(SplittableRandom rnd, String aborter) {
        List<Planned> plans = new ArrayList<>();
        for (String t : TENANTS.keySet()) {
            if (!t.equals(aborter)) {
                int[] full = tokenizer.apply(TENANTS.get(t) + ". " + TENANTS.get(t));
                plans.add(new Planned(t, Arrays.copyOf(full, 18 + rnd.nextInt(6)), 150, false, false));
            }
        }
        return plans;
    }

    /** The system prompt every prompt of {@code tenant} starts with in the prefix cache rounds. */
    static String systemPrompt(String tenant) {
        return tenant.equals("acme") || tenant.equals("globex") ? SHARED_SYSTEM_PROMPT
                : TENANTS.get(tenant) + ". " + TENANTS.get(tenant);
    }

    /**
     * Round {@code round} of the prefix cache traffic: three requests per tenant, each its tenant's system prompt
     * (several full pages) followed by its own continuation; the third carries the prompt cache key
     * {@value #SECOND_KEY}, so each tenant has two scopes. Later rounds reuse what earlier ones left cached.
     */
    public List<Planned> prefixWave(int round) {
        List<Planned> plans = new ArrayList<>();
        for (String t : TENANTS.keySet()) {
            int[] system = tokenizer.apply(systemPrompt(t));
            for (int j = 0; j < 3; j++) {
                int[] rest = tokenizer.apply(CONTINUATIONS.get((round * 3 + j) % CONTINUATIONS.size()));
                // the continuation's tokens without its BOS, after the system prompt's
                int[] prompt = Arrays.copyOf(system, system.length + rest.length - 1);
                System.arraycopy(rest, 1, prompt, system.length, rest.length - 1);
                plans.add(new Planned(t, prompt, 16, false, false, j == 2 ? SECOND_KEY : null));
            }
        }
        return plans;
    }
}
