#!/bin/sh
# A featherweight agent CLI for the 200-stream benchmark: prints $BENCH_AGENT_FILE (stream-json
# lines) one line every $BENCH_AGENT_PAUSE seconds, ignoring its arguments. A shell, not Bun, so
# 200 of them fit beside the service being measured.
while IFS= read -r line; do
  printf '%s\n' "$line"
  sleep "${BENCH_AGENT_PAUSE:-0.2}"
done < "$BENCH_AGENT_FILE"
