# Renders chat templates with Python's Jinja2 the way transformers' apply_chat_template does
# (sandboxed, trim_blocks, lstrip_blocks, raise_exception and strftime_now), as a second oracle.
# Same job file (a case may carry its own "template") and output as render.mjs: python3 render.py JOB.json
import json
import sys
from datetime import datetime

from jinja2.exceptions import TemplateError
from jinja2.sandbox import ImmutableSandboxedEnvironment


def raise_exception(message):
    raise TemplateError(message)


def tojson(x, ensure_ascii=False, indent=None, separators=None, sort_keys=False):
    return json.dumps(x, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)


with open(sys.argv[1], encoding="utf-8") as f:
    job = json.load(f)
env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
env.filters["tojson"] = tojson
env.globals["raise_exception"] = raise_exception
env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
shared = env.from_string(job["template"]) if job.get("template") is not None else None
out = []
for case in job["cases"]:
    try:
        template = env.from_string(case["template"]) if case.get("template") is not None else shared
        out.append({"text": template.render(messages=case["messages"], add_generation_prompt=case["add_generation_prompt"],
                                            bos_token=job.get("bos_token") or "", eos_token=job.get("eos_token") or "")})
    except TemplateError as e:
        out.append({"error": str(e)})
sys.stdout.write(json.dumps(out))
