#!/usr/bin/env bash
# Builds clustersim and its tests with AddressSanitizer and UndefinedBehaviorSanitizer (build-sanitize/) and runs the
# fast tests: the unit tests, the CLI and robustness tests and the malformed-input corpus (the long reference and
# MapReduce replays are left out: under the sanitizers they take many minutes). Any report fails the run.
# Usage: scripts/sanitize.sh [BUILD_DIR]   (make sanitize)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-sanitize}
cmake -S . -B "$build" $(command -v ninja >/dev/null && echo -G Ninja) \
  $(command -v ccache >/dev/null && echo -DCMAKE_CXX_COMPILER_LAUNCHER=ccache) \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCS_SANITIZE=ON -DCS_WERROR=ON -DCS_BUILD_CUDA_CALIBRATION=OFF >/dev/null
cmake --build "$build" -j "$(nproc)" --target clustersim clustersim_tests corpus_runner
# SimGrid's contexts switch stacks, which ASan's stack-use-after-return and leak checks misread.
export ASAN_OPTIONS=detect_leaks=0:detect_stack_use_after_return=0:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd "$build"
skip='Reference|Swim|Hit|Seeds/|EveryExampleScenario|Validation|CalibrationLive|Layering|Megatron|LlmFoundry|Nccl'
# Tests that kill actors on the flow-level runtime throw inside SimGrid contexts, whose raw stack switches ASan
# misreads (a false stack-buffer-overflow): they run on SimGrid's thread contexts, the rest on the fast default.
killing='FlowLevelRuntime'
# ActorRuntimes.AnExceptionInAnActorEndsTheRunAndComesBackFromRun throws inside an actor on the SimGrid runtime too:
# on the default contexts ASan reports the same false stack-buffer-overflow (in its sigaltstack interceptor), and on
# thread contexts it hangs under ASan (found 2026-12-07, not investigated further). Plain builds run it in CI.
thrown='AnExceptionInAnActorEndsTheRunAndComesBackFromRun'
ctest -j "$(nproc)" --output-on-failure --timeout 600 -E "$skip|$killing|$thrown|Fuzz"
CS_SIMGRID_CONTEXTS=thread ctest -j "$(nproc)" --output-on-failure --timeout 600 -R "$killing"
