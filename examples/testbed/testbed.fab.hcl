# Local testbed: the smallest fabric that still has two leaf NOSes, a spine and a routed
# leaf-spine-leaf path, as `fabctl testbed up` starts it on one machine: switch NOSes
# emulated behind loopback addresses, hosts as network namespaces on veth pairs (the NICs
# name rxe devices, which testbed up does not create: soft-RoCE moves no RDMA between
# namespaces, so the RDMA settings plan as not expressible). `fabctl testbed up examples/testbed` starts it (`make demo`
# runs the whole job against it). It has one switch of each platform: the SSH CLI NOSes
# (sonic, eos, nxos, cumulus) behind SSH emulators, and the gNMI ones (srlinux, openconfig)
# behind YANG-validating gNMI targets (testbed/gnmitarget).
#
#                         spine1 (sonic)
#        /             /          |          \             \
#  leaf1 (sonic)  leaf2 (eos)  leaf3, leaf4   leaf5        leaf6
#   /      \       /     \    (nxos,        (srlinux,    (openconfig,
#  h1      h2     h3     h4    cumulus)      gNMI)        gNMI)
#                                 netns hosts, one veth NIC each
#
#   fabctl testbed up examples/testbed     (as root; see docs/cli.md)
#   fabctl plan examples/testbed

fabric "testbed" {
  transport = "rocev2"

  # veth carries 9000 fine and rxe then runs a 4096 RoCE MTU, which is what the real pod uses:
  # keep the testbed's MTU story identical so MTU findings mean the same thing here.
  mtu      = 9000
  rdma_mtu = 4096

  # No classes and no pfc_watchdog block: the testbed runs fabctl's RoCEv2 defaults on purpose
  # (roce DSCP 26 -> priority 3 lossless with ECN 150KB/1.5MB/100%, cnp DSCP 48 -> priority 6
  # strict, default priority 0; ETS 50/50; watchdog 200ms/400ms, drop). A default change then
  # shows up in the testbed's plans, which is where it should be noticed first.
}

# Management: every emulated switch listens on its own loopback address (all of 127.0.0.0/8
# is loopback on Linux), so the emulators share port numbers without clashing: 2222 for the
# SSH CLIs (an unprivileged process cannot bind 22). An address with a port is written
# "host:port". `fabctl testbed up` generates every emulator's host key and writes them to
# .fabctl/testbed/known_hosts beside this file (a relative known_hosts is resolved against
# the spec's directory): host keys are verified, not skipped.

credentials "testbed-ssh" {
  username    = "admin"
  password    = env("FABCTL_TESTBED_PASSWORD") # the testbed script exports it; never a literal here
  known_hosts = ".fabctl/testbed/known_hosts"
}

# The gNMI switches speak TLS: `fabctl testbed up` generates a CA and the targets' certificates
# in .fabctl/testbed, and the server certificate is verified against that CA (ca_file, relative
# to this file like known_hosts). Username and password travel as gRPC metadata.
credentials "testbed-gnmi" {
  username = "admin"
  password = env("FABCTL_TESTBED_PASSWORD")
  ca_file  = ".fabctl/testbed/gnmi-ca.pem"
}

switch "leaf1" {
  platform    = "sonic"
  address     = "127.0.0.11:2222"
  credentials = "testbed-ssh"
  role        = "leaf"
}

switch "leaf2" {
  platform    = "eos"
  address     = "127.0.0.12:2222"
  credentials = "testbed-ssh"
  role        = "leaf"
}

# Two more leaves so every SSH CLI platform is in the demo: NX-OS and Cumulus NVUE. They
# carry no hosts yet, only an uplink each, which is enough to plan, apply and re-plan them.
switch "leaf3" {
  platform    = "nxos"
  address     = "127.0.0.13:2222"
  credentials = "testbed-ssh"
  role        = "leaf"
}

switch "leaf4" {
  platform    = "cumulus"
  address     = "127.0.0.14:2222"
  credentials = "testbed-ssh"
  role        = "leaf"
}

# gNMI leaves on port 57400, the common gNMI port. SR Linux has PFC in its native models;
# OpenConfig has none, so the plan lists leaf6's PFC, watchdog and headroom as not expressible.
switch "leaf5" {
  platform    = "srlinux"
  address     = "127.0.0.15:57400"
  credentials = "testbed-gnmi"
  role        = "leaf"
}

switch "leaf6" {
  platform    = "openconfig"
  address     = "127.0.0.16:57400"
  credentials = "testbed-gnmi"
  role        = "leaf"
  lint_ignore = {
    "QOS-9" = "the testbed's OpenConfig leaf shows what OpenConfig can configure; its plan lists PFC as not expressible"
  }
  # openconfig-qos has no PFC: the lossless class cannot be in effect on this leaf.
  accept_not_in_effect = {
    "tc/*/lossless" = "openconfig-qos models no PFC; the testbed's OpenConfig leaf shows what OpenConfig can configure"
    "port/*/pfc"    = "openconfig-qos models no PFC; the testbed's OpenConfig leaf shows what OpenConfig can configure"
  }
}

switch "spine1" {
  platform    = "sonic"
  address     = "127.0.0.21:2222"
  credentials = "testbed-ssh"
  role        = "spine"
}

# Hosts are network namespaces on the machine running fabctl: connect = "netns:<name>" runs
# every host command with `ip netns exec <name>`, so no address or credentials are needed.
# Each has one veth end; its RDMA device is named rxe_<host> (model "rxe" selects soft-RoCE's
# device limits for the QP checks); testbed up does not create it. The /31s are shared with the leaf ports, leaf side even.

locals {
  testbed_hosts = {
    h1 = { leaf = "leaf1", port = "Ethernet0", net = 0 }
    h2 = { leaf = "leaf1", port = "Ethernet4", net = 1 }
    h3 = { leaf = "leaf2", port = "Ethernet1", net = 2 }
    h4 = { leaf = "leaf2", port = "Ethernet2", net = 3 }
  }
  # 198.18.0.0/15 is the benchmarking range (RFC 2544): it cannot collide with a real network
  # on the machine that runs the testbed.
  testbed_prefix = "198.18.0.0/24"
}

host "h" {
  for_each = local.testbed_hosts
  name     = each.key
  connect  = "netns:fab-${each.key}"
  role     = "test"

  nic "eth1" {
    device    = "rxe_${each.key}"
    model     = "rxe"
    addresses = ["${cidrhost(cidrsubnet(local.testbed_prefix, 7, each.value.net), 1)}/31"]
    # A veth has no DCB, no DCQCN sysfs and no rdma_cm configfs: the RoCE side of these NICs
    # cannot be in effect, and plan and validate would fail on it. The testbed says so once,
    # here; validate then reports these NICs as "accepted, not in effect", never as valid.
    accept_not_in_effect = {
      "*" = "testbed host: a veth in a network namespace has no DCB, DCQCN or rdma_cm configuration (the switches' side is what this testbed proves)"
    }
  }
}

# Port names follow each emulator: SONiC's virtual switch has Ethernet0..Ethernet124 in steps
# of 4, cEOS numbers Ethernet1.. in creation order.
#
# 10G everywhere: veth has no real speed, but the spec needs one (for headroom and for the
# traffic test's line-rate percentages), and 10G keeps both honest numbers.

link {
  for_each     = local.testbed_hosts
  endpoints    = ["${each.value.leaf}:${each.value.port}", "${each.key}:eth1"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf1:Ethernet124", "spine1:Ethernet0"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf2:Ethernet3", "spine1:Ethernet4"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf5:ethernet-1/1", "spine1:Ethernet16"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf6:Ethernet0", "spine1:Ethernet20"]
  speed        = "10G"
  cable_length = "1m"
}

# Soft-RoCE under emulation moves a few hundred Mbit/s (0.2-0.35 Gb/s measured under qemu TCG)
# with tens of microseconds of latency, so line-rate percentages mean nothing here: the
# thresholds are absolute and only catch "no traffic at all" or a stuck path.
validate "smoke-bandwidth" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  duration      = "5s"
  min_bandwidth = "100M"
}

validate "smoke-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 2000
  max_p99      = "5ms"
}

link {
  endpoints    = ["leaf3:Ethernet1/1", "spine1:Ethernet8"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf4:swp1", "spine1:Ethernet12"]
  speed        = "10G"
  cable_length = "1m"
}
