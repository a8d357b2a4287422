#!/bin/sh
# Legacy Core-local script for the Dell PowerEdge R750 NIC firmware (the Broadcom NIC.Integrated.1,
# both ports): hostfw runs it on the worker with the BMC's address and login in its environment
# (BMC_URL, BMC_USERNAME, BMC_PASSWORD); the script owns the install AND the activation. Here:
# push the image through the BMC's Redfish UpdateService (multipart if offered, else HTTP push)
# and wait for the BMC's task to complete.
set -eu
image="$(dirname "$0")/nic-21.80.16.95.bin"
auth="$BMC_USERNAME:$BMC_PASSWORD"
base="$BMC_URL"  # scheme://host:port[/prefix], as registered: https unless registered as http://
service=$(curl -sSf -u "$auth" "$base/redfish/v1/UpdateService")
multipart=$(printf '%s' "$service" | sed -n 's/.*"MultipartHttpPushUri" *: *"\([^"]*\)".*/\1/p')
push=$(printf '%s' "$service" | sed -n 's/.*"HttpPushUri" *: *"\([^"]*\)".*/\1/p')
if [ -n "$multipart" ]; then
  headers=$(curl -sSf -u "$auth" -D - -o /dev/null -F 'UpdateParameters={};type=application/json' \
    -F "UpdateFile=@$image;type=application/octet-stream" "$base$multipart")
elif [ -n "$push" ]; then
  headers=$(curl -sSf -u "$auth" -D - -o /dev/null -H 'Content-Type: application/octet-stream' \
    --data-binary @"$image" "$base$push")
else
  echo "BMC $BMC_URL offers no push upload" >&2
  exit 2
fi
location=$(printf '%s' "$headers" | tr -d '\r' | sed -n 's/^[Ll]ocation: //p')
# iDRAC answers with the Task itself as the Location (a monitor URI would end in /Monitor).
location=${location%/Monitor}
origin=$(printf '%s' "$base" | sed 's#^\([a-z]*://[^/]*\).*#\1#')
case "$location" in
  http://* | https://*) task_url=$location ;;
  /*) task_url=$origin$location ;;
  *) echo "BMC $BMC_URL answered the upload without a task Location" >&2; exit 2 ;;
esac
echo "uploaded $COMPONENT_TYPE $TARGET_VERSION to $BMC_URL, task $location"
i=0
while [ $i -lt 600 ]; do
  state=$(curl -sS -u "$auth" "$task_url")
  if printf '%s' "$state" | grep -Eq '"TaskState" *: *"Completed"'; then
    echo "task $location completed"; exit 0
  elif printf '%s' "$state" | grep -Eq '"TaskState" *: *"Exception"'; then
    echo "task $location failed: $state" >&2; exit 3
  fi
  i=$((i + 1))
  sleep 0.5
done
echo "task $location did not finish in time" >&2
exit 4
