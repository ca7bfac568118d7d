# Sourced by each example's run.sh after it sets GENERATE (the `autocoder generate` arguments)
# and RUN (the `autocoder run` arguments for new data).
#
#   ./run.sh            offline: the model's answers come from cassette.jsonl (no network, no key)
#   ./run.sh --record   live against the local model, recording a new cassette.jsonl
#   ./run.sh --live     live against $AUTOCODER_MODEL (and $AUTOCODER_API_BASE, the provider's key)
#   AGENT=1 ./run.sh    any of the above in agent mode (`--agent`), from cassette-agent.jsonl
#
# The sandbox, the environments and the tests are always real.
set -euo pipefail
AUTOCODER=${AUTOCODER:-autocoder}
OUT=${OUT:-run}
# The model the cassettes were recorded from (../../shared/tools/local-llm).
RECORDED_MODEL=openai/qwen2.5-coder-1.5b-instruct
RECORDED_BASE=${LOCAL_LLM_BASE:-http://127.0.0.1:8089/v1}
# Sampling parameters are part of each request's fingerprint: replay sends the recorded ones.
# Code comes as Markdown blocks: inside JSON the 1.5B model broke the string in most scripts.
# An example may set SEED before sourcing this file (the seed its cassette was recorded with).
RECORDED_PARAMS=(--temperature 0.2 --seed "${SEED:-7}" --max-tokens 1500 --frequency-penalty 0.3 --code-in-fences)
# AGENT=1 runs the same task in agent mode (the JSON tool protocol, which the local model needs),
# with its own cassette.
CASSETTE=cassette.jsonl
MODE=()
if [ -n "${AGENT:-}" ]; then
  CASSETTE=cassette-agent.jsonl
  MODE=(--agent --tool-protocol json --max-turns "${MAX_TURNS:-16}")
fi
case "${1:-}" in
  --record) model=(--model "$RECORDED_MODEL" --api-base "$RECORDED_BASE" "${RECORDED_PARAMS[@]}" --request-timeout 1800 ${MAX_ITERATIONS:+--max-iterations "$MAX_ITERATIONS"} --record "$CASSETTE"); rm -f "$CASSETTE" ;;
  --live) model=(--model "${AUTOCODER_MODEL:?set AUTOCODER_MODEL, e.g. openai/gpt-4.1}") ;;
  "") model=(--model "$RECORDED_MODEL" --api-base "$RECORDED_BASE" "${RECORDED_PARAMS[@]}" --replay "$CASSETTE") ;;
  *) echo "usage: $0 [--record|--live]" >&2; exit 2 ;;
esac
rm -rf "$OUT"
"$AUTOCODER" generate "${GENERATE[@]}" "${MODE[@]}" "${model[@]}" --out "$OUT"
"$AUTOCODER" run "$OUT" --json -- "${RUN[@]}"
