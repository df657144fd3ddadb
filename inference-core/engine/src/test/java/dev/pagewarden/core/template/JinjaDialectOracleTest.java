package dev.pagewarden.core.template;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static dev.pagewarden.core.template.Conversations.assistant;
import static dev.pagewarden.core.template.Conversations.user;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Python that chat templates lean on (slices, {@code str} methods, whitespace markers, namespaces,
 * loop variables), one snippet at a time, against Python's Jinja2 as transformers configures it; and
 * against {@code @huggingface/jinja} for the snippets where that engine follows Python. Printing a
 * boolean or none directly is left out: Jinja2 prints {@code True}/{@code None}, {@code @huggingface/jinja}
 * and Jinjava {@code true} and nothing; chat templates test them, they do not print them.
 */
class JinjaDialectOracleTest {
    @TempDir
    Path work;

    @BeforeAll
    static void oracle() {
        TemplateOracle.requireInstalled();
    }

    private static final List<ChatMessage> MESSAGES = List.of(user("  Hello, World  "), assistant("<think>\nx\n</think>\n\n  answer\n"), user("a,b,,c"));

    /** Snippets where both oracles agree with Python. */
    private static final List<String> COMMON = List.of(
            "{{ messages[1:] | length }}|{{ messages[::-1][0].content }}|{{ messages[-1].content }}|{{ messages[:1][0].role }}",
            "{{ messages[0].content[2:7] }}|{{ messages[0].content[::-1] }}|{{ messages[0].content[-5:] }}|{{ messages[0].content[::2] }}",
            "{{ messages[0].content.strip() }}|{{ messages[0].content.upper() }}|{{ messages[0].content.lower() }}",
            "{{ messages[2].content.split(',') | join('/') }}|{{ messages[0].content.split() | join('_') }}|{{ messages[2].content.split(',', 1)[1] }}",
            "{{ 'T' if messages[0].content.startswith('  He') }}{{ 'T' if messages[0].content.endswith('x') else 'F' }}{{ 'T' if messages[0].content.startswith(('x', '  H')) }}",
            "{%- set ns = namespace(found=false, last=messages|length - 1) %}{%- for m in messages %}{%- if m.role == 'assistant' %}{%- set ns.found = true %}{%- endif %}{%- endfor %}{{ 'found' if ns.found }}/{{ ns.last }}",
            "{% for m in messages %}{{ loop.index }}{{ loop.index0 }}{{ 'F' if loop.first }}{{ 'L' if loop.last }}{{ loop.length }};{% endfor %}",
            "a\n   {%- if true %}\n  b  \n{%- endif -%}\n   c {{- ' d ' -}} e\n{# comment #}\n  {{ 'f' }}  \n",
            "{% for m in messages %}\n    {% if m.role == 'user' %}\n        U:{{ m.content | trim }}\n    {% else %}\n        A\n    {% endif %}\n{% endfor %}\n",
            "{{ 'in' if '</think>' in messages[1].content }}{{ 'in' if 'zz' in messages[1].content else 'out' }}{{ messages[1].content.split('</think>')[-1] | trim }}",
            "{{ messages[0]['role'] }}{{ 'y' if messages[0].role == 'user' and not messages[1].role == 'user' }}{{ (messages | length) * 2 + 1 }}",
            "{%- if messages[5] is defined %}yes{% else %}no{% endif %}{{ 'd' if foo is defined else 'u' }}{{ 'n' if none is none }}{{ 'x' ~ 1 }}",
            "{{ messages[0].content | length }}|{{ messages | map(attribute='role') | join(',') }}|{{ messages | selectattr('role', 'equalto', 'user') | list | length }}",
            "{{ 'n' if {'a': 1}.get('b') is none }}{{ {'a': 1}.get('a') }}{{ {'a': 1}.get('b', 'dflt') }}{% for k, v in {'x': 'y'}.items() %}{{ k }}={{ v }}{% endfor %}",
            "{{ {'name': 'f', 'args': [1, 'x\"y', none, true, {}], 'e': []} | tojson }}|{{ messages[0] | tojson }}",
            "{{ {'name': 'f', 'args': [1, {'k': 'v'}], 'e': []} | tojson(indent=4) }}",
            "{%- set content = messages[1].content %}{%- if '</think>' in content %}{%- set content = content.split('</think>')[-1] %}{%- endif %}[{{ content }}]");

    /** Snippets where @huggingface/jinja 0.5.11 departs from Python (strip with an argument). */
    private static final List<String> PYTHON_ONLY = List.of(
            "[{{ messages[1].content.split('</think>')[-1].lstrip('\\n') }}][{{ messages[0].content.rstrip('d ') }}][{{ 'xxhixx'.strip('x') }}]");

    @Test
    void commonSnippetsMatchBothOracles() throws Exception {
        check(COMMON, true);
    }

    @Test
    void stripWithCharactersFollowsPython() throws Exception {
        check(PYTHON_ONLY, false);
        assertThat(ChatTemplate.of(PYTHON_ONLY.getFirst(), null, null).render(MESSAGES, false)).isEqualTo("[  answer\n][  Hello, Worl][hi]");
    }

    private void check(List<String> snippets, boolean alsoHfJinja) throws Exception {
        List<TemplateOracle.Case> cases = snippets.stream().map(s -> new TemplateOracle.Case(s, MESSAGES, false, s)).toList();
        List<TemplateOracle.Rendered> py = TemplateOracle.render(TemplateOracle.Engine.PYTHON_JINJA2, work, null, "<s>", "</s>", cases);
        List<TemplateOracle.Rendered> hf = TemplateOracle.render(TemplateOracle.Engine.HF_JINJA, work, null, "<s>", "</s>", cases);
        for (int i = 0; i < snippets.size(); i++) {
            String snippet = snippets.get(i);
            String ours = ChatTemplate.of(snippet, "<s>", "</s>").render(MESSAGES, false);
            assertThat(py.get(i).error()).as(snippet).isNull();
            assertThat(ours).as(snippet + " against Jinja2").isEqualTo(py.get(i).text());
            if (alsoHfJinja) {
                assertThat(ours).as(snippet + " against @huggingface/jinja").isEqualTo(hf.get(i).text());
            } else {
                assertThat(ours).as(snippet + ": @huggingface/jinja is known to differ here").isNotEqualTo(hf.get(i).text());
            }
        }
    }
}
