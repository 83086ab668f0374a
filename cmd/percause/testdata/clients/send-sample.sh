#!/bin/sh
# Sends docs/clients.md's sample turn (sample-turn.json, beside this script)
# to a collector's OTLP/HTTP receiver, with its times made now: the file's
# spans keep the times of the day it was written (the turn begins at
# 1764489600 s and ends 14 s later), and a collector's verdict page shows
# only recent turns (the verdicts exporter's keep.age). Each time is moved by
# the same number of seconds, so the turn ends now and reads the same.
#
#   sh cmd/percause/testdata/clients/send-sample.sh [OTLP_BASE_URL]   (default http://127.0.0.1:4318)
set -eu
url=${1:-http://127.0.0.1:4318}
begin=1764489600
end=$((begin + 14))
by=$(($(date +%s) - end))
# A time is "<seconds><9 digits of nanoseconds>"; each second of the turn
# gets a sed expression moving it.
moves=
s=$begin
while [ "$s" -le "$end" ]; do
	moves="$moves s/\"$s\([0-9]\{9\}\)\"/\"$((s + by))\1\"/g;"
	s=$((s + 1))
done
sed "$moves" "$(dirname "$0")/sample-turn.json" |
	curl -sS -f -H 'Content-Type: application/json' --data-binary @- "$url/v1/traces"
echo
