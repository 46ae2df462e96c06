#!/usr/bin/env bash
# hostile_encode.sh -- tests/hostile.sh again with the engine workers encoding the records
# (SBF_ENCODE=1: the GPU path's encoder on the CPU engine), so failures in the middle of a run
# (a full disk, signals, bad records) are checked on that path too, without a GPU.
SBF_ENCODE=1 exec bash "${srcdir:-$(cd "$(dirname "$0")" && pwd)}/hostile.sh"
