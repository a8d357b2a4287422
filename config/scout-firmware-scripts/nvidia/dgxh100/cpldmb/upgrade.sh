#!/bin/sh
# Scout upgrade of the motherboard CPLD (CPLDMB_0) of a DGX H100 ("NVIDIA" / "DGXH100", as its BMC
# reports itself), run ON THE HOST by its Scout agent. Scout has downloaded and SHA-256-verified
# the firmware image into $DOWNLOAD_DIR.
#
# On real hardware this would call the vendor's in-band updater. In the demo the "host" is
# simulated by bmc-sim, whose in-band flash interface is POST /sim/host-flash; the demo tells
# Scout where each simulated host is through $HOSTFW_SIM_HOSTS_DIR/<machine-id>.
set -eu
image=$(ls "$DOWNLOAD_DIR"/*.bin | head -n 1)
echo "upgrading $COMPONENT_TYPE of $MACHINE_ID to $TARGET_VERSION with $(basename "$image")"
host_url=$(cat "${HOSTFW_SIM_HOSTS_DIR:?not set: where the simulated hosts are}/$MACHINE_ID")
curl -sSf --data-binary @"$image" "$host_url/sim/host-flash"
echo
echo "flashed; the new firmware activates on the next reboot"
