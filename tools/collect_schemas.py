#!/usr/bin/env python3
"""Collects a corpus of real-world JSON Schemas, with valid instances, for
timing the grammar engine's token masks (tools/bench_grammar.py).

The schemas come from packages on PyPI that ship them (fetched with `pip
download`, unpacked with zipfile): AWS CloudFormation resource schemas
(cfn-lint), Kubernetes (kubernetes-validate), Google API request bodies from
the discovery documents (google-api-python-client), SchemaStore schemas of CI
and tool configurations (check-jsonschema, validate-pyproject-schema-store,
ansible-lint), package manifests (validate-pyproject, poetry-core, nbformat,
CycloneDX, AWS SAM), function-calling definitions (bfcl-eval: the Berkeley
Function Calling Leaderboard; plus a few dozen tool definitions written here
as pydantic models) and the JSON Schema and OpenAPI metaschemas.

Each schema is deduplicated, references to the other files of its package are
bundled into its $defs, and schemas over MAX_SCHEMA_BYTES are left out. For
each, a small generator writes up to INSTANCES instances that the `jsonschema`
package accepts (formats checked for the formats skiff enforces); each is
serialized compactly and with indentation. Schemas for which no instance could
be generated stay in the corpus with no texts (they still count for compile).

Output, outside the repository (the corpus is data, never committed):
  ~/.cache/skiff/schema-corpus/corpus.jsonl   one case a line: id, category,
      source, json_schema, texts, spans (per text: [start, end, label] byte
      spans of its keys and values, labelled by the schema feature that made
      them), and gen_error where generation failed
  ~/.cache/skiff/schema-corpus/manifest.json  counts per category and source

Run by hand, in an environment with jsonschema and pydantic (the test venv):
  $(scripts/setup-test-env.sh)/bin/python tools/collect_schemas.py
"""
import argparse
import copy
import datetime
import hashlib
import json
import os
import random
import re
try:  # Python 3.11 on
    import re._constants as sre_c
    import re._parser as sre_parse
except ImportError:
    import sre_constants as sre_c
    import sre_parse
import subprocess
import sys
import zipfile
from pathlib import Path

CACHE = Path(os.environ.get("SKIFF_SCHEMA_CORPUS", Path.home() / ".cache/skiff/schema-corpus"))

# Pinned so that the corpus can be made again.
PACKAGES = {
    "cfn-lint": "1.58.0",
    "kubernetes-validate": "1.37.0",
    "google-api-python-client": "2.202.0",
    "check-jsonschema": "0.39.0",
    "validate-pyproject": "0.27",
    "validate-pyproject-schema-store": "2026.10.23",
    "ansible-lint": "26.10.1",
    "poetry-core": "2.5.0",
    "nbformat": "5.11.1",
    "cyclonedx-python-lib": "11.12.0",
    "aws-sam-translator": "1.115.0",
    "bfcl-eval": "2026.3.23",
    "jsonschema-specifications": "2025.9.1",
    "openapi-spec-validator": "0.9.0",
    "openapi-schema-validator": "0.9.0",
}

MAX_SCHEMA_BYTES = 256 * 1024   # compact serialization; larger schemas are left out
INSTANCES = 2                   # instances per schema (each compact and indented)
INSTANCE_BUDGET = 900           # about this many characters of compact JSON per instance
SAMPLES = {"cloudformation": 120, "kubernetes": 80, "google-api": 100, "bfcl": 150}

# The formats skiff enforces; the instances are checked against these.
CHECKED_FORMATS = ["date", "time", "date-time", "duration", "uuid", "email", "hostname", "ipv4", "ipv6", "uri"]

WORDS = """account action active address admin agent alert amount analysis api app archive area
audit author backup balance batch billing branch bucket budget build bundle cache campaign capacity
catalog category channel check city client cloud cluster code comment config connection contact
container content context cost country customer dashboard data database dataset date default
delivery deploy description design detail device domain draft email endpoint engine entry
environment event export feature field file filter folder format gateway group health history host
image import index instance invoice issue item job key label language layer level library limit
link list location log machine manager market media member message metric model module monitor
name network node note notice order owner package page partner path payment person pipeline plan
policy pool port price primary priority product profile project queue quota record region release
report request resource response result review role route rule runtime sample schedule schema
scope search secret section security server service session setting share source space stage
status storage store stream subnet summary support system table tag target task team template
tenant test ticket timer token topic traffic trigger update usage user value vault version view
volume warning window worker workflow zone alpha bright quick north river summer silver green
simple modern global local daily weekly annual public private internal""".split()


class GenFail(Exception):
    pass


# --- fetching ---------------------------------------------------------------

def fetch_packages():
    dl = CACHE / "downloads"
    dl.mkdir(parents=True, exist_ok=True)
    unpacked = {}
    for name, version in PACKAGES.items():
        stem = name.replace("-", "_")
        wheels = [w for w in dl.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}-")]
        if not wheels:
            subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
                            "--disable-pip-version-check", "-q", "-d", str(dl), f"{name}=={version}"], check=True)
            wheels = [w for w in dl.glob("*.whl") if w.name.lower().startswith(f"{stem}-{version}-")]
        if not wheels:
            raise SystemExit(f"no wheel of {name} {version} in {dl}")
        out = CACHE / "unpacked" / f"{stem}-{version}"
        if not (out / ".done").exists():
            with zipfile.ZipFile(wheels[0]) as z:
                for member in z.namelist():
                    if member.endswith(".json"):
                        z.extract(member, out)
            (out / ".done").write_text("")
        unpacked[name] = out
    return unpacked


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


# --- bundling references to other files -------------------------------------

# Keywords whose value is a map from names to schemas (a property may be
# called "default" or "enum"), and those whose value is data, not a schema.
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
DATA_KEYWORDS = ("enum", "const", "examples", "default")


def pointer_get(doc, pointer):
    node = doc
    for part in pointer.split("/")[1:] if pointer else []:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, list):
            node = node[int(part)]
        else:
            node = node[part]
    return node


def bundle(root_path, find_file):
    """The schema at root_path with every $ref into another file that
    find_file(from_path, name) finds replaced by a ref into the root's $defs,
    where the referenced subschemas are copied (and their own refs in turn)."""
    root = load(root_path)
    defs = {}          # key -> schema
    keys = {}          # (file, pointer) -> key
    docs = {}

    def doc_of(path):
        if path not in docs:
            docs[path] = load(path)
        return docs[path]

    def key_for(path, pointer):
        if (path, pointer) in keys:
            return keys[(path, pointer)]
        base = pointer.rsplit("/", 1)[-1] if pointer else Path(path).stem
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", base) or "doc"
        key, n = base, 1
        while key in defs or key in root.get("$defs", {}):
            n += 1
            key = f"{base}_{n}"
        keys[(path, pointer)] = key
        defs[key] = None
        target = copy.deepcopy(pointer_get(doc_of(path), pointer))
        if isinstance(target, dict):
            target.pop("$id", None)
            target.pop("$schema", None)
        defs[key] = rewrite(target, path)
        return key

    def rewrite(node, current):
        if isinstance(node, list):
            return [rewrite(x, current) for x in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                name, _, pointer = v.partition("#")
                if name:
                    found = find_file(current, name)
                    if found is not None and (not pointer or pointer.startswith("/")):
                        v = "#/$defs/" + key_for(found, pointer)
                elif current != root_path and (not pointer or pointer.startswith("/")):
                    v = "#/$defs/" + key_for(current, pointer)
                out[k] = v
            elif k in DATA_KEYWORDS:
                out[k] = v
            elif k in SCHEMA_MAPS and isinstance(v, dict):
                out[k] = {name: rewrite(sub, current) for name, sub in v.items()}
            else:
                out[k] = rewrite(v, current)
        return out

    root = rewrite(root, root_path)
    if defs:
        root.setdefault("$defs", {}).update(defs)
    return root


def find_beside(current, name):
    """A referenced file looked up by its name beside the referring one."""
    base = Path(name).name
    here = Path(current).parent
    for candidate in (base, base.replace(".schema.json", ".SNAPSHOT.schema.json")):
        if (here / candidate).exists():
            return str(here / candidate)
    return None


# --- sources ----------------------------------------------------------------

def schemas_cloudformation(pkgs, rng):
    root = pkgs["cfn-lint"] / "cfnlint/data/schemas"
    types = load(root / "providers/us-east-1.json")
    keep = {"type", "properties", "required", "additionalProperties", "definitions", "$defs", "description",
            "oneOf", "anyOf", "allOf", "patternProperties", "dependencies", "dependentRequired"}
    names = sorted(types)
    rng.shuffle(names)
    for name in names[:SAMPLES["cloudformation"]]:
        path = root / "resources" / f"{types[name]}.json"
        if not path.exists():
            continue
        schema = {k: v for k, v in load(path).items() if k in keep}
        schema.setdefault("type", "object")
        yield name, schema


def schemas_kubernetes(pkgs, rng):
    base = pkgs["kubernetes-validate"] / "kubernetes_validate/kubernetes-json-schema/v1.37.0-local-strict"
    kinds, parts = [], []
    for path in sorted(base.glob("*.json")):
        if path.name in ("_definitions.json", "all.json") or path.name.endswith("-list.json") or "list-" in path.name:
            continue
        kind = load(path).get("properties", {}).get("kind")
        (kinds if kind and "enum" in kind else parts).append(path)
    rng.shuffle(kinds)
    rng.shuffle(parts)
    n_kinds = SAMPLES["kubernetes"] * 3 // 4
    for path in kinds[:n_kinds] + parts[:SAMPLES["kubernetes"] - n_kinds]:
        yield path.stem, bundle(str(path), find_beside)


def schemas_google(pkgs, rng):
    base = pkgs["google-api-python-client"] / "googleapiclient/discovery_cache/documents"
    newest = {}
    for path in sorted(base.glob("*.json")):
        api = path.name.split(".")[0]
        newest[api] = path  # sorted: later versions of a name replace earlier ones (v1 < v1beta < v2)
    apis = sorted(newest)
    rng.shuffle(apis)
    count = 0
    for api in apis:
        if count >= SAMPLES["google-api"]:
            break
        doc = load(newest[api])
        requests = []

        def walk(resource, prefix):
            for mname, m in sorted(resource.get("methods", {}).items()):
                if "request" in m and "$ref" in m["request"]:
                    requests.append((prefix + mname, m["request"]["$ref"]))
            for rname, r in sorted(resource.get("resources", {}).items()):
                walk(r, prefix + rname + ".")

        walk(doc, "")
        if not requests:
            continue
        method, ref = rng.choice(requests)
        schema = google_schema(doc.get("schemas", {}), ref)
        if schema is None:
            continue
        count += 1
        yield f"{doc.get('name', api)}.{doc.get('version', '')}.{method}", schema


def google_schema(schemas, root_name):
    """A discovery document's schema as JSON Schema: refs by name become
    refs into $defs; type 'any' is any value."""
    needed, todo = [], [root_name]
    while todo:
        name = todo.pop()
        if name in needed or name not in schemas:
            if name not in schemas:
                return None
            continue
        needed.append(name)
        todo.extend(re.findall(r'"\$ref": "([^"]+)"', json.dumps(schemas[name])))

    def convert(node):
        if isinstance(node, list):
            return [convert(x) for x in node]
        if not isinstance(node, dict):
            return node
        out = {}
        for k, v in node.items():
            if k == "$ref":
                out[k] = "#/$defs/" + v
            elif k == "id" or k == "annotations":
                continue
            elif k == "type" and v == "any":
                continue
            elif k in ("enum", "default"):
                out[k] = v
            elif k == "properties" and isinstance(v, dict):
                out[k] = {name: convert(sub) for name, sub in v.items()}
            else:
                out[k] = convert(v)
        return out

    root = convert(schemas[root_name])
    others = {n: convert(schemas[n]) for n in needed[1:]}
    if root_name in json.dumps(others) or f'"#/$defs/{root_name}"' in json.dumps(root):
        others[root_name] = convert(schemas[root_name])
    if others:
        root["$defs"] = others
    return root


def schemas_schemastore(pkgs, rng):
    vendor = pkgs["check-jsonschema"] / "check_jsonschema/builtin_schemas"
    for path in sorted((vendor / "vendor").glob("*.json")) + sorted((vendor / "custom").glob("*.json")):
        yield f"check-jsonschema/{path.stem}", bundle(str(path), find_beside)
    store = pkgs["validate-pyproject-schema-store"] / "validate_pyproject_schema_store/resources"
    for path in sorted(store.glob("*.schema.json")):
        yield f"schema-store/{path.name.replace('.schema.json', '')}", bundle(str(path), find_beside)
    ansible = pkgs["ansible-lint"] / "ansiblelint/schemas"
    for path in sorted(ansible.glob("*.json")):
        if path.name.startswith("__"):
            continue
        yield f"ansible-lint/{path.stem}", bundle(str(path), find_beside)


def schemas_manifests(pkgs, rng):
    vp = pkgs["validate-pyproject"] / "validate_pyproject"
    for path in sorted(vp.glob("*.json")) + sorted((vp / "plugins").glob("*.json")):
        yield f"validate-pyproject/{path.stem}", bundle(str(path), find_beside)
    poetry = pkgs["poetry-core"] / "poetry/core/json/schemas"
    for path in sorted(poetry.glob("*.json")):
        yield f"poetry-core/{path.stem}", bundle(str(path), find_beside)
    nb = pkgs["nbformat"] / "nbformat"
    for path in sorted(nb.glob("v*/nbformat*.json")):
        yield f"nbformat/{path.stem}", bundle(str(path), find_beside)
    cdx = pkgs["cyclonedx-python-lib"] / "cyclonedx/schema/_res"
    for path in sorted(cdx.glob("*.schema.json")):
        yield f"cyclonedx/{path.name.replace('.SNAPSHOT.schema.json', '')}", bundle(str(path), find_beside)
    sam = pkgs["aws-sam-translator"] / "samtranslator"
    for path in [sam / "validator/sam_schema/schema.json"] + sorted((sam / "validator/sam_schema/definitions").glob("*.json")):
        yield f"aws-sam/{path.stem}", bundle(str(path), find_beside)


def schemas_metaschemas(pkgs, rng):
    js = pkgs["jsonschema-specifications"] / "jsonschema_specifications/schemas"
    for path in sorted(js.glob("*/metaschema.json")):
        yield f"json-schema/{path.parent.name}", load(path)
    osv = pkgs["openapi-spec-validator"] / "openapi_spec_validator/resources/schemas"
    for path in sorted(osv.glob("*/schema.json")):
        yield f"openapi-spec/{path.parent.name}", load(path)
    oas = pkgs["openapi-schema-validator"] / "openapi_schema_validator/schemas"
    for path in sorted(oas.rglob("*.json")):
        yield f"openapi-schema/{path.relative_to(oas).with_suffix('')}", load(path)


BFCL_TYPES = {"dict": "object", "float": "number", "tuple": "array", "list": "array", "int": "integer",
              "str": "string", "bool": "boolean", "double": "number", "long": "integer"}


def bfcl_schema(node):
    """BFCL's parameter types (dict, float, tuple, any) as JSON Schema's."""
    if isinstance(node, list):
        return [bfcl_schema(x) for x in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if k == "type" and isinstance(v, str):
            if v == "any":
                continue
            out[k] = BFCL_TYPES.get(v, v)
        elif k in ("enum", "default"):
            out[k] = v
        elif k == "properties" and isinstance(v, dict):
            out[k] = {name: bfcl_schema(s) for name, s in v.items()}
        else:
            out[k] = bfcl_schema(v)
    return out


def schemas_bfcl(pkgs, rng):
    data = pkgs["bfcl-eval"] / "bfcl_eval/data"
    files = [p for p in sorted(data.glob("BFCL_v4_*.json")) if "java" not in p.name]
    files += sorted((data / "multi_turn_func_doc").glob("*.json"))
    functions = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.strip()
                if not line:
                    continue
                try:
                    entry = json.loads(line)
                except json.JSONDecodeError:
                    continue
                for fn in entry.get("function", [entry] if "parameters" in entry else []):
                    if not isinstance(fn, dict) or "parameters" not in fn:
                        continue
                    schema = bfcl_schema(fn["parameters"])
                    if not isinstance(schema, dict) or not schema.get("properties"):
                        continue
                    functions.setdefault(fn["name"], (path.stem, schema))
    names = sorted(functions)
    rng.shuffle(names)
    for name in names[:SAMPLES["bfcl"]]:
        yield f"bfcl/{functions[name][0].replace('BFCL_v4_', '')}/{name}", functions[name][1]


def schemas_pydantic(pkgs, rng):
    """Typical tool definitions (weather, calendar, e-mail, shop, tickets,
    files, databases, ...) written as pydantic models, as the function-calling
    libraries make them: nested models in $defs, Optional as anyOf with null,
    Literal and Enum, constrained strings, numbers and lists, dates."""
    try:
        import enum
        import uuid
        from datetime import date, datetime
        from typing import Literal, Optional
        from pydantic import BaseModel, Field
    except ImportError as e:
        print(f"pydantic tool definitions left out: {e}", file=sys.stderr)
        return

    class Unit(str, enum.Enum):
        celsius = "celsius"
        fahrenheit = "fahrenheit"

    class Priority(str, enum.Enum):
        low = "low"
        medium = "medium"
        high = "high"
        urgent = "urgent"

    class Address(BaseModel):
        street: str
        city: str
        postal_code: str = Field(pattern=r"^[0-9]{5}(-[0-9]{4})?$")
        country: str = Field(min_length=2, max_length=2, description="ISO 3166-1 alpha-2 code")

    class LineItem(BaseModel):
        sku: str = Field(pattern=r"^[A-Z]{3}-[0-9]{4,6}$")
        quantity: int = Field(ge=1, le=100)
        unit_price: float = Field(gt=0)

    class Attendee(BaseModel):
        name: str
        email: str = Field(json_schema_extra={"format": "email"})
        optional: bool = False

    class GetWeather(BaseModel):
        location: str = Field(description="City and country, e.g. Paris, France")
        unit: Unit = Unit.celsius
        days: int = Field(default=1, ge=1, le=14)

    class SearchWeb(BaseModel):
        query: str = Field(min_length=1, max_length=400)
        num_results: int = Field(default=5, ge=1, le=20)
        site: Optional[str] = None
        recency: Optional[Literal["day", "week", "month", "year"]] = None

    class SendEmail(BaseModel):
        to: list[str] = Field(min_length=1, max_length=10, json_schema_extra={"items": {"type": "string", "format": "email"}})
        cc: list[str] = Field(default_factory=list)
        subject: str = Field(max_length=200)
        body: str
        importance: Literal["low", "normal", "high"] = "normal"

    class CreateEvent(BaseModel):
        title: str = Field(max_length=120)
        start: datetime
        end: datetime
        attendees: list[Attendee] = Field(default_factory=list, max_length=50)
        location: Optional[str] = None
        recurrence: Optional[Literal["daily", "weekly", "monthly"]] = None

    class BookFlight(BaseModel):
        origin: str = Field(pattern=r"^[A-Z]{3}$", description="IATA airport code")
        destination: str = Field(pattern=r"^[A-Z]{3}$")
        departure_date: date
        return_date: Optional[date] = None
        passengers: int = Field(default=1, ge=1, le=9)
        cabin: Literal["economy", "premium_economy", "business", "first"] = "economy"

    class PlaceOrder(BaseModel):
        customer_id: uuid.UUID
        items: list[LineItem] = Field(min_length=1)
        shipping_address: Address
        express: bool = False
        coupon_code: Optional[str] = Field(default=None, pattern=r"^[A-Z0-9]{6,10}$")

    class CreateTicket(BaseModel):
        title: str = Field(min_length=5, max_length=100)
        description: str
        priority: Priority = Priority.medium
        labels: list[str] = Field(default_factory=list, max_length=5)
        assignee: Optional[str] = None
        due: Optional[date] = None

    class RunSql(BaseModel):
        database: Literal["analytics", "billing", "users"]
        query: str = Field(description="A read-only SELECT statement")
        limit: int = Field(default=100, ge=1, le=10000)
        timeout_seconds: float = Field(default=30.0, gt=0, le=300)

    class ReadFile(BaseModel):
        path: str = Field(pattern=r"^(/[A-Za-z0-9._-]+)+$")
        encoding: Literal["utf-8", "latin-1", "ascii"] = "utf-8"
        start_line: Optional[int] = Field(default=None, ge=1)
        end_line: Optional[int] = Field(default=None, ge=1)

    class WriteFile(BaseModel):
        path: str
        content: str
        mode: Literal["overwrite", "append"] = "overwrite"
        create_dirs: bool = True

    class HttpRequest(BaseModel):
        method: Literal["GET", "POST", "PUT", "PATCH", "DELETE"]
        url: str = Field(json_schema_extra={"format": "uri"})
        headers: dict[str, str] = Field(default_factory=dict)
        body: Optional[str] = None
        timeout_ms: int = Field(default=10000, ge=100, le=120000)

    class Reminder(BaseModel):
        text: str = Field(max_length=280)
        at: datetime
        repeat: Optional[Literal["none", "daily", "weekdays", "weekly"]] = "none"

    class ConvertCurrency(BaseModel):
        amount: float = Field(ge=0)
        source: str = Field(pattern=r"^[A-Z]{3}$")
        target: str = Field(pattern=r"^[A-Z]{3}$")
        on_date: Optional[date] = None

    class Translate(BaseModel):
        text: str
        source_language: Optional[str] = Field(default=None, pattern=r"^[a-z]{2}(-[A-Z]{2})?$")
        target_language: str = Field(pattern=r"^[a-z]{2}(-[A-Z]{2})?$")
        formality: Literal["default", "more", "less"] = "default"

    class GeoPoint(BaseModel):
        latitude: float = Field(ge=-90, le=90)
        longitude: float = Field(ge=-180, le=180)

    class FindPlaces(BaseModel):
        query: str
        near: GeoPoint
        radius_m: int = Field(default=1000, ge=10, le=50000)
        open_now: bool = False
        min_rating: Optional[float] = Field(default=None, ge=0, le=5)
        categories: list[Literal["restaurant", "cafe", "bar", "museum", "park", "hotel", "shop"]] = Field(
            default_factory=list)

    class Contact(BaseModel):
        first_name: str = Field(max_length=50)
        last_name: str = Field(max_length=50)
        email: Optional[str] = Field(default=None, json_schema_extra={"format": "email"})
        phone: Optional[str] = Field(default=None, pattern=r"^\+?[0-9 ()-]{7,20}$")
        company: Optional[str] = None
        address: Optional[Address] = None
        tags: list[str] = Field(default_factory=list)

    class CreateContact(BaseModel):
        contact: Contact
        notify_owner: bool = False

    class Step(BaseModel):
        name: str
        command: str
        timeout_minutes: int = Field(default=10, ge=1, le=360)
        env: dict[str, str] = Field(default_factory=dict)

    class RunPipeline(BaseModel):
        repository: str = Field(pattern=r"^[a-z0-9-]+/[a-z0-9._-]+$")
        branch: str = "main"
        steps: list[Step] = Field(min_length=1, max_length=20)
        notify: Optional[list[str]] = None

    class Dimension(BaseModel):
        name: str
        granularity: Optional[Literal["hour", "day", "week", "month"]] = None

    class QueryMetrics(BaseModel):
        metric: str
        start: datetime
        end: datetime
        dimensions: list[Dimension] = Field(default_factory=list, max_length=4)
        filters: dict[str, list[str]] = Field(default_factory=dict)
        aggregation: Literal["sum", "avg", "min", "max", "count", "p95"] = "sum"

    class RefundPayment(BaseModel):
        payment_id: str = Field(pattern=r"^pay_[A-Za-z0-9]{14}$")
        amount_cents: Optional[int] = Field(default=None, ge=1)
        reason: Literal["duplicate", "fraudulent", "requested_by_customer"]
        note: Optional[str] = Field(default=None, max_length=500)

    class ScheduleMeeting(BaseModel):
        participants: list[str] = Field(min_length=2, json_schema_extra={"items": {"type": "string", "format": "email"}})
        duration_minutes: Literal[15, 30, 45, 60, 90]
        earliest: datetime
        latest: datetime
        timezone: str = "UTC"

    class SetThermostat(BaseModel):
        room: Literal["living_room", "bedroom", "kitchen", "office"]
        temperature: float = Field(ge=10, le=30)
        mode: Literal["heat", "cool", "auto", "off"] = "auto"

    class PlayMusic(BaseModel):
        query: str
        kind: Literal["track", "album", "artist", "playlist"] = "track"
        shuffle: bool = False
        volume: Optional[int] = Field(default=None, ge=0, le=100)

    class Review(BaseModel):
        rating: int = Field(ge=1, le=5)
        title: str = Field(max_length=80)
        pros: list[str] = Field(default_factory=list, max_length=5)
        cons: list[str] = Field(default_factory=list, max_length=5)
        would_recommend: bool

    class ExtractInvoice(BaseModel):
        invoice_number: str
        issue_date: date
        due_date: Optional[date] = None
        vendor: Contact
        line_items: list[LineItem]
        currency: str = Field(pattern=r"^[A-Z]{3}$")
        total: float = Field(ge=0)

    class Classify(BaseModel):
        label: Literal["positive", "negative", "neutral", "mixed"]
        confidence: float = Field(ge=0, le=1)
        reasons: list[str] = Field(max_length=3)

    class Person(BaseModel):
        name: str
        age: Optional[int] = Field(default=None, ge=0, le=130)
        occupation: Optional[str] = None
        email: Optional[str] = Field(default=None, json_schema_extra={"format": "email"})

    class ExtractPeople(BaseModel):
        people: list[Person]
        source_language: Optional[str] = None

    class TreeNode(BaseModel):
        name: str
        children: list["TreeNode"] = Field(default_factory=list)

    class CreateFolderTree(BaseModel):
        root: TreeNode
        dry_run: bool = True

    class DeployService(BaseModel):
        service: str = Field(pattern=r"^[a-z][a-z0-9-]{2,40}$")
        image: str
        replicas: int = Field(default=2, ge=1, le=50)
        cpu: Literal["250m", "500m", "1", "2", "4"] = "500m"
        memory_mb: int = Field(default=512, ge=128, le=65536)
        env: dict[str, str] = Field(default_factory=dict)
        region: Literal["us-east-1", "us-west-2", "eu-west-1", "ap-southeast-1"]
        canary: Optional[float] = Field(default=None, gt=0, lt=1)

    class LogSearch(BaseModel):
        service: str
        level: list[Literal["debug", "info", "warning", "error", "critical"]] = Field(default_factory=list)
        contains: Optional[str] = None
        since: datetime
        until: Optional[datetime] = None
        max_lines: int = Field(default=200, ge=1, le=5000)

    class AddTodo(BaseModel):
        title: str = Field(min_length=1, max_length=140)
        due: Optional[date] = None
        priority: Priority = Priority.low
        subtasks: list[str] = Field(default_factory=list, max_length=10)

    models = [GetWeather, SearchWeb, SendEmail, CreateEvent, BookFlight, PlaceOrder, CreateTicket, RunSql, ReadFile,
              WriteFile, HttpRequest, Reminder, ConvertCurrency, Translate, FindPlaces, CreateContact, RunPipeline,
              QueryMetrics, RefundPayment, ScheduleMeeting, SetThermostat, PlayMusic, Review, ExtractInvoice,
              Classify, ExtractPeople, CreateFolderTree, DeployService, LogSearch, AddTodo]
    for model in models:
        yield f"pydantic/{model.__name__}", model.model_json_schema()
        # OpenAI's strict function schemas: every property required, no others.
        strict = model.model_json_schema()
        for node in [strict] + list(strict.get("$defs", {}).values()):
            if "properties" in node:
                node["required"] = list(node["properties"])
                node["additionalProperties"] = False
                for p in node["properties"].values():
                    p.pop("default", None)
        yield f"pydantic-strict/{model.__name__}", strict


SOURCES = [
    ("function-calling", schemas_bfcl),
    ("function-calling", schemas_pydantic),
    ("kubernetes", schemas_kubernetes),
    ("cloudformation", schemas_cloudformation),
    ("google-api", schemas_google),
    ("schemastore", schemas_schemastore),
    ("manifests", schemas_manifests),
    ("metaschema", schemas_metaschemas),
]


# --- instances ----------------------------------------------------------------
# A generated value is a node: ("obj", [(key, node)], key label), ("arr",
# [node]) or ("val", python value, label); the label names the schema feature
# that made it, and tools/bench_grammar.py groups mask times by it. Keys are
# "key" in objects that take only the keys they list, "key:open" in objects
# that take others too (additionalProperties or patternProperties).

def to_python(node):
    if node[0] == "obj":
        return {k: to_python(v) for k, v in node[1]}
    if node[0] == "arr":
        return [to_python(v) for v in node[1]]
    return node[1]


def serialize(node, indent):
    """json.dumps(ensure_ascii=False) of the node (compact, or indented by
    `indent`), with the byte spans of its keys and scalar values."""
    parts, spans = [], []
    pos = [0]

    def emit(text):
        parts.append(text)
        pos[0] += len(text.encode("utf-8"))

    def value(text, label):
        start = pos[0]
        emit(text)
        spans.append([start, pos[0], label])

    def walk(n, level):
        nl = "\n" + " " * (indent * (level + 1)) if indent else ""
        close = "\n" + " " * (indent * level) if indent else ""
        if n[0] == "obj":
            if not n[1]:
                return emit("{}")
            emit("{")
            for i, (k, v) in enumerate(n[1]):
                emit(("," if i else "") + nl)
                value(json.dumps(k, ensure_ascii=False), n[2])
                emit(": " if indent else ":")
                walk(v, level + 1)
            emit(close + "}")
        elif n[0] == "arr":
            if not n[1]:
                return emit("[]")
            emit("[")
            for i, v in enumerate(n[1]):
                emit(("," if i else "") + nl)
                walk(v, level + 1)
            emit(close + "]")
        else:
            value(json.dumps(n[1], ensure_ascii=False), n[2])

    walk(node, 0)
    return "".join(parts), spans


def literal_node(value, label):
    if isinstance(value, dict):
        return ("obj", [(k, literal_node(v, label)) for k, v in value.items()], "key:" + label)
    if isinstance(value, list):
        return ("arr", [literal_node(v, label) for v in value])
    return ("val", value, label)


class Generator:
    def __init__(self, root, rng):
        self.root = root
        self.rng = rng
        self.size = 0
        self.anchors = {}
        self._find_anchors(root)

    def _find_anchors(self, node):
        if isinstance(node, dict):
            for key in ("$anchor", "$dynamicAnchor"):
                if isinstance(node.get(key), str):
                    self.anchors.setdefault(node[key], node)
            if isinstance(node.get("$id"), str) and node["$id"].startswith("#"):
                self.anchors.setdefault(node["$id"][1:], node)
            for k, v in node.items():
                if k in SCHEMA_MAPS and isinstance(v, dict):
                    for sub in v.values():
                        self._find_anchors(sub)
                elif k not in DATA_KEYWORDS:
                    self._find_anchors(v)
        elif isinstance(node, list):
            for v in node:
                self._find_anchors(v)

    def resolve(self, ref):
        name, _, pointer = ref.partition("#")
        if name and not (isinstance(self.root.get("$id"), str) and self.root["$id"].rstrip("#") == name):
            raise GenFail(f"remote $ref {ref}")
        if pointer and not pointer.startswith("/"):
            if pointer in self.anchors:
                return self.anchors[pointer]
            raise GenFail(f"unknown anchor {ref}")
        try:
            return pointer_get(self.root, pointer)
        except (KeyError, IndexError, ValueError, TypeError):
            raise GenFail(f"dangling $ref {ref}")

    # Merging: the keywords of an in-place subschema added to the schema around it.
    def merge(self, a, b, depth):
        if b is True:
            return a
        if b is False or a is False:
            raise GenFail("false schema")
        if a is True:
            a = {}
        b = self.flatten(b, depth + 1)
        out = dict(a)
        for k, v in b.items():
            if k not in out:
                out[k] = v
            elif k == "properties":
                props = dict(out[k])
                for name, s in v.items():
                    props[name] = {"allOf": [props[name], s]} if name in props else s
                out[k] = props
            elif k == "required":
                out[k] = list(dict.fromkeys(list(out[k]) + list(v)))
            elif k == "enum":
                keep = [x for x in out[k] if x in v]
                if not keep:
                    raise GenFail("disjoint enums")
                out[k] = keep
            elif k == "type":
                ta = out[k] if isinstance(out[k], list) else [out[k]]
                tb = v if isinstance(v, list) else [v]
                both = [t for t in ta if t in tb or (t == "integer" and "number" in tb)]
                both += [t for t in tb if t == "integer" and "number" in ta and t not in both]
                if not both:
                    raise GenFail("disjoint types")
                out[k] = both
            elif k in ("minimum", "minLength", "minItems", "minProperties", "exclusiveMinimum"):
                if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(out[k], (int, float)):
                    out[k] = max(out[k], v)
            elif k in ("maximum", "maxLength", "maxItems", "maxProperties", "exclusiveMaximum"):
                if isinstance(v, (int, float)) and not isinstance(v, bool) and isinstance(out[k], (int, float)):
                    out[k] = min(out[k], v)
            elif k in ("anyOf", "oneOf"):
                out.setdefault("allOf", [])
                out["allOf"] = list(out["allOf"]) + [{k: v}]
            elif k == "items" or k == "additionalProperties":
                out[k] = {"allOf": [out[k], v]}
        return out

    def flatten(self, schema, depth):
        """The schema with its $ref and allOf merged in (not anyOf/oneOf)."""
        if depth > 60:
            raise GenFail("references nest too deeply")
        if not isinstance(schema, dict):
            return schema
        if "$ref" in schema and isinstance(schema["$ref"], str):
            rest = {k: v for k, v in schema.items() if k != "$ref"}
            target = self.resolve(schema["$ref"])
            schema = self.merge(self.flatten(target, depth + 1), rest, depth) if isinstance(target, dict) else target
            if not isinstance(schema, dict):
                return schema
        if "$dynamicRef" in schema or "$recursiveRef" in schema:
            key = "$dynamicRef" if "$dynamicRef" in schema else "$recursiveRef"
            rest = {k: v for k, v in schema.items() if k != key}
            target = self.resolve(schema[key]) if schema[key] != "#" else self.root
            schema = self.merge(self.flatten(target, depth + 1), rest, depth)
        if "allOf" in schema:
            rest = {k: v for k, v in schema.items() if k != "allOf"}
            for sub in schema["allOf"]:
                rest = self.merge(rest, sub, depth)
            schema = rest
        return schema

    def gen(self, schema, depth):
        if depth > 40:
            raise GenFail("nests too deeply")
        if schema is True or schema == {}:
            return ("val", self.words(1, 3), "string")
        if schema is False:
            raise GenFail("false schema")
        schema = self.flatten(schema, 0)
        if schema is True or schema is False:
            return self.gen(schema, depth + 1)
        if "const" in schema:
            return literal_node(schema["const"], "const")
        if "enum" in schema:
            if not schema["enum"]:
                raise GenFail("empty enum")
            return literal_node(self.rng.choice(schema["enum"]), "enum")
        for key in ("oneOf", "anyOf"):
            if key in schema:
                branches = list(schema[key])
                self.rng.shuffle(branches)
                rest = {k: v for k, v in schema.items() if k != key}
                error = None
                for branch in branches:
                    try:
                        return self.gen(self.merge(rest, branch, depth), depth + 1)
                    except GenFail as e:
                        error = e
                raise error or GenFail(f"empty {key}")
        types = schema.get("type")
        if isinstance(types, str):
            types = [types]
        if not types:
            if "properties" in schema or "required" in schema or "additionalProperties" in schema \
                    or "patternProperties" in schema:
                types = ["object"]
            elif "items" in schema or "prefixItems" in schema:
                types = ["array"]
            elif any(k in schema for k in ("pattern", "format", "minLength", "maxLength")):
                types = ["string"]
            elif any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")):
                types = ["number"]
            else:
                types = ["string"]
        choices = [t for t in types if t != "null"] or ["null"]
        if "null" in types and self.rng.random() < 0.1:
            choices = ["null"]
        t = self.rng.choice(choices)
        if t == "object":
            return self.gen_object(schema, depth)
        if t == "array":
            return self.gen_array(schema, depth)
        if t == "string":
            return self.gen_string(schema)
        if t in ("integer", "number"):
            return self.gen_number(schema, t)
        if t == "boolean":
            self.size += 5
            return ("val", self.rng.random() < 0.5, "literal")
        if t == "null":
            self.size += 4
            return ("val", None, "literal")
        raise GenFail(f"unknown type {t}")

    def over_budget(self):
        return self.size > INSTANCE_BUDGET

    def gen_object(self, schema, depth):
        props = schema.get("properties") or {}
        required = list(schema.get("required") or [])
        deps = schema.get("dependentRequired") or {}
        for name, dep in (schema.get("dependencies") or {}).items():
            if isinstance(dep, list):
                deps = {**deps, name: dep}
        p_optional = max(0.15, 0.6 - 0.15 * depth)
        chosen = []
        for name, sub in props.items():
            if sub is False:
                continue
            if name in required or (not self.over_budget() and self.rng.random() < p_optional):
                chosen.append(name)
        for name in list(chosen):
            for extra in deps.get(name, []):
                if extra not in chosen:
                    chosen.append(extra)
        for name in required:
            if name not in chosen:
                chosen.append(name)
        minp = schema.get("minProperties", 0) or 0
        if len(chosen) < minp:
            for name in props:
                if len(chosen) >= minp:
                    break
                if name not in chosen and props[name] is not False:
                    chosen.append(name)
        order = {name: i for i, name in enumerate(props)}
        chosen.sort(key=lambda n: order.get(n, len(order)))
        items = []
        for name in chosen:
            self.size += len(name) + 4
            sub = props.get(name)
            if sub is None:
                sub = self.schema_for_key(schema, name)
            items.append((name, self.gen(sub, depth + 1)))
        additional = schema.get("additionalProperties", True)
        patterns = schema.get("patternProperties") or {}
        want_extra = len(items) < minp or (not props and (patterns or isinstance(additional, dict))
                                           and not self.over_budget())
        if want_extra and additional is not False or (want_extra and patterns):
            n = max(minp - len(items), self.rng.randint(1, 2))
            maxp = schema.get("maxProperties")
            if maxp is not None:
                n = min(n, maxp - len(items))
            taken = {k for k, _ in items}
            for _ in range(max(n, 0)):
                if patterns and (additional is False or self.rng.random() < 0.7):
                    pattern = self.rng.choice(sorted(patterns))
                    key = self.regex_string(pattern, 1, 40)
                    sub = patterns[pattern]
                else:
                    key = self.property_name(schema)
                    sub = self.schema_for_key(schema, key)
                if key in taken:
                    continue
                taken.add(key)
                self.size += len(key) + 4
                items.append((key, self.gen(sub, depth + 1)))
        closed = not patterns and (additional is False or schema.get("unevaluatedProperties") is False)
        return ("obj", items, "key" if closed else "key:open")

    def schema_for_key(self, schema, key):
        """Every schema that a key outside `properties` must match."""
        subs = [s for p, s in (schema.get("patternProperties") or {}).items() if python_search(p, key)]
        if not subs:
            additional = schema.get("additionalProperties", True)
            return {} if additional is True else additional
        return subs[0] if len(subs) == 1 else {"allOf": subs}

    def property_name(self, schema):
        names = schema.get("propertyNames")
        if isinstance(names, dict):
            names = self.flatten(names, 0)
            if "enum" in names:
                return str(self.rng.choice(names["enum"]))
            if "pattern" in names:
                return self.regex_string(names["pattern"], names.get("minLength", 1), names.get("maxLength", 40))
        return self.rng.choice(WORDS) + ("_" + self.rng.choice(WORDS) if self.rng.random() < 0.4 else "")

    def gen_array(self, schema, depth):
        prefix = schema.get("prefixItems")
        items = schema.get("items", True)
        if isinstance(items, list):  # draft 4-7 tuples
            prefix, items = items, schema.get("additionalItems", True)
        prefix = prefix or []
        lo = schema.get("minItems", 0) or 0
        hi = schema.get("maxItems", 10**9)
        out = [self.gen(s, depth + 1) for s in prefix[:max(lo, min(len(prefix), hi))]]
        if items is not False:
            want = self.rng.randint(1, 3) if not self.over_budget() else 0
            n = min(max(lo, len(out) + want), hi)
            if depth > 6:
                n = max(lo, len(out))
            unique = schema.get("uniqueItems") is True
            tries = 0
            while len(out) < n and tries < 4 * n + 8:
                tries += 1
                node = self.gen(items, depth + 1)
                if unique and any(to_python(node) == to_python(x) for x in out):
                    continue
                out.append(node)
            if len(out) < lo:
                raise GenFail("cannot make enough distinct items")
        if "contains" in schema and len(out) < hi:
            out.append(self.gen(schema["contains"], depth + 1))
        return ("arr", out)

    def words(self, lo_words, hi_words, sep=" "):
        return sep.join(self.rng.choice(WORDS) for _ in range(self.rng.randint(lo_words, hi_words)))

    def gen_string(self, schema):
        lo = schema.get("minLength", 0) or 0
        hi = schema.get("maxLength")
        hi = 10**6 if hi is None else hi
        if lo > hi:
            raise GenFail("minLength over maxLength")
        fmt = schema.get("format")
        pattern = schema.get("pattern")
        if isinstance(pattern, str):
            for _ in range(12):
                text = self.regex_string(pattern, lo, min(hi, 200))
                if lo <= len(text) <= hi and (not fmt or fmt not in CHECKED_FORMATS or format_ok(fmt, text)):
                    break
            else:
                raise GenFail(f"pattern {pattern!r} within lengths {lo}-{hi}")
            label = "string:pattern"
        elif isinstance(fmt, str) and fmt_value(fmt, self) is not None:
            text = fmt_value(fmt, self)
            label = f"string:format:{fmt}"
        else:
            text = self.words(1, 4)
            while len(text) < lo:
                text += " " + self.rng.choice(WORDS)
            if len(text) > hi:
                text = text[:hi].rstrip() if hi > 0 else ""
                while len(text) < lo:
                    text += "x"
            label = "string:maxLength" if "maxLength" in schema else "string"
        if not lo <= len(text) <= hi:
            raise GenFail("string lengths")
        self.size += len(text) + 2
        return ("val", text, label)

    def gen_number(self, schema, t):
        lo, hi = schema.get("minimum"), schema.get("maximum")
        xlo, xhi = schema.get("exclusiveMinimum"), schema.get("exclusiveMaximum")
        if xlo is True:
            xlo, lo = lo, None
        if xhi is True:
            xhi, hi = hi, None
        if xlo is False:
            xlo = None
        if xhi is False:
            xhi = None
        low = max([v for v in (lo, None if xlo is None else xlo + (1 if t == "integer" else 0.01)) if v is not None],
                  default=None)
        high = min([v for v in (hi, None if xhi is None else xhi - (1 if t == "integer" else 0.01)) if v is not None],
                   default=None)
        if low is None and high is None:
            low, high = 0, self.rng.choice([10, 100, 5000])
        elif low is None:
            low = high - self.rng.choice([10, 100, 1000])
        elif high is None:
            high = low + self.rng.choice([10, 100, 1000])
        if low > high:
            raise GenFail("empty numeric range")
        if t == "integer":
            import math
            a, b = math.ceil(low), math.floor(high)
            if a > b:
                raise GenFail("no integer in range")
            value = self.rng.randint(a, min(b, a + 100000))
        else:
            value = round(self.rng.uniform(low, high), self.rng.choice([0, 1, 2]))
            value = min(max(value, low), high)
            if value == int(value) and self.rng.random() < 0.5:
                value = int(value)
        m = schema.get("multipleOf")
        if isinstance(m, (int, float)) and m > 0:
            value = (value // m) * m
            if isinstance(m, int) and isinstance(value, float) and value.is_integer():
                value = int(value)
        self.size += len(str(value))
        label = t + (":bounded" if any(k in schema for k in ("minimum", "maximum", "exclusiveMinimum",
                                                                  "exclusiveMaximum")) else "")
        return ("val", value, label)

    # Regular expressions: a match made from the parse tree, with words where
    # a class takes letters.
    def regex_string(self, pattern, lo, hi):
        pattern = re.sub(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P<\1>", pattern)
        try:
            tree = sre_parse.parse(pattern)
        except (re.error, OverflowError, RecursionError) as e:
            raise GenFail(f"pattern {pattern!r}: {e}")
        for _ in range(8):
            self.groups = {}
            self.word_chars = ""
            text = self.emit(tree)
            if lo <= len(text) <= hi and python_search(pattern, text):
                return text
        raise GenFail(f"pattern {pattern!r}")

    def next_word_char(self):
        if not self.word_chars:
            self.word_chars = self.rng.choice(WORDS)
        c, self.word_chars = self.word_chars[0], self.word_chars[1:]
        return c

    def emit(self, items):
        out = []
        for op, av in items:
            out.append(self.emit_one(op, av))
        return "".join(out)

    def emit_one(self, op, av):
        if op is sre_c.LITERAL:
            return chr(av)
        if op is sre_c.NOT_LITERAL:
            c = self.next_word_char()
            return c if ord(c) != av else "x" if av != ord("x") else "y"
        if op is sre_c.ANY:
            return self.next_word_char()
        if op is sre_c.IN:
            return self.char_in(av)
        if op is sre_c.BRANCH:
            return self.emit(self.rng.choice(av[1]))
        if op is sre_c.SUBPATTERN:
            group, _, _, sub = av
            text = self.emit(sub)
            if group:
                self.groups[group] = text
            return text
        if op in (sre_c.MAX_REPEAT, sre_c.MIN_REPEAT, getattr(sre_c, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            simple = len(sub) == 1 and sub[0][0] in (sre_c.IN, sre_c.ANY, sre_c.NOT_LITERAL)
            if hi == sre_c.MAXREPEAT:
                hi = lo + (self.rng.randint(2, 9) if simple else self.rng.randint(0, 2))
            else:
                hi = min(hi, lo + (9 if simple else 2))
            n = self.rng.randint(lo, hi)
            if simple and lo == 0 and n == 0 and self.rng.random() < 0.7:
                n = min(hi, self.rng.randint(1, 6))
            if simple:
                self.word_chars = ""
            return "".join(self.emit(sub) for _ in range(n))
        if op is sre_c.AT:
            return ""
        if op is sre_c.GROUPREF:
            return self.groups.get(av, "")
        if op is sre_c.CATEGORY:
            return self.char_in([(op, av)])
        raise GenFail(f"regex construct {op}")

    def char_in(self, items):
        negate = items and items[0][0] is sre_c.NEGATE

        def member(c):
            for op, av in items:
                if op is sre_c.LITERAL and ord(c) == av:
                    return True
                if op is sre_c.RANGE and av[0] <= ord(c) <= av[1]:
                    return True
                if op is sre_c.CATEGORY and category_has(av, c):
                    return True
            return False

        def ok(c):
            return member(c) != bool(negate)

        c = self.next_word_char()
        if ok(c):
            return c
        for pool in ("abcdefghijklmnopqrstuvwxyz", "0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "-_.:/ ",
                     "".join(map(chr, range(33, 127)))):
            found = [x for x in pool if ok(x)]
            if found:
                return self.rng.choice(found)
        if not negate:
            for op, av in items:
                if op is sre_c.LITERAL:
                    return chr(av)
                if op is sre_c.RANGE:
                    return chr(self.rng.randint(av[0], min(av[1], av[0] + 50)))
        raise GenFail("empty character class")


def category_has(category, c):
    table = {
        sre_c.CATEGORY_DIGIT: c.isdigit(), sre_c.CATEGORY_NOT_DIGIT: not c.isdigit(),
        sre_c.CATEGORY_WORD: c.isalnum() or c == "_", sre_c.CATEGORY_NOT_WORD: not (c.isalnum() or c == "_"),
        sre_c.CATEGORY_SPACE: c.isspace(), sre_c.CATEGORY_NOT_SPACE: not c.isspace(),
    }
    return table.get(category, False)


_regex_cache = {}


def python_search(pattern, text):
    if pattern not in _regex_cache:
        try:
            _regex_cache[pattern] = re.compile(re.sub(r"\(\?<([A-Za-z_][A-Za-z0-9_]*)>", r"(?P<\1>", pattern))
        except re.error:
            _regex_cache[pattern] = None
    r = _regex_cache[pattern]
    return bool(r and r.search(text))


def fmt_value(fmt, g):
    rng = g.rng
    date = f"{rng.randint(2018, 2026)}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
    time = f"{rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:{rng.randint(0, 59):02d}" + rng.choice(["Z", "+02:00", ".250Z"])
    w = lambda: rng.choice(WORDS)
    values = {
        "date": date, "time": time, "date-time": f"{date}T{time}", "google-datetime": f"{date}T{time}",
        "duration": rng.choice(["P3D", "PT30M", "P1DT12H", "PT45S", "P2W"]),
        "google-duration": f"{rng.randint(1, 600)}s",
        "uuid": "%08x-%04x-4%03x-a%03x-%012x" % (rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(12),
                                               rng.getrandbits(12), rng.getrandbits(48)),
        "email": f"{w()}.{w()}@example.com",
        "hostname": f"{w()}-{w()}.example.com", "idn-hostname": f"{w()}.example.org",
        "ipv4": f"10.{rng.randint(0, 255)}.{rng.randint(0, 255)}.{rng.randint(1, 254)}",
        "ipv6": f"2001:db8::{rng.getrandbits(16):x}:{rng.getrandbits(16):x}",
        "uri": f"https://{w()}.example.com/{w()}/{w()}", "url": f"https://{w()}.example.com/{w()}",
        "iri": f"https://{w()}.example.com/{w()}", "uri-reference": f"/{w()}/{w()}",
        "iri-reference": f"/{w()}/{w()}", "uri-template": f"https://{w()}.example.com/{{{w()}}}",
        "json-pointer": f"/{w()}/{w()}", "relative-json-pointer": "0/" + w(), "regex": f"^{w()}-[0-9]+$",
        "int32": str(rng.randint(0, 5000)), "uint32": str(rng.randint(0, 5000)),
        "int64": str(rng.randint(0, 10**9)), "uint64": str(rng.randint(0, 10**9)),
        "byte": "aGVsbG8gd29ybGQ=", "google-fieldmask": f"{w()},{w()}.{w()}",
        "password": f"{w()}-{rng.randint(100, 999)}-{w()}",
    }
    return values.get(fmt)


_RFC3339 = re.compile(r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
_DURATION = re.compile(r"^P(?:\d+W|(?:\d+Y(?:\d+M(?:\d+D)?)?|\d+M(?:\d+D)?|\d+D)(?:T(?:\d+H(?:\d+M(?:\d+S)?)?"
                       r"|\d+M(?:\d+S)?|\d+S))?|T(?:\d+H(?:\d+M(?:\d+S)?)?|\d+M(?:\d+S)?|\d+S))$")
_HOSTNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$")
_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:(?:[A-Za-z0-9._~!$&'()*+,;=:@/?#\[\]-]|%[0-9A-Fa-f]{2})*$")


def format_checker():
    """jsonschema's checkers for CHECKED_FORMATS, and ours (RFC 3339,
    ISO 8601 durations, RFC 1123 host names, RFC 3986 URIs) where its own
    need packages that are not installed."""
    import jsonschema
    checker = jsonschema.FormatChecker([f for f in CHECKED_FORMATS if f in jsonschema.FormatChecker.checkers])

    def own(name, test):
        if name not in checker.checkers:
            checker.checks(name)(lambda v: not isinstance(v, str) or bool(test(v)))

    def date_time(v):
        m = _RFC3339.match(v)
        if not m:
            return False
        try:
            datetime.date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            return False
        return int(m[4]) < 24 and int(m[5]) < 60 and int(m[6]) < 60

    own("date-time", date_time)
    own("duration", _DURATION.match)
    own("hostname", lambda v: len(v) <= 253 and _HOSTNAME.match(v))
    own("uri", _URI.match)
    return checker


def format_ok(fmt, text):
    return format_checker().conforms(text, fmt)


def make_instances(schema, seed):
    import jsonschema
    try:
        cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
        validator = cls(schema, format_checker=format_checker())
    except Exception as e:  # noqa: BLE001: any schema the package cannot load
        return [], f"jsonschema: {type(e).__name__}: {e}"[:300]
    found, seen, error = [], set(), None
    for attempt in range(4 * INSTANCES + 4):
        g = Generator(schema, random.Random(f"{seed}/{attempt}"))
        try:
            node = g.gen(schema, 0)
        except GenFail as e:
            error = f"generator: {e}"[:300]
            continue
        except RecursionError:
            error = "generator: recursion"
            continue
        value = to_python(node)
        key = json.dumps(value, sort_keys=True)
        if key in seen:
            continue
        try:
            errors = list(validator.iter_errors(value))
        except Exception as e:  # noqa: BLE001: unresolvable refs and the like
            return [], f"jsonschema: {type(e).__name__}: {e}"[:300]
        if errors:
            best = jsonschema.exceptions.best_match(errors)
            error = f"invalid instance: {best.message}"[:300]
            continue
        seen.add(key)
        found.append(node)
        if len(found) == INSTANCES:
            break
    return found, (None if found else error or "no instance")


# --- the corpus -----------------------------------------------------------------

def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(CACHE / "corpus.jsonl"))
    ap.add_argument("--seed", default="skiff-schema-corpus-1")
    ap.add_argument("--only", help="comma-separated categories")
    args = ap.parse_args()
    pkgs = fetch_packages()
    seen, rows, skipped = set(), [], []
    for category, source in SOURCES:
        if args.only and category not in args.only.split(","):
            continue
        rng = random.Random(f"{args.seed}/{source.__name__}")
        for name, schema in source(pkgs, rng):
            text = json.dumps(schema, separators=(",", ":"), ensure_ascii=False)
            digest = hashlib.sha256(json.dumps(schema, sort_keys=True).encode()).hexdigest()
            if digest in seen:
                skipped.append((name, "duplicate"))
                continue
            seen.add(digest)
            if len(text.encode()) > MAX_SCHEMA_BYTES:
                skipped.append((name, f"{len(text.encode())} bytes"))
                continue
            rows.append({"id": name, "category": category, "source": source.__name__.replace("schemas_", ""),
                         "schema_bytes": len(text.encode()), "json_schema": schema})
    print(f"{len(rows)} schemas ({len(skipped)} left out); generating instances", file=sys.stderr)
    with open(args.out, "w", encoding="utf-8") as out:
        for i, row in enumerate(rows):
            nodes, error = make_instances(row["json_schema"], f"{args.seed}/{row['id']}")
            texts, spans = [], []
            for node in nodes:
                for indent in (0, 2):
                    text, sp = serialize(node, indent)
                    assert json.loads(text) == to_python(node)
                    texts.append(text)
                    spans.append(sp)
            row["texts"] = texts
            row["spans"] = spans
            if error:
                row["gen_error"] = error
            out.write(json.dumps(row, ensure_ascii=False) + "\n")
            if (i + 1) % 50 == 0:
                print(f"  {i + 1}/{len(rows)}", file=sys.stderr)
    manifest = {"date": datetime.date.today().isoformat(), "packages": PACKAGES, "schemas": len(rows),
                "left_out": skipped, "by_category": {}, "by_source": {}}
    with open(args.out, encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            for key, name in (("by_category", row["category"]), ("by_source", row["source"])):
                entry = manifest[key].setdefault(name, {"schemas": 0, "with_instances": 0})
                entry["schemas"] += 1
                entry["with_instances"] += bool(row["texts"])
    Path(args.out).with_name("manifest.json").write_text(json.dumps(manifest, indent=1))
    print(json.dumps({k: manifest[k] for k in ("schemas", "by_category")}, indent=1))
    print(f"left out: {len(skipped)} ({sum(1 for _, why in skipped if why == 'duplicate')} duplicates)")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
