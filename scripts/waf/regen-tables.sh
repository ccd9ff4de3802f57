#!/bin/sh
# Regenerates the rule count, quality and placement tables in rules/README.md.
# Run from the repository root; the shared corpora are read from ../shared.
set -e
cd "$(dirname "$0")/../.."
exec go run ./scripts/waf/tables -rules rules/waf -readme rules/README.md -corpora ../shared/corpora/waf "$@"
