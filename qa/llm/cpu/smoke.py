"""Smoke test of an xllamacpp build, the way the product calls it (run alone, in a subprocess).

    python smoke.py MODEL.gguf [FEATURE ...]

Loads the model, reads with a GBNF grammar and log-probabilities, streams a reply through a
callback that stops it early, and checks that get_system_info() names each FEATURE (AVX512,
AMX_INT8 ...). Prints one JSON line; exits 0 only when everything worked. A build whose kernels
fault (llama.cpp's AMX code under g++ 12) kills this process, never the caller.
"""

import json
import sys
import time

import xllamacpp

began = time.perf_counter()
params = xllamacpp.CommonParams()
params.model.path = sys.argv[1]
params.n_ctx = 1024
params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 2
params.verbosity = -1
server = xllamacpp.Server(params)
system = [{"role": "system", "content": "Answer yes or no."},
          {"role": "user", "content": "Is Paris in France?"}]
reply = server.handle_chat_completions({"messages": system, "max_tokens": 4, "temperature": 0,
                                        "grammar": 'root ::= "yes" | "no"', "logprobs": True,
                                        "top_logprobs": 2})
answer = reply["choices"][0]["message"]["content"]
top = reply["choices"][0]["logprobs"]["content"][0]["top_logprobs"]
pieces: list[str] = []


def heard(event: dict) -> bool:
    """Keep each streamed piece; True (stop writing) after the third."""
    for choice in event.get("choices") or []:
        if (choice.get("delta") or {}).get("content"):
            pieces.append(choice["delta"]["content"])
    return len(pieces) >= 3


count = [{"role": "user", "content": "Count from one to twenty in words."}]
server.handle_chat_completions({"messages": count, "max_tokens": 40, "temperature": 0, "stream": True}, heard)
info = xllamacpp.get_system_info()
missing = [f for f in sys.argv[2:] if f"{f} = 1" not in info]
ok = answer in ("yes", "no") and len(top) == 2 and len(pieces) == 3 and not missing
print(json.dumps({"ok": ok, "answer": answer, "top": [t["token"] for t in top], "streamed": pieces,
                  "missing": missing, "system_info": info, "seconds": round(time.perf_counter() - began, 1)}))
sys.exit(0 if ok else 1)
