package dev.pagewarden.platform.deploy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The instructions of a Dockerfile (continuation lines joined, comments dropped), grouped by stage, and the
 * few arguments the deploy checks need: what COPY copies from where, USER, ENV, EXPOSE, ENTRYPOINT.
 */
record Dockerfile(List<Stage> stages) {

    record Instruction(String keyword, String arguments) {
    }

    record Stage(String name, String base, List<Instruction> instructions) {

        List<String> all(String keyword) {
            return instructions.stream().filter(i -> i.keyword().equals(keyword)).map(Instruction::arguments).toList();
        }

        /** COPY's sources and destination, the {@code --from=} stage (null: the build context) first. */
        List<Copy> copies() {
            List<Copy> out = new ArrayList<>();
            for (String args : all("COPY")) {
                List<String> words = new ArrayList<>(List.of(args.split("\\s+")));
                String from = null;
                while (words.getFirst().startsWith("--")) {
                    String flag = words.removeFirst();
                    if (flag.startsWith("--from=")) {
                        from = flag.substring("--from=".length());
                    }
                }
                out.add(new Copy(from, words.subList(0, words.size() - 1), words.getLast()));
            }
            return out;
        }

        /** ENV in both forms ({@code K=V K2="V 2"} and {@code K V}). */
        Map<String, String> env() {
            Map<String, String> env = new LinkedHashMap<>();
            Pattern pair = Pattern.compile("([A-Za-z_][A-Za-z0-9_]*)=(\"(?:[^\"\\\\]|\\\\.)*\"|\\S+)");
            for (String args : all("ENV")) {
                Matcher m = pair.matcher(args);
                boolean any = false;
                while (m.find()) {
                    String v = m.group(2);
                    env.put(m.group(1), v.startsWith("\"") ? v.substring(1, v.length() - 1) : v);
                    any = true;
                }
                if (!any) {
                    String[] kv = args.split("\\s+", 2);
                    env.put(kv[0], kv[1]);
                }
            }
            return env;
        }
    }

    record Copy(String fromStage, List<String> sources, String destination) {
    }

    static Dockerfile parse(String text) {
        List<Stage> stages = new ArrayList<>();
        List<Instruction> current = null;
        StringBuilder line = new StringBuilder();
        for (String raw : text.lines().toList()) {
            String l = raw.strip();
            if (l.startsWith("#") || (l.isEmpty() && line.isEmpty())) {
                continue;
            }
            if (l.endsWith("\\")) {
                line.append(l, 0, l.length() - 1).append(' ');
                continue;
            }
            line.append(l);
            String[] kw = line.toString().strip().split("\\s+", 2);
            line.setLength(0);
            String keyword = kw[0].toUpperCase(java.util.Locale.ROOT);
            String arguments = kw.length > 1 ? kw[1].replaceAll("\\s+", " ") : "";
            if (keyword.equals("FROM")) {
                String[] from = arguments.split("\\s+");
                current = new ArrayList<>();
                stages.add(new Stage(from.length == 3 && from[1].equalsIgnoreCase("AS") ? from[2] : null, from[0], current));
            } else if (current == null) {
                throw new AssertionError("Dockerfile: " + keyword + " before the first FROM");
            } else {
                current.add(new Instruction(keyword, arguments));
            }
        }
        return new Dockerfile(stages);
    }

    Stage stage(String name) {
        return stages.stream().filter(s -> name.equals(s.name())).findFirst()
                .orElseThrow(() -> new AssertionError("Dockerfile has no stage '" + name + "'"));
    }

    /** The image built without --target: the last stage. */
    Stage image() {
        return stages.getLast();
    }
}
