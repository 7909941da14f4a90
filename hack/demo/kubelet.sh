# shellcheck shell=bash disable=SC2317 # helpers called indirectly (traps, polls)
# A driver for the stand-in kubelet (tests/deviceplugin/fake_kubelet: the device-plugin tests'
# peer, which serves Registration and talks to plugins like kubelet does) from shell, through its
# stdin commands and JSON-lines events. Used by the demo (hack/demo/story.sh) and by the vm
# tests of the device plugin (tests/vm/dp_*.sh). Needs jq.
#
# Expects: DEMO_WORK (a scratch directory).

demo_now_ms() { echo $((${EPOCHREALTIME/./} / 1000)); }

# demo_sleep SECS: sleeps without forking (read -t on a FIFO nobody writes into).
demo_sleep() {
  if [[ -z ${_demo_tick_fd:-} ]]; then
    local f
    f=$(mktemp -u /tmp/rdmanet-tick.XXXXXX)
    mkfifo "$f" && exec {_demo_tick_fd}<>"$f" && rm -f "$f"
  fi
  read -r -t "$1" -u "$_demo_tick_fd" _ || true
}

# demo_poll SECS CMD...: runs CMD until it succeeds or SECS pass.
demo_poll() {
  local end=$(($(demo_now_ms) + $1 * 1000))
  shift
  until "$@"; do
    (($(demo_now_ms) < end)) || return 1
    demo_sleep 0.1
  done
}

# kubelet_start BIN KUBELET_DIR: starts it with a FIFO as stdin (fd 7 keeps it open); events go
# to $DEMO_WORK/kubelet.events (JSON lines; fd 8 reads them as they come), its text log to
# $DEMO_WORK/kubelet.log.
kubelet_start() {
  local fifo=$DEMO_WORK/kubelet.in
  KUBELET_EVENTS=$DEMO_WORK/kubelet.events
  : >"$KUBELET_EVENTS"
  mkfifo "$fifo"
  "$1" --kubelet-dir "$2" --events "$KUBELET_EVENTS" --log "$DEMO_WORK/kubelet.log" <"$fifo" &
  KUBELET_PID=$!
  exec 7>"$fifo" 8<"$KUBELET_EVENTS"
  _kubelet_partial=
}

kubelet_stop() {
  [[ -n ${KUBELET_PID:-} ]] || return 0
  echo quit >&7 2>/dev/null
  exec 7>&- 8<&-
  demo_poll 5 bash -c "! kill -0 $KUBELET_PID 2>/dev/null" || kill "$KUBELET_PID" 2>/dev/null
  wait "$KUBELET_PID" 2>/dev/null
  KUBELET_PID=
}

# kubelet CMD... : sends one command (see `rdmanet-fake-kubelet --help`), waits for its "done"
# event and returns its "ok". Events up to it are in $KUBELET_NEW (JSON lines). Reads fd 8 with
# builtins only: under the VM's TCG every fork costs.
kubelet() {
  local line end
  echo "$*" >&7
  KUBELET_NEW=
  end=$(($(demo_now_ms) + ${KUBELET_TIMEOUT:-60} * 1000))
  while :; do
    while IFS= read -r line <&8; do
      line=$_kubelet_partial$line
      _kubelet_partial=
      KUBELET_NEW+=$line$'\n'
      if [[ $line == *'"event":"done"'* ]]; then
        [[ $line == *'"ok":true'* ]]
        return
      fi
    done
    _kubelet_partial+=$line # a line still being written
    if (($(demo_now_ms) >= end)); then
      echo "kubelet: no answer to '$*'" >&2
      return 1
    fi
    demo_sleep 0.05
  done
}

# kubelet_last EVENT [RESOURCE]: the latest event of that kind (a JSON object).
kubelet_last() {
  jq -c --arg e "$1" --arg r "${2:-}" \
    'select(.event == $e and ($r == "" or .resource == $r))' "$KUBELET_EVENTS" | tail -n 1
}

# kubelet_mark: the current event count, for kubelet_wait_event.
kubelet_mark() { wc -l <"$KUBELET_EVENTS"; }
# kubelet_wait_event MARK SECS JQ_FILTER: waits up to SECS for an event after MARK that matches
# the jq filter, and prints it.
kubelet_wait_event() {
  local mark=$1 secs=$2 filter=$3 ev
  _kw() {
    ev=$(tail -n +"$((mark + 1))" "$KUBELET_EVENTS" | jq -c "select($filter)" | head -n 1)
    [[ -n $ev ]]
  }
  demo_poll "$secs" _kw || return 1
  printf '%s\n' "$ev"
}

# kubelet_table RESOURCE: the last device list as kubelet sees it, one device per line.
kubelet_table() {
  kubelet_last devices "$1" |
    jq -r '.devices[] | "\(.id)  \(.health | . + " " * (9 - length))  NUMA \(.numa | map(tostring) | join(","))"'
}
