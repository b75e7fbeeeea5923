"""GET /kv/prefix_blocks: the chained hashes of the blocks the prefix cache holds,
checked against the hash written out again here from its definition
(src/kv/prefix_hash.cpp), over prompts whose ids come from /tokenize."""
import httpx
import pytest

from conftest import STORIES, Server

KEY = "sekret"
AUTH = {"Authorization": f"Bearer {KEY}"}
BLOCK = 16
MASK = (1 << 64) - 1
SEED = 0x736B69666650484B  # kPrefixHashSeed
GOLDEN = 0x9E3779B97F4A7C15


def mix(x):
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & MASK
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & MASK
    return x ^ (x >> 31)


def block_hashes(ids):
    """The chain of hashes of the full blocks of `ids`, first block first."""
    out, parent = [], SEED
    for start in range(0, len(ids) - BLOCK + 1, BLOCK):
        h = mix((parent + GOLDEN) & MASK)
        for t in ids[start:start + BLOCK]:
            h = mix((h + GOLDEN + (t & 0xFFFFFFFF)) & MASK)
        parent = mix(h ^ BLOCK)
        out.append(parent)
    return out


@pytest.fixture(scope="module")
def small_pool():
    """stories260K with a KV pool of a few blocks (each request below leaves 2 cached)."""
    server = Server(STORIES, "--served-model-name", "stories", "-c", "64", "--kv-mem", "160K",
                    "--block-size", str(BLOCK), api_key=KEY)
    yield server
    assert server.stop() == 0, "".join(server.log)


def listing(server, query=""):
    r = httpx.get(server.url + "/kv/prefix_blocks" + query, headers=AUTH)
    assert r.status_code == 200, r.text
    return r.json()


def complete(server, prompt_ids):
    r = server.post("/v1/completions", {"prompt": prompt_ids, "max_tokens": 1, "temperature": 0})
    assert r.status_code == 200, r.text


def tokenize(server, text):
    r = server.post("/tokenize", {"prompt": text})
    assert r.status_code == 200, r.text
    return r.json()["tokens"]


def test_the_reference_hash_chains_as_the_engine_does():
    ids = list(range(100, 140))
    assert len(block_hashes(ids)) == 2 and block_hashes(ids[:32]) == block_hashes(ids)
    assert block_hashes([99] + ids[1:])[1] != block_hashes(ids)[1]  # the first token reaches block 2


def test_a_request_leaves_its_prompt_blocks_listed_first_block_first(small_pool):
    ids = tokenize(small_pool, "Once upon a time, there was a little girl named Lily. She loved to play "
                               "outside in the park with her dog and her friends every day.")
    assert len(ids) >= 2 * BLOCK
    ids = ids[:2 * BLOCK + 5]  # two full blocks and a partial one (never cached)
    complete(small_pool, ids)
    got = listing(small_pool)
    assert got["block_size"] == BLOCK and got["object"] == "prefix_cache"
    # Released last block first, so the first block is the most recent use.
    assert got["hashes"][:2] == block_hashes(ids)
    assert got["cached_blocks"] == len(got["hashes"])
    # Exact above 2^53 too: JSON's integers, read by Python as they were written.
    assert any(h >= 1 << 53 for h in got["hashes"])


def test_eviction_drops_the_oldest_and_the_order_is_newest_first(small_pool):
    total = listing(small_pool)["total_blocks"]
    assert 4 <= total <= 32, total  # a pool small enough to fill below
    prompts = [[(7 * i + j) % 400 + 20 for j in range(2 * BLOCK + 3)] for i in range(total)]
    for ids in prompts:
        complete(small_pool, ids)
    got = listing(small_pool, f"?limit={2 * total}")
    newest_first = [h for ids in reversed(prompts) for h in block_hashes(ids)]
    assert got["cached_blocks"] < len(newest_first)  # evictions happened
    assert got["hashes"] == newest_first[:got["cached_blocks"]]
    assert not set(block_hashes(prompts[0])) & set(got["hashes"])
    # A request over a cached prefix makes it the most recent again.
    complete(small_pool, prompts[-2])
    assert listing(small_pool)["hashes"][:2] == block_hashes(prompts[-2])


def test_limit_caps_the_list_and_bad_limits_are_refused(small_pool):
    full = listing(small_pool)
    assert len(full["hashes"]) >= 3
    assert listing(small_pool, "?limit=2")["hashes"] == full["hashes"][:2]
    assert listing(small_pool, "?foo=1&limit=0")["hashes"] == []
    assert listing(small_pool, "?limit=16384")["hashes"] == full["hashes"]
    for bad in ("abc", "-1", "16385", "", "2x"):
        r = httpx.get(small_pool.url + "/kv/prefix_blocks?limit=" + bad, headers=AUTH)
        assert r.status_code == 400, (bad, r.text)
        assert r.json()["error"]["param"] == "limit"


def test_the_key_is_asked(small_pool):
    r = httpx.get(small_pool.url + "/kv/prefix_blocks")
    assert r.status_code == 401
    r = httpx.get(small_pool.url + "/kv/prefix_blocks", headers={"Authorization": "Bearer wrong"})
    assert r.status_code == 401
