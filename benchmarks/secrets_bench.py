"""Time of the secret scan (``memtui.core.memory.secretscan.find_secrets``) on hostile text:
the shapes that make a backtracking engine slow, at three sizes, with the growth exponent
(log(t2/t1) / log(n2/n1): 1 is linear, 2 quadratic).

    python benchmarks/secrets_bench.py [--sizes 10000,40000,200000]
"""

from __future__ import annotations

import argparse
import base64
import math
import random
import time

from memtui.core.memory.secretscan import find_secrets

SHAPES = {
    # a base64 blob in a text saying "coherent": the cohere rule runs on it
    "base64-and-cohere": lambda n: "We keep the design coherent.\n" + base64.b64encode(random.Random(1).randbytes(n * 3 // 4)).decode(),
    "identifiers-and-cohere": lambda n: ("coherent_" + "abcdefgh_" * 10 + " ") * (n // 100),
    "curl-u": lambda n: "curl -u a " * (n // 10),
    "private-key-headers": lambda n: "-----BEGIN RSA PRIVATE KEY-----\n" * (n // 32),
    "jwt-like": lambda n: ("eyJ" + "a" * 20 + ".") * (n // 24),
    "prose": lambda n: ("The deploy uses port 8080 and the token lives in the vault; see https://github.com/org/repo. " * (n // 96)),
}


def best(text: str, runs: int = 3) -> float:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        find_secrets(text)
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="10000,40000,200000")
    sizes = [int(s) for s in ap.parse_args().sizes.split(",")]
    find_secrets("warm up: ghp_" + "a" * 36)
    print(f"| shape | {' | '.join(f'{n:,} chars' for n in sizes)} | growth exponent |")
    print("|---|" + "---:|" * (len(sizes) + 1))
    for name, make in SHAPES.items():
        times = [best(make(n)) for n in sizes]
        exponent = math.log(max(times[-1], 1e-6) / max(times[0], 1e-6)) / math.log(sizes[-1] / sizes[0])
        print(f"| {name} | {' | '.join(f'{t * 1000:.0f} ms' for t in times)} | {exponent:.2f} |")


if __name__ == "__main__":
    main()
