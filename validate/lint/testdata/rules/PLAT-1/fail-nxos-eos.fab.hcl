# PLAT-1 fail on NX-OS and EOS: a port trusting dscp on an NX-OS switch that
# trusts pcp (the DSCP map is the switch's DSCP policy, which a pcp switch does
# not have; ports may trust pcp on a dscp switch), an EOS port MTU
# above EOS's 9214, a watchdog action neither takes (both only drop), and an
# EOS model no source places in a chip family (its queue keyword is not guessed), and an
# NX-OS Nexus 9800 (Cisco Silicon One: no source shows its QoS forms).
fabric "t" {
  transport = "rocev2"
  pfc_watchdog {
    action = "forward" # expect: PLAT-1, PLAT-1
  }
}

credentials "ssh" {
  username = "admin"
  password = env("SWITCH_PASSWORD")
}

switch "leaf1" {
  platform    = "nxos"
  address     = "192.0.2.1"
  credentials = "ssh"
  role        = "leaf"
  trust       = "pcp" # expect: QOS-2
  port "Ethernet1/1" {
    trust = "dscp" # expect: PLAT-1
  }
}

switch "spine1" {
  platform    = "nxos"
  model       = "N9K-C9808" # expect: PLAT-1
  address     = "192.0.2.3"
  credentials = "ssh"
  role        = "spine"
}

switch "leaf2" {
  platform    = "eos"
  model       = "DCS-7280CR3-32P4" # expect: PLAT-1
  address     = "192.0.2.2"
  credentials = "ssh"
  role        = "leaf"
  port "Ethernet1" {
    mtu = 9216 # expect: PLAT-1
  }
}

host "h1" {
  address = "192.0.2.10"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.1/31"]
  }
}

host "h2" {
  address = "192.0.2.11"
  nic "eth1" {
    device    = "mlx5_0"
    model     = "connectx-7"
    addresses = ["10.0.0.3/31"]
  }
}

link {
  endpoints    = ["leaf1:Ethernet1/1", "h1:eth1"]
  speed        = "100G"
  cable_length = "3m"
}

link {
  endpoints    = ["leaf2:Ethernet1", "h2:eth1"]
  speed        = "100G"
  cable_length = "3m"
}
