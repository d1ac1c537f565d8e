#!/bin/sh
# One-shot job (temporalio/admin-tools): registers the namespace the workers use, once the Temporal
# frontend answers. Does nothing when it already exists.
set -eu

: "${TEMPORAL_ADDRESS:?TEMPORAL_ADDRESS is required}"
: "${NAMESPACE:?NAMESPACE is required}"
RETENTION="${RETENTION:-30d}"

attempt=0
until temporal operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1; do
  attempt=$((attempt + 1))
  if [ "$attempt" -ge 60 ]; then
    echo "Temporal at $TEMPORAL_ADDRESS is not serving after 60 attempts" >&2
    exit 1
  fi
  sleep 2
done

if temporal operator namespace describe --address "$TEMPORAL_ADDRESS" -n "$NAMESPACE" >/dev/null 2>&1; then
  echo "namespace $NAMESPACE exists"
else
  temporal operator namespace create --address "$TEMPORAL_ADDRESS" -n "$NAMESPACE" --retention "$RETENTION"
  echo "namespace $NAMESPACE created (retention $RETENTION)"
fi
