package dev.pagewarden.core.grammar;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The automaton a schema compiles to, fed whole strings: what it accepts and what it refuses. */
class JsonGrammarTest {

    /** Whether {@code text} is a complete value of the grammar. */
    static boolean accepts(JsonGrammar g, String text) {
        Automaton.State s = Automaton.start(g.root);
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            s = Automaton.feed(s, b);
            if (s.dead()) {
                return false;
            }
        }
        return s.accepting();
    }

    private static JsonGrammar schema(String json) {
        return JsonGrammar.compile(json.replace('\'', '"'));
    }

    @Test
    void propertiesComeInSchemaOrderRequiredOnesAlwaysOptionalOnesMayBeLeftOut() {
        JsonGrammar g = schema("{'type':'object','properties':{'a':{'type':'integer'},'b':{'type':'boolean'},"
                + "'c':{'type':'null'}},'required':['a','c'],'additionalProperties':false}");
        assertThat(accepts(g, "{\"a\":1,\"b\":true,\"c\":null}")).isTrue();
        assertThat(accepts(g, "{\"a\":-20,\"c\":null}")).isTrue();
        assertThat(accepts(g, "{\"a\":1}")).as("c is required").isFalse();
        assertThat(accepts(g, "{\"c\":null,\"a\":1}")).as("schema order").isFalse();
        assertThat(accepts(g, "{\"a\":1,\"b\":true,\"c\":null,\"d\":1}")).isFalse();
        assertThat(accepts(g, "{\"a\": 1,\"c\":null}")).as("no whitespace").isFalse();
        assertThat(accepts(g, "{\"a\":01,\"c\":null}")).as("no leading zero").isFalse();
        assertThat(accepts(g, "{\"a\":1.5,\"c\":null}")).as("an integer").isFalse();
    }

    @Test
    void enumsConstsAndAnyOf() {
        JsonGrammar g = schema("{'type':'object','properties':{'e':{'enum':['red','reddish',3,null]},"
                + "'k':{'const':{'x':[1,2]}},'u':{'anyOf':[{'type':'string','maxLength':2},{'type':'number'}]}},"
                + "'required':['e','k','u']}");
        assertThat(accepts(g, "{\"e\":\"red\",\"k\":{\"x\":[1,2]},\"u\":\"ab\"}")).isTrue();
        assertThat(accepts(g, "{\"e\":\"reddish\",\"k\":{\"x\":[1,2]},\"u\":-1.25e+10}")).isTrue();
        assertThat(accepts(g, "{\"e\":3,\"k\":{\"x\":[1,2]},\"u\":0}")).isTrue();
        assertThat(accepts(g, "{\"e\":null,\"k\":{\"x\":[1,2]},\"u\":\"\"}")).isTrue();
        assertThat(accepts(g, "{\"e\":\"blue\",\"k\":{\"x\":[1,2]},\"u\":0}")).isFalse();
        assertThat(accepts(g, "{\"e\":\"red\",\"k\":{\"x\":[1]},\"u\":0}")).isFalse();
        assertThat(accepts(g, "{\"e\":\"red\",\"k\":{\"x\":[1,2]},\"u\":\"abc\"}")).isFalse();
        assertThat(accepts(g, "{\"e\":\"red\",\"k\":{\"x\":[1,2]},\"u\":true}")).isFalse();
    }

    @Test
    void arraysBetweenMinAndMaxItemsOfNestedObjects() {
        JsonGrammar g = schema("{'type':'object','properties':{'xs':{'type':'array','minItems':1,'maxItems':2,"
                + "'items':{'type':'object','properties':{'n':{'type':['integer','null']}},'required':['n']}}},"
                + "'required':['xs']}");
        assertThat(accepts(g, "{\"xs\":[{\"n\":1}]}")).isTrue();
        assertThat(accepts(g, "{\"xs\":[{\"n\":1},{\"n\":null}]}")).isTrue();
        assertThat(accepts(g, "{\"xs\":[]}")).isFalse();
        assertThat(accepts(g, "{\"xs\":[{\"n\":1},{\"n\":2},{\"n\":3}]}")).isFalse();
        assertThat(accepts(g, "{\"xs\":[{\"n\":1},]}")).isFalse();
    }

    @Test
    void stringLengthsCountCharactersAndOnlyValidUtf8AndEscapesPass() {
        JsonGrammar g = schema("{'type':'object','properties':{'s':{'type':'string','minLength':2,'maxLength':3}},"
                + "'required':['s']}");
        assertThat(accepts(g, "{\"s\":\"ab\"}")).isTrue();
        assertThat(accepts(g, "{\"s\":\"é€😀\"}")).as("three characters, nine bytes").isTrue();
        assertThat(accepts(g, "{\"s\":\"a\\\"\\n\"}")).as("escapes count as one").isTrue();
        assertThat(accepts(g, "{\"s\":\"a\"}")).isFalse();
        assertThat(accepts(g, "{\"s\":\"abcd\"}")).isFalse();
        assertThat(accepts(g, "{\"s\":\"a\nb\"}")).as("a raw control character").isFalse();
        assertThat(accepts(g, "{\"s\":\"a\\qb\"}")).isFalse();
        Automaton.State s = Automaton.start(g.root);
        for (byte b : "{\"s\":\"a".getBytes(StandardCharsets.UTF_8)) {
            s = Automaton.feed(s, b);
        }
        assertThat(Automaton.feed(s, 0xC0).dead()).as("an overlong lead byte").isTrue();
        assertThat(Automaton.feed(Automaton.feed(s, 0xED), 0xA0).dead()).as("a surrogate").isTrue();
        assertThat(Automaton.feed(s, 0x80).dead()).as("a lone continuation byte").isTrue();
    }

    @Test
    void jsonObjectTakesAnyObjectAndNothingElse() {
        JsonGrammar g = JsonGrammar.anyObject();
        assertThat(accepts(g, "{}")).isTrue();
        assertThat(accepts(g, "{\"a\":[1,{\"b\":null},\"x\",-0.5],\"c\":{\"d\":false}}")).isTrue();
        assertThat(accepts(g, "[1]")).isFalse();
        assertThat(accepts(g, "{\"a\":}")).isFalse();
        assertThat(accepts(g, "{\"a\":1,}")).isFalse();
    }

    @Test
    void anUnsupportedKeywordIsRefusedByNameWithItsPlace() {
        assertThatThrownBy(() -> schema("{'type':'object','patternProperties':{}}"))
                .isInstanceOfSatisfying(SchemaException.class, e -> {
                    assertThat(e.path()).isEmpty();
                    assertThat(e.getMessage()).isEqualTo("keyword 'patternProperties' is not supported");
                });
        assertThatThrownBy(() -> schema("{'type':'object','properties':{'a':{'type':'string','pattern':'x'}}}"))
                .isInstanceOfSatisfying(SchemaException.class, e -> {
                    assertThat(e.path()).isEqualTo(".properties.a");
                    assertThat(e.getMessage()).isEqualTo("keyword 'pattern' is not supported");
                });
        assertThatThrownBy(() -> schema("{'type':'array'}")).isInstanceOf(SchemaException.class)
                .hasMessageContaining("root");
        assertThatThrownBy(() -> schema("{'type':'object','required':['x']}")).isInstanceOf(SchemaException.class)
                .hasMessageContaining("'x'");
    }

    @Test
    void boundedIntegersAcceptExactlyTheValuesInRangeCheckedAgainstArithmetic() {
        long[][] ranges = {{0, 120}, {-15, 7}, {-300, -42}, {5, 5}, {1, 1000}, {-9, 0}, {17, 230}};
        for (long[] r : ranges) {
            JsonGrammar g = schema("{'type':'object','properties':{'n':{'type':'integer','minimum':" + r[0]
                    + ",'maximum':" + r[1] + "}},'required':['n']}");
            for (long v = -1200; v <= 1200; v++) {
                assertThat(accepts(g, "{\"n\":" + v + "}")).as("%d in [%d, %d]", v, r[0], r[1])
                        .isEqualTo(v >= r[0] && v <= r[1]);
            }
            assertThat(accepts(g, "{\"n\":-0}")).isFalse();
            assertThat(accepts(g, "{\"n\":007}")).isFalse();
        }
    }

    @Test
    void exclusiveAndFractionalBoundsRoundInwardAndSafeIntegerBoundsAreTheDigitsTheGrammarWrites() {
        JsonGrammar g = schema("{'type':'object','properties':{'n':{'type':'integer','exclusiveMinimum':2,"
                + "'exclusiveMaximum':7.5}},'required':['n']}");
        assertThat(accepts(g, "{\"n\":2}")).isFalse();
        assertThat(accepts(g, "{\"n\":3}")).isTrue();
        assertThat(accepts(g, "{\"n\":7}")).isTrue();
        assertThat(accepts(g, "{\"n\":8}")).isFalse();
        // zod's z.number().int() bounds: nothing narrower than what fits in 15 digits
        JsonGrammar safe = schema("{'type':'object','properties':{'n':{'type':'integer','minimum':-9007199254740991,"
                + "'maximum':9007199254740991}},'required':['n']}");
        assertThat(accepts(safe, "{\"n\":-999999999999999}")).isTrue();
        assertThat(accepts(safe, "{\"n\":1.5}")).isFalse();
        assertThatThrownBy(() -> schema("{'type':'object','properties':{'x':{'type':'number','minimum':0}}}"))
                .isInstanceOfSatisfying(SchemaException.class, e -> {
                    assertThat(e.path()).isEqualTo(".properties.x");
                    assertThat(e.getMessage()).isEqualTo("keyword 'minimum' is supported on integers only");
                });
        assertThatThrownBy(() -> schema("{'type':'object','properties':{'x':{'type':'integer','minimum':3,'maximum':2}}}"))
                .isInstanceOf(SchemaException.class).hasMessageContaining("no integer");
    }

    @Test
    void aGrammarIsRebuiltFromItsKeyAsAnEngineNodeDoes() {
        JsonGrammar args = schema("{'type':'object','properties':{'city':{'type':'string','maxLength':8}},'required':['city']}");
        JsonGrammar call = JsonGrammar.sequence(List.of(JsonGrammar.text("<tool_call>\n{\"name\": "),
                JsonGrammar.oneOf(List.of(JsonGrammar.text("\"weather\""), JsonGrammar.text("\"ti:me]\""))),
                JsonGrammar.text(", \"arguments\": "), args, JsonGrammar.text("}\n</tool_call>")));
        JsonGrammar either = JsonGrammar.oneOf(List.of(call, JsonGrammar.anyObject()));
        JsonGrammar rebuilt = JsonGrammar.ofKey(either.key());
        assertThat(rebuilt.key()).isEqualTo(either.key());
        String text = "<tool_call>\n{\"name\": \"ti:me]\", \"arguments\": {\"city\":\"Oslo\"}}\n</tool_call>";
        assertThat(accepts(rebuilt, text)).isTrue();
        assertThat(accepts(rebuilt, "{\"a\":1}")).isTrue();
        assertThat(accepts(rebuilt, text.replace("Oslo", "Amsterdam"))).as("maxLength 8").isFalse();
        for (String bad : List.of("seq:[3:abc]", "any:[]", "text:nope", "seq:[99:x]", "other")) {
            assertThatThrownBy(() -> JsonGrammar.ofKey(bad)).as(bad).isInstanceOf(SchemaException.class);
        }
    }
}
