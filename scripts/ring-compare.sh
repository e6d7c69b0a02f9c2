#!/usr/bin/env bash
# Builds the same device sets with swift-ring-builder and with Cairn's ring builder (equal
# weights; unequal weights; zones; regions; then a device added to each and a rebalance) and
# prints balance, dispersion and the partition-replicas the add moved, for both, as the
# Markdown table of docs/ring.md. The work is internal/ring's TestCompareWithSwiftRingBuilder,
# which fails when Cairn's builder does worse than Swift's and skips (saying why) without
# swift-ring-builder (Debian's swift package; scripts/install-test-deps.sh installs it).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
table=$(mktemp)
trap 'rm -f "$table"' EXIT
CAIRN_RING_COMPARE_OUT=$table go test -count=1 -run '^TestCompareWithSwiftRingBuilder$' -v ./internal/ring >&2
if [[ -s $table ]]; then
  echo "swift-ring-builder $(dpkg-query -W -f '${Version}' swift 2>/dev/null || echo '(version unknown)') against cairn ring at $(git rev-parse --short HEAD), $(date -u '+%Y-%m-%d %H:%M UTC')"
  cat "$table"
fi
