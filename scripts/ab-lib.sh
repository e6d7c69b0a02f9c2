# Shared by the before/after benchmark scripts (bench-ab-s3.sh, bench-ab-swift.sh); source it.
#
# ab_build_servers SPEC...: builds the client (this checkout) as $OUT/cairn and each SPEC (a
# revision, or a binary) as $OUT/server-<label>; sets the array labels. A SPEC may end in
# @FLAG,FLAG... (e.g. HEAD@--read-leases): the server runs with those flags, and its label
# says so, so that one build can be compared with and without an option.
# ab_start LABEL: starts $OUT/server-LABEL on a fresh data directory with the root key
# abroot/$AB_SECRET; sets pid, data and ep (the endpoint, once healthy). AB_MODE=local-cluster
# starts a cluster (`cairn local-cluster`: 4 storage processes, 1 proxy, 3 replicas) instead of
# the embedded default.
# ab_stop: stops it and removes its data.
AB_SECRET=abroot-secret-0123456789

declare -A ab_args
ab_build_servers() {
  go build -o "$OUT/cairn" ./cmd/cairn # the client side is always this build
  labels=()
  local spec label wt flags
  for spec in "$@"; do
    flags=
    if [[ $spec == *@* ]]; then
      flags=${spec#*@}
      spec=${spec%%@*}
    fi
    label=$(basename "$spec")
    if [ -n "$flags" ]; then
      label="$label@${flags//[^a-zA-Z0-9,]/}"
      ab_args[$label]=${flags//,/ }
    fi
    if [ -x "$spec" ]; then
      cp "$spec" "$OUT/server-$label"
    else
      wt=$(mktemp -d)
      git worktree add -q --detach "$wt" "$spec"
      (cd "$wt" && go build -o "$OUT/server-$label" ./cmd/cairn)
      git worktree remove --force "$wt"
    fi
    labels+=("$label")
  done
}

ab_start() {
  data=$(mktemp -d /var/tmp/cairn-ab.XXXXXX)
  # shellcheck disable=SC2086 # the flags are words
  "$OUT/server-$1" "${AB_MODE:-server}" --data "$data" --listen 127.0.0.1:0 --root-access-key abroot \
    --root-secret-key "$AB_SECRET" --log-level warn ${ab_args[$1]:-} >"$OUT/$1.log" 2>&1 &
  pid=$!
  ep=
  for _ in $(seq 600); do
    ep=$(sed -n 's/^cairn: S3 endpoint \(http[^ ]*\).*/\1/p' "$OUT/$1.log" | head -1)
    [ -n "$ep" ] && curl -sf -m 1 "$ep/healthz" >/dev/null && break
    sleep 0.1
  done
}

ab_stop() {
  kill "$pid"; wait "$pid" 2>/dev/null || true; rm -rf "$data"
}
