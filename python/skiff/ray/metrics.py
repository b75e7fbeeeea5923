"""The replicas' Prometheus texts as one exposition, each sample labelled
replica="ID", each metric family's HELP and TYPE once (the text format wants
a family's samples together)."""
from __future__ import annotations

import re
from typing import Dict

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (.*)$")


def merge_replica_metrics(texts: Dict[str, str]) -> str:
    headers: Dict[str, list] = {}
    samples: Dict[str, list] = {}
    for replica_id, text in sorted(texts.items()):
        label = 'replica="{}"'.format(replica_id.replace("\\", "\\\\").replace('"', '\\"'))
        family = None
        for line in text.splitlines():
            if line.startswith("# "):
                parts = line.split(" ", 3)
                if len(parts) >= 3 and parts[1] in ("HELP", "TYPE"):
                    family = parts[2]
                    headers.setdefault(family, [])
                    if line not in headers[family]:
                        headers[family].append(line)
                continue
            m = _SAMPLE.match(line)
            if not m:
                continue
            name, labels, value = m.group(1), m.group(3), m.group(4)
            labels = f"{labels},{label}" if labels else label
            samples.setdefault(family or name, []).append(f"{name}{{{labels}}} {value}")
    out = []
    for family in list(dict.fromkeys([*headers, *samples])):
        out += headers.get(family, [])
        out += samples.get(family, [])
    return "\n".join(out) + "\n" if out else ""
