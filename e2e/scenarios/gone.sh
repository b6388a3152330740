# verify_gone STATE_TEXT DIR: check, independently of cluster.sh, that every
# `proc` line of a cluster state file names a process that is gone (or was
# reused: other start time; or is a zombie), that no `port` line's port is
# listening, and that DIR is removed. Prints each leftover; returns the count.
# Sourced by down_clean.sh and teardown.sh.
# shellcheck shell=bash
verify_gone() {
  local state=$1 dir=$2 kind name a b stat rest problems=0
  local -a f
  while read -r kind name a b; do
    case $kind in
      proc)
        if stat=$(cat "/proc/$a/stat" 2>/dev/null); then
          rest=${stat##*) }
          read -r -a f <<<"$rest"
          # f[0] = state (field 3), f[19] = starttime (field 22)
          if [[ ${f[19]} == "$b" && ${f[0]} != Z ]]; then
            echo "LEFT BEHIND: process $name (pid $a) is alive"
            problems=$((problems + 1))
          fi
        fi
        ;;
      port)
        if [[ -n $(ss -Hltn "sport = :$a") ]]; then
          echo "LEFT BEHIND: port $name ($a) is listening"
          problems=$((problems + 1))
        fi
        ;;
    esac
  done <<<"$state"
  if [[ -e $dir ]]; then
    echo "LEFT BEHIND: $dir still exists"
    problems=$((problems + 1))
  fi
  return "$problems"
}
