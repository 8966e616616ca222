#!/bin/bash
# ssh: fabctl's traffic test between hosts reached over SSH, with real RDMA traffic. A real OpenSSH
# server listens on the guest's loopback; two "hosts" behind it (connect = "ssh"), one rxe device
# each as in section verbs. The controller ships its own binary as the agent, applies the spec
# through it, and validate runs each pair's server and client sides there (agent op "traffic"):
#  1. apply, then validate with every stage passes (exit 0); each pair's result came back from the
#     client host with its counters, and the priority check says the wire view needs both NICs here;
#  2. the same pairs with --traffic-backend perftest: perftest's binaries run on the hosts (each
#     server announces the port it picked);
#  3. a fault on one host (its spec names an address it does not have) is reported by that host's
#     side, named, and fails validate (exit 1).
# fabtb-timeout: 900
# fabtb-needs: fabctl-verbs
. "$FABTB_SHARE/sections/lib.sh"

V=$FABCTL_VERBS
R=$FABTB_RESULTS
d=$FABTB_TMP/ssh

fab_rxe_pair fa fb 198.18.0.1 198.18.0.2 || fab_fail "rxe pair"
[[ -x /usr/sbin/sshd ]] || fab_fail "no OpenSSH server in the image (testbed/vm/image/base.sh)"
mkdir -p "$d" /run/sshd
ssh-keygen -q -t ed25519 -N '' -f "$d/host_key" && ssh-keygen -q -t ed25519 -N '' -f "$d/id" ||
	fab_fail "ssh-keygen"
cp "$d/id.pub" "$d/authorized_keys"
cat >"$d/sshd_config" <<EOF
Port 2222
ListenAddress 127.0.0.1
HostKey $d/host_key
PidFile $d/sshd.pid
PermitRootLogin prohibit-password
AuthorizedKeysFile $d/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
Subsystem sftp internal-sftp
EOF
/usr/sbin/sshd -f "$d/sshd_config" -E "$R/sshd.log" || fab_fail "sshd"
trap 'kill "$(cat "$d/sshd.pid" 2>/dev/null)" 2>/dev/null' EXIT
echo "[127.0.0.1]:2222 $(cut -d' ' -f1,2 "$d/host_key.pub")" >"$d/known_hosts"

spec=$d/spec
mkdir -p "$spec"
write_spec() { # ADDR_OF_HB
	cat >"$spec/fabric.fab.hcl" <<HCL
# Two soft-RoCE "hosts" behind one OpenSSH server (rxe works only in the root namespace).
fabric "vmssh" {
  transport = "rocev2"
  mtu       = 9000
}

credentials "ssh" {
  username    = "root"
  private_key = file("$d/id")
  known_hosts = "$d/known_hosts"
}

host "ha" {
  address     = "127.0.0.1:2222"
  connect     = "ssh"
  credentials = "ssh"
  nic "fa" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fa"
    model     = "rxe"
    addresses = ["198.18.0.1/24"]
    speed     = "10G"
  }
}

host "hb" {
  address     = "127.0.0.1:2222"
  connect     = "ssh"
  credentials = "ssh"
  nic "fb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fb"
    model     = "rxe"
    addresses = ["$1/24"]
    speed     = "10G"
  }
}

validate "ring-write" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 500
  min_bandwidth = "10M"
}

validate "send-latency" {
  pattern      = "pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 500
  max_p99      = "100ms"
}
HCL
}
export FABCTL_AGENT_DIR=$d/agent FABCTL_AGENT_SAVE_DIR=none
cd "$d" || fab_fail "cd"
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
modprobe rdma_cm

# ---- 1. apply and validate through the agents ----
write_spec 198.18.0.2
fab_run "$V" apply --auto-approve --no-color "$spec" || fab_fail "fabctl apply over SSH"
fab_check "the controller shipped itself as the agent" compgen -G "$d/agent/fabctl-*"
fab_run "$V" validate --no-color "$spec" | tee "$FABTB_TMP/validate.out"
rc=${PIPESTATUS[0]}
fab_check "fabctl validate over SSH ran every stage and passed (rc=$rc)" test "$rc" -eq 0
"$V" validate --json "$spec" >"$R/validate-ssh.json" 2>"$R/validate-ssh.stderr"
rc=$?
fab_check "validate --json passed too (rc=$rc)" test "$rc" -eq 0
fab_check "pairs passed" grep -Eq '"passed": [1-9]' "$R/validate-ssh.json"
fab_check "none failed" grep -q '"failed": 0' "$R/validate-ssh.json"
fab_check "none was left not run" grep -q '"not_run": 0' "$R/validate-ssh.json"
fab_check "the client host measured bandwidth" grep -q '"gbps":' "$R/validate-ssh.json"
fab_check "the counters came back from the hosts" grep -q '"rdma:' "$R/validate-ssh.json"
fab_check "the priority check says why the wire was not watched" grep -q 'no wire view: it needs both NICs on this machine' "$R/validate-ssh.json"

# ---- 2. the perftest backend through the agents ----
# The server side picks a free port on its host and announces it; the client side runs ib_write_bw /
# ib_send_lat against it. perftest on rxe under TCG fails now and then on its own (section verbs
# retries its perftest runs too), so up to three attempts, each shown.
for try in 1 2 3; do
	"$V" validate --json --skip-readback --traffic-backend perftest "$spec" >"$R/validate-ssh-perftest.json" 2>"$FABTB_TMP/perftest.err"
	rc=$?
	echo "perftest backend, attempt $try: rc=$rc"
	[[ $rc -eq 0 ]] && break
	grep -o '"reason": "[^"]*"' "$R/validate-ssh-perftest.json" | head -3
done
fab_check "validate --traffic-backend perftest over SSH passed (rc=$rc)" test "$rc" -eq 0
fab_check "and the results are perftest's" grep -q '"backend": "perftest"' "$R/validate-ssh-perftest.json"

# ---- 3. a fault on one host, reported by its own side ----
write_spec 198.18.0.9
"$V" validate --no-color --skip-readback "$spec" >"$FABTB_TMP/fault.out" 2>&1
rc=$?
cat "$FABTB_TMP/fault.out"
fab_check "validate fails when hb's side cannot run (rc=$rc)" test "$rc" -eq 1
fab_check "and the failure names hb's side" grep -Eq '(server|client) hb:fb: ' "$FABTB_TMP/fault.out"
exit 0
