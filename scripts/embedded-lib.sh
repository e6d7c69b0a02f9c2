# Shared by the benchmark scripts that measure one embedded Cairn (bench-sse.sh,
# bench-versioning.sh); source it after setting OUT.
#
# start_embedded: builds this checkout as $OUT/cairn and starts it on $OUT/data with a generated
# root key; sets pid, ep (the endpoint, once healthy), ak and sk, exports them for `cairn bench`
# (CAIRN_ENDPOINT, CAIRN_ACCESS_KEY, CAIRN_SECRET_KEY), stops the server on exit and removes its
# data (gigabytes after a run; KEEP_DATA=1 keeps it), and sets py to a Python with boto3 (the
# test venv when there is one).
start_embedded() {
  mkdir -p "$OUT"
  go build -o "$OUT/cairn" ./cmd/cairn
  ak=BENCH$(head -c 6 /dev/urandom | od -An -tx1 | tr -d ' \n' | tr a-f A-F)
  sk=$(head -c 20 /dev/urandom | od -An -tx1 | tr -d ' \n')
  "$OUT/cairn" server --data "$OUT/data" --listen 127.0.0.1:0 --root-access-key "$ak" --root-secret-key "$sk" --log-level warn >"$OUT/server.log" 2>&1 &
  pid=$!
  trap 'kill $pid 2>/dev/null || true; wait $pid 2>/dev/null || true; [ "${KEEP_DATA:-}" = 1 ] || rm -rf "$OUT/data" "$OUT/data.master-key"' EXIT
  for _ in $(seq 100); do
    ep=$(grep -o 'http://127.0.0.1:[0-9]*' "$OUT/server.log" | head -1 || true)
    [ -n "$ep" ] && curl -sf "$ep/healthz" >/dev/null && break
    sleep 0.1
  done
  echo "cairn at $ep (data $OUT/data), results in $OUT"
  export CAIRN_ENDPOINT=$ep CAIRN_ACCESS_KEY=$ak CAIRN_SECRET_KEY=$sk
  py=${PYTHON:-python3}
  [ -x .cache/venv/bin/python ] && py=.cache/venv/bin/python
  [ -n "${CAIRN_CACHE:-}" ] && [ -x "$CAIRN_CACHE/venv/bin/python" ] && py=$CAIRN_CACHE/venv/bin/python
  return 0
}
