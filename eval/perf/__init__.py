"""Speed and robustness: build and answer times, scale, load, faults, formats, clusters, answers at
once, and comparisons with a peer (LangChain) and with generative answers."""
