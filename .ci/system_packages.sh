#!/usr/bin/env bash
# The system packages the tests with a real Slurm and a real kubectl need: Debian's slurm-wlm and munge, and
# kubernetes-client when no kubectl is there. Installed only as root with apt-get (as CI runs); anywhere else, or
# when the install fails, it says so and exits 0: those tests then skip, each saying why.
set -uo pipefail
PATH="$PATH:/usr/sbin:/sbin"

missing=()
for prog in munged slurmctld slurmd sbatch scontrol; do
  command -v "$prog" >/dev/null 2>&1 || { missing+=(slurm-wlm munge); break; }
done
[ -f /etc/munge/munge.key ] || missing+=(munge)
command -v kubectl >/dev/null 2>&1 || missing+=(kubernetes-client)
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)

if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "system_packages: not installed: ${missing[*]} (needs root and apt-get); the Slurm / kubectl tests will skip"
  exit 0
fi
export DEBIAN_FRONTEND=noninteractive
log=$(mktemp)
apt-get update -qq >/dev/null 2>&1 || echo "system_packages: apt-get update failed; trying the install anyway"
for pkg in "${missing[@]}"; do  # one at a time: a package that cannot be had does not keep the others out
  if ! apt-get install -y -qq --no-install-recommends "$pkg" >"$log" 2>&1; then
    echo "system_packages: apt-get install $pkg failed ($(tail -n 1 "$log")); its tests will skip"
  fi
done
rm -f "$log"
exit 0
