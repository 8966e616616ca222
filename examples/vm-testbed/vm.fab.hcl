# The VM testbed's fabric: what `make demo-vm` plans, applies and validates inside the qemu guest
# of testbed/vm, with real RDMA traffic. It is examples/testbed cut down to what one guest can
# carry: three emulated switches (two SSH CLI NOSes and a gNMI one) and two hosts whose NICs are
# soft-RoCE (rxe) devices on the two ends of a veth pair.
#
#              spine1 (sonic)
#             /              \
#      leaf1 (sonic)     leaf5 (srlinux, gNMI)
#            |                |
#        ha: fa  ~~~~veth~~~~ hb: fb        rxe_fa <-> rxe_fb
#
# Why the hosts are "local" and not network namespaces as in examples/testbed: the Debian
# kernel's rxe keeps its UDP socket in the initial namespace, so RDMA between two namespaces
# fails (see testbed/vm/README.md). Both hosts therefore live in the guest's root namespace; the
# testbed's policy routing makes traffic between their addresses cross the veth instead of lo.
# The switches are emulators (no data plane): the RoCE packets go straight from fa to fb.

fabric "vmtestbed" {
  transport = "rocev2"

  # fabctl sets the veth MTU to 9000, and rxe then runs a 4096 RoCE MTU, as on a real pod.
  mtu      = 9000
  rdma_mtu = 4096

  # fabctl's RoCEv2 defaults (roce DSCP 26 -> priority 3 lossless with ECN, cnp DSCP 48 ->
  # priority 6): the traffic test sends with ToS 0x6a (DSCP 26, ECT(0)) and checks on the wire
  # that the packets carried it.
}

credentials "testbed-ssh" {
  username    = "admin"
  password    = env("FABCTL_TESTBED_PASSWORD")
  known_hosts = ".fabctl/testbed/known_hosts"
}

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

switch "leaf5" {
  platform    = "srlinux"
  address     = "127.0.0.15:57400"
  credentials = "testbed-gnmi"
  role        = "leaf"
}

switch "spine1" {
  platform    = "sonic"
  address     = "127.0.0.21:2222"
  credentials = "testbed-ssh"
  role        = "spine"
}

# connect = "local": fabctl configures these NICs itself, in the namespace it runs in.
host "ha" {
  connect = "local"
  role    = "test"
  nic "fa" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fa"
    model     = "rxe"
    addresses = ["198.18.0.1/24"]
  }
}

host "hb" {
  connect = "local"
  role    = "test"
  nic "fb" {
    accept_not_in_effect = {
      "*" = "VM testbed: soft-RoCE and soft-iWARP on a veth have no DCB, DCQCN or buffer settings; what this spec proves is the RDMA path, its marking and the traffic test"
    }
    device    = "rxe_fb"
    model     = "rxe"
    addresses = ["198.18.0.2/24"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet0", "ha:fa"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf5:ethernet-1/1", "hb:fb"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf1:Ethernet124", "spine1:Ethernet0"]
  speed        = "10G"
  cable_length = "1m"
}

link {
  endpoints    = ["leaf5:ethernet-1/2", "spine1:Ethernet4"]
  speed        = "10G"
  cable_length = "1m"
}

# Soft-RoCE under qemu TCG moves 0.1-0.3 Gb/s with tens of microseconds of latency on a quiet
# host, and as little as 0.018 Gb/s with a 100 ms p99 (median 11 ms) when the host is busy (seen
# at load 37 on 2 cores): line-rate percentages mean nothing here, so the thresholds are absolute,
# well below the busy figures, and catch "no traffic", a stuck path or traffic on the wrong DSCP
# (the wire check), not a slow or busy emulator.
validate "ring-write" {
  pattern       = "ring"
  op            = "write"
  message_size  = "64KiB"
  iterations    = 1000
  min_bandwidth = "4M"
}

validate "pairs-read" {
  pattern       = "pairs"
  op            = "read"
  message_size  = "64KiB"
  iterations    = 500
  min_bandwidth = "4M"
}

validate "send-latency" {
  pattern      = "all-pairs"
  op           = "send"
  message_size = "2B"
  iterations   = 1000
  max_p99      = "500ms"
}
