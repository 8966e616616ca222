# Test spec of the cumulus driver: one Cumulus leaf (ports named as on Cumulus Linux,
# swpN) with two hosts, on fabctl's RoCEv2 defaults (roce DSCP 26 ->
# priority 3 lossless, ECN 150KB/1.5MB/100%; cnp DSCP 48 -> priority 6 strict;
# default priority 0; ETS 50/50; watchdog 200ms/400ms/100ms, drop).

fabric "cllab" {
  transport = "rocev2"
  mtu       = 9000
  rdma_mtu  = 4096
}

credentials "lab-ssh" {
  username = "cumulus"
  password = env("FABCTL_TESTBED_PASSWORD")
}

switch "leaf2" {
  platform    = "cumulus"
  address     = "127.0.0.14:2222"
  credentials = "lab-ssh"
  role        = "leaf"
}

locals {
  lab_hosts = {
    h1 = { port = "swp1", net = 0 }
    h2 = { port = "swp2", net = 1 }
  }
}

host "h" {
  for_each = local.lab_hosts
  name     = each.key
  connect  = "netns:fab-${each.key}"
  role     = "test"

  nic "eth1" {
    device    = "rxe_${each.key}"
    model     = "rxe"
    addresses = ["${cidrhost(cidrsubnet("198.18.0.0/24", 7, each.value.net), 1)}/31"]
  }
}

link {
  for_each     = local.lab_hosts
  endpoints    = ["leaf2:${each.value.port}", "${each.key}:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
